"""Pipelines built from Google's own components (GCPC 2.22) run locally, unchanged: a team's
pipeline file in a folder of its own, under `vtp run FILE` and `vtp submit --local`."""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.fixtures import REPO, compile_user_pipeline, train_digits
from vtp.trainer.checkpoint import list_checkpoints
from vtp.trainer.export import export_checkpoint

pytestmark = pytest.mark.slow

OBJECTIVE = REPO / "tests" / "vtp" / "local" / "tuning" / "objective_task.py"

TRAIN_AND_UPLOAD = """
from google_cloud_pipeline_components.types import artifact_types
from google_cloud_pipeline_components.v1.custom_job import create_custom_training_job_from_component
from google_cloud_pipeline_components.v1.model import ModelUploadOp
from kfp import dsl


@dsl.component(base_image="python:3.11")
def train(epochs: int = 2):
    import json, os, pathlib
    model_dir = pathlib.Path(os.environ["AIP_MODEL_DIR"].replace("gs://", "/gcs/", 1))
    model_dir.mkdir(parents=True, exist_ok=True)
    (model_dir / "model.json").write_text(json.dumps({"epochs": epochs}))


train_job = create_custom_training_job_from_component(
    train, display_name="gcpc-train", machine_type="n1-standard-4",
    base_output_directory="gs://team-models/gcpc",
)


@dsl.pipeline(name="gcpc-train-upload")
def gcpc_pipeline(project: str = "local", location: str = "us-central1"):
    trained = train_job(project=project, location=location, epochs=3)
    model = dsl.importer(
        artifact_uri="gs://team-models/gcpc/model",
        artifact_class=artifact_types.UnmanagedContainerModel,
        metadata={"containerSpec": {"imageUri": "us-docker.pkg.dev/x/sklearn-cpu.1-0:latest"}},
    ).after(trained)
    ModelUploadOp(project=project, location=location, display_name="gcpc-model",
                  unmanaged_container_model=model.output)
"""

JOB_AND_STUDY = """
from google_cloud_pipeline_components.v1 import hyperparameter_tuning_job as hpt
from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
from google.cloud.aiplatform import hyperparameter_tuning as hp
from kfp import dsl

JOB = {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
       "container_spec": {"image_uri": "python:3.11", "command": ["python", "-c", "print(1)"]}}
TRIAL = {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
         "container_spec": {"image_uri": "python:3.11", "command": COMMAND}}


@dsl.pipeline(name="gcpc-job-and-study")
def gcpc_pipeline(project: str = "local", location: str = "us-central1"):
    job = CustomTrainingJobOp(project=project, location=location, display_name="gcpc-job",
                              worker_pool_specs=[JOB])
    hpt.HyperparameterTuningJobRunOp(
        project=project, location=location, display_name="gcpc-study",
        base_output_directory="gs://team-models/study", worker_pool_specs=[TRIAL],
        study_spec_metrics=hpt.serialize_metrics({"score": "maximize"}),
        study_spec_parameters=hpt.serialize_parameters(
            {"x": hp.DoubleParameterSpec(min=0.0, max=1.0, scale="linear")}),
        max_trial_count=3, parallel_trial_count=3,
    ).after(job)
"""

DEPLOY = """
from google_cloud_pipeline_components.types import artifact_types
from google_cloud_pipeline_components.types.artifact_types import VertexEndpoint
from google_cloud_pipeline_components.v1.endpoint import EndpointCreateOp, ModelDeployOp
from google_cloud_pipeline_components.v1.model import ModelUploadOp
from kfp import dsl
from kfp.dsl import Input


@dsl.component(base_image="python:3.11")
def ask(endpoint: Input[VertexEndpoint]) -> str:
    import json
    from google.cloud import aiplatform
    served = aiplatform.Endpoint(endpoint.metadata["resourceName"])
    return json.dumps(served.predict(instances=[[0.0] * 64]).predictions)


@dsl.pipeline(name="gcpc-deploy")
def gcpc_pipeline(project: str = "local", location: str = "us-central1"):
    model = dsl.importer(
        artifact_uri="gs://team-models/digits",
        artifact_class=artifact_types.UnmanagedContainerModel,
        metadata={"containerSpec": {
            "imageUri": "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
            "command": ["python", "-m", "vtp.trainer.serve"],
            "predictRoute": "/predict", "healthRoute": "/health"}},
    )
    uploaded = ModelUploadOp(project=project, location=location, display_name="digits",
                             unmanaged_container_model=model.output)
    endpoint = EndpointCreateOp(project=project, location=location, display_name="digits")
    deployed = ModelDeployOp(model=uploaded.outputs["model"], endpoint=endpoint.outputs["endpoint"],
                             dedicated_resources_machine_type="n1-standard-4",
                             dedicated_resources_min_replica_count=1)
    ask(endpoint=endpoint.outputs["endpoint"]).after(deployed)
"""

CONTAINER = """
from kfp import dsl


@dsl.container_component
def shout():
    return dsl.ContainerSpec(image="alpine:3", command=["echo", "hi"])


@dsl.pipeline(name="with-a-container")
def gcpc_pipeline():
    shout()
"""


REFUSED_JOB = """
from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
from kfp import dsl

POOL = {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
        "container_spec": {"image_uri": "python:3.11"}}


@dsl.pipeline(name="gcpc-refused")
def gcpc_pipeline(project: str = "local", location: str = "us-central1"):
    CustomTrainingJobOp(project=project, location=location, display_name="refused",
                        worker_pool_specs=[POOL])
"""
"""A job the service refuses (an image without a command, no engine): GCPC raises the SDK's
FailedPrecondition from gRPC's error, a chain of two tracebacks."""


def vtp(folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "vtp", *args], cwd=folder, capture_output=True, text=True,
        timeout=600, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )  # fmt: skip


def user_file(tmp_path: Path, text: str) -> Path:
    """The team's folder with `pipeline.py`; COMMAND in it is a trial that reports `score`."""
    folder, record = tmp_path / "team", tmp_path / "trials"
    folder.mkdir(), record.mkdir()
    command = [sys.executable, str(OBJECTIVE), "--record", str(record)]
    (folder / "pipeline.py").write_text(text.replace("COMMAND", json.dumps(command)))
    return folder


def test_train_job_from_a_component_then_model_upload_under_vtp_run(tmp_path):
    folder = user_file(tmp_path, TRAIN_AND_UPLOAD)
    state = tmp_path / "state"
    result = vtp(folder, "run", "pipeline.py", "--state-dir", str(state))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "model: projects/local/locations/us-central1/models/" in result.stdout
    run = next((state / "gcs" / "vtp-local" / "pipeline-root").glob("gcpc-train-upload-*"))
    # A pipeline job's outputs: <root>/<job ID>/..., each task's in a folder named after it.
    resources = json.loads(next(run.rglob("train/gcp_resources")).read_text())["resources"]
    (job,) = resources
    assert job["resourceType"] == "CustomJob"
    name = job["resourceUri"].split("/v1/", 1)[1]
    assert name.startswith("projects/local/locations/us-central1/customJobs/")
    assert json.loads((state / "gcs" / "team-models/gcpc/model/model.json").read_text()) == {
        "epochs": 3
    }


def test_the_same_pipeline_under_vtp_submit_local(tmp_path, local_service):
    folder = user_file(tmp_path, TRAIN_AND_UPLOAD)
    compile_user_pipeline(folder, "pipeline", "gcpc_pipeline", "pipeline.yaml")
    result = vtp(
        folder, "submit", "pipeline.yaml", "--local", "--wait",
        env={"VTP_LOCAL_ENDPOINT": local_service.url},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "PIPELINE_STATE_SUCCEEDED" in result.stdout + result.stderr


def test_custom_training_job_op_and_a_study_run_on_the_local_service(tmp_path):
    folder = user_file(tmp_path, JOB_AND_STUDY)
    state = tmp_path / "state"
    result = vtp(folder, "run", "pipeline.py", "--state-dir", str(state))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    run = next((state / "gcs" / "vtp-local" / "pipeline-root").glob("gcpc-job-and-study-*"))
    study = json.loads(next(run.rglob("hyperparameter-tuning-job/gcp_resources")).read_text())[
        "resources"
    ][0]
    assert "/hyperparameterTuningJobs/" in study["resourceUri"]
    assert len(list((tmp_path / "trials").glob("*.json"))) == 3  # each trial reported


def test_endpoint_create_and_model_deploy_answer_predictions(tmp_path, digits_model):
    folder = user_file(tmp_path, DEPLOY)
    state = tmp_path / "state"
    shutil.copytree(digits_model, state / "gcs" / "team-models" / "digits")
    result = vtp(folder, "run", "pipeline.py", "--state-dir", str(state))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("Output ["))
    predictions = json.loads(line.strip().removeprefix("Output "))
    assert len(predictions) == 1 and len(predictions[0]["probabilities"]) == 10


def test_a_container_component_without_an_engine_fails_before_the_run(tmp_path):
    folder = user_file(tmp_path, CONTAINER)
    state = tmp_path / "state"
    result = vtp(folder, "run", "pipeline.py", "--state-dir", str(state))
    assert result.returncode != 0
    assert "container component shout (image alpine:3) cannot run locally" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (state / "gcs" / "vtp-local" / "pipeline-root").exists()


def test_a_failed_gcpc_task_says_its_error_once(tmp_path):
    folder = user_file(tmp_path, REFUSED_JOB)
    result = vtp(folder, "run", "pipeline.py", "--state-dir", str(tmp_path / "state"))
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    out = result.stdout
    refusal = "image 'python:3.11' is not this project's image and no command is given"
    # The chain's last exception, streamed once; its cause (gRPC's error) and the link between
    # them are in the log, for `vtp --debug`; the summary ends with the error, once.
    streamed = [line for line in out.splitlines() if line.startswith("[custom-training-job] ")]
    assert len(streamed) == 1 and "FailedPrecondition: 400" in streamed[0], out
    assert "_InactiveRpcError" not in out and "The above exception" not in out
    assert out.count("error: task custom-training-job failed") == 1
    assert out.count(refusal) == 2  # the task's line, then the summary's error
    assert out.splitlines()[-1].startswith("  error: task custom-training-job failed")


@pytest.fixture(scope="module")
def digits_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exported digits model directory (a short run)."""
    out = tmp_path_factory.mktemp("digits")
    train_digits(out, hidden_size=32, max_steps=20, checkpoint_interval=20)
    return export_checkpoint(list_checkpoints(out / "checkpoints")[0].path, out / "exported")


PRINTING_JOB = """
from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
from kfp import dsl

SCRIPT = (
    "import pathlib, sys, time\\n"
    "print('first line from the replica', flush=True)\\n"
    "gate = pathlib.Path(sys.argv[1])\\n"
    "while not gate.exists():\\n"
    "    time.sleep(0.1)\\n"
    "print('second line from the replica', flush=True)\\n"
)
JOB = {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
       "container_spec": {"image_uri": "python:3.11",
                          "command": ["python", "-c", SCRIPT, GATE]}}


@dsl.pipeline(name="gcpc-printing-job")
def gcpc_pipeline(project: str = "local", location: str = "us-central1"):
    CustomTrainingJobOp(project=project, location=location, display_name="printer",
                        worker_pool_specs=[JOB])
"""


def test_a_gcpc_jobs_replica_lines_reach_vtp_run_as_they_are_printed(tmp_path):
    """GCPC's launcher only polls the job's state; the engine prints its replica's lines as
    the task's, while the job still runs: the first line is out before the replica goes on."""
    gate = tmp_path / "gate"
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "pipeline.py").write_text(PRINTING_JOB.replace("GATE", json.dumps(str(gate))))
    run = subprocess.Popen(
        [sys.executable, "-m", "vtp", "run", "pipeline.py", "--state-dir", str(tmp_path / "s")],
        cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    seen = []
    give_up = threading.Timer(300, run.kill)  # never seeing the line fails, not hangs, the test
    give_up.start()
    try:
        assert run.stdout is not None
        for line in run.stdout:
            seen.append(line)
            if "workerpool0-0 | first line from the replica" in line:
                break
        assert seen and "| first line from the replica" in seen[-1], "".join(seen)[-3000:]
        assert seen[-1].startswith("[custom-training-job] workerpool0-0 | first line"), seen[-1]
        assert run.poll() is None  # the job waits for the gate: the line came while it ran
        gate.touch()
        rest = run.stdout.read()
        assert run.wait(timeout=300) == 0, "".join(seen)[-2000:] + rest[-3000:]
    finally:
        give_up.cancel()
        run.kill()
        run.wait()
    printed = "".join(seen) + rest
    assert printed.count("workerpool0-0 | first line from the replica") == 1
    assert printed.count("workerpool0-0 | second line from the replica") == 1
