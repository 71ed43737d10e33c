"""Batch prediction of a model we trained, as a user runs it: `Model.batch_predict` (the SDK, on
its default gRPC transport, under `vtp local exec`) and GCPC's `ModelBatchPredictOp` in a
pipeline under `vtp run`; each compares its output files with `endpoint.predict` on the same
instances. Then the job's states and errors through REST: cancel, a missing input, refusals."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.fixtures import (
    REPO,
    batch_prediction_job,
    exec_program,
    exported_digits,
    serving_processes,
    upload_never_ready_model,
)

pytestmark = pytest.mark.slow

IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"
INSTANCES = [[float((i * k) % 17) for i in range(64)] for k in range(5)]
MALFORMED = [1.0] * 63

PROGRAM = """
    import json
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team", location="us-central1")
    bucket = storage.Client(project="team").bucket("team-data")
    if not bucket.exists():
        bucket.create()
    lines = [json.dumps(x) for x in INSTANCES + [MALFORMED]]
    bucket.blob("in/instances.jsonl").upload_from_string("\\n".join(lines) + "\\n")
    model = aiplatform.Model.upload(
        display_name="digits", artifact_uri="gs://team-models/digits",
        serving_container_image_uri=IMAGE, serving_container_predict_route="/predict",
        serving_container_health_route="/health",
    )
    job = model.batch_predict(
        job_display_name="digits-batch", gcs_source="gs://team-data/in/*.jsonl",
        gcs_destination_prefix="gs://team-data/out", machine_type="n1-standard-4",
        batch_size=2, sync=True,
    )
    files = {b.name.rsplit("/", 1)[1]: b.download_as_text() for b in job.iter_outputs()}
    endpoint = model.deploy(machine_type="n1-standard-2")
    served = endpoint.predict(instances=INSTANCES).predictions
    endpoint.undeploy_all()
    endpoint.delete()
    print(json.dumps({
        "state": job.state.name, "output": job.output_info.gcs_output_directory,
        "stats": [job.completion_stats.successful_count, job.completion_stats.failed_count],
        "files": files, "served": [dict(p) for p in served],
        "listed": [j.resource_name for j in aiplatform.BatchPredictionJob.list()],
        "name": job.resource_name,
    }))
"""

PIPELINE = """
from google_cloud_pipeline_components.types import artifact_types
from google_cloud_pipeline_components.types.artifact_types import VertexEndpoint
from google_cloud_pipeline_components.v1.batch_predict_job import ModelBatchPredictOp
from google_cloud_pipeline_components.v1.endpoint import EndpointCreateOp, ModelDeployOp
from google_cloud_pipeline_components.v1.model import ModelUploadOp
from kfp import dsl
from kfp.dsl import Input


@dsl.component(base_image="python:3.11")
def ask(endpoint: Input[VertexEndpoint], instances: list) -> str:
    import json
    from google.cloud import aiplatform
    served = aiplatform.Endpoint(endpoint.metadata["resourceName"])
    return json.dumps([dict(p) for p in served.predict(instances=instances).predictions])


@dsl.pipeline(name="gcpc-batch")
def gcpc_pipeline(project: str = "local", location: str = "us-central1"):
    model = dsl.importer(
        artifact_uri="gs://team-models/digits",
        artifact_class=artifact_types.UnmanagedContainerModel,
        metadata={"containerSpec": {"imageUri": IMAGE, "predictRoute": "/predict",
                                    "healthRoute": "/health"}},
    )
    uploaded = ModelUploadOp(project=project, location=location, display_name="digits",
                             unmanaged_container_model=model.output)
    ModelBatchPredictOp(project=project, location=location, job_display_name="digits-batch",
                        model=uploaded.outputs["model"],
                        gcs_source_uris=["gs://team-data/instances.jsonl"],
                        gcs_destination_output_uri_prefix="gs://team-data/out",
                        machine_type="n1-standard-4", manual_batch_tuning_parameters_batch_size=3)
    endpoint = EndpointCreateOp(project=project, location=location, display_name="digits")
    deployed = ModelDeployOp(model=uploaded.outputs["model"], endpoint=endpoint.outputs["endpoint"],
                             dedicated_resources_machine_type="n1-standard-4",
                             dedicated_resources_min_replica_count=1)
    ask(endpoint=endpoint.outputs["endpoint"], instances=INSTANCES).after(deployed)
"""


@pytest.fixture(scope="module")
def digits_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An exported digits model directory (a short run)."""
    out = tmp_path_factory.mktemp("digits")
    return exported_digits(out, out / "exported", hidden_size=32)


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def assert_same_predictions(batch: list[dict], served: list[dict]) -> None:
    """The batch output's predictions, in input order, are the endpoint's for the instances."""
    assert [line["instance"] for line in batch] == INSTANCES
    for line, want in zip(batch, served, strict=True):
        assert line["prediction"]["label"] == want["label"]
        assert line["prediction"]["probabilities"] == pytest.approx(want["probabilities"], abs=1e-6)


def test_model_batch_predict_matches_endpoint_predict(local_service, digits_model, tmp_path):
    shutil.copytree(digits_model, local_service.gcs_root / "team-models" / "digits")
    folder = tmp_path / "team"
    folder.mkdir()
    header = f"IMAGE = {IMAGE!r}\nINSTANCES = {INSTANCES!r}\nMALFORMED = {MALFORMED!r}\n"
    (folder / "program.py").write_text(header + textwrap.dedent(PROGRAM))
    out = exec_program(local_service.url, folder)

    assert out["state"] == "JOB_STATE_SUCCEEDED"
    assert out["output"].startswith("gs://team-data/out/prediction-digits-")
    assert out["stats"] == [5, 1]
    assert sorted(out["files"]) == ["errors_00001.jsonl", "predictions_00001.jsonl"]
    assert_same_predictions(lines(out["files"]["predictions_00001.jsonl"]), out["served"])
    (error,) = lines(out["files"]["errors_00001.jsonl"])
    assert error["instance"] == MALFORMED and error["error"]["code"] == 3
    assert "shape" in error["error"]["message"]
    assert out["name"] in out["listed"]
    assert serving_processes(out["name"].rsplit("/", 1)[1]) == []  # its server stopped


def test_model_batch_predict_op_in_a_pipeline_under_vtp_run(digits_model, tmp_path):
    folder, state = tmp_path / "team", tmp_path / "state"
    folder.mkdir()
    header = f"IMAGE = {IMAGE!r}\nINSTANCES = {INSTANCES!r}\n"
    (folder / "pipeline.py").write_text(header + PIPELINE)
    shutil.copytree(digits_model, state / "gcs" / "team-models" / "digits")
    (state / "gcs" / "team-data").mkdir(parents=True)
    text = "".join(json.dumps(x) + "\n" for x in INSTANCES)
    (state / "gcs" / "team-data" / "instances.jsonl").write_text(text)
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "run", "pipeline.py", "--state-dir", str(state)],
        cwd=folder, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    line = next(x for x in result.stdout.splitlines() if x.strip().startswith("Output ["))
    served = json.loads(line.strip().removeprefix("Output "))
    (predictions,) = (state / "gcs" / "team-data" / "out").glob("prediction-digits-*/*.jsonl")
    assert predictions.name == "predictions_00001.jsonl"
    assert_same_predictions(lines(predictions.read_text()), served)
    run = next((state / "gcs" / "vtp-local" / "pipeline-root").glob("gcpc-batch-*"))
    resources = json.loads(next(run.rglob("model-batch-predict/gcp_resources")).read_text())
    assert resources["resources"][0]["resourceType"] == "BatchPredictionJob"


def wait_ended(session, url: str) -> dict:
    while True:  # the service's own poll interval paces this; the test's timeout bounds it
        job = session.get(url, timeout=30).json()
        if job["state"] in ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"):
            return job
        time.sleep(0.2)


def test_cancel_a_missing_input_and_refusals(local_service):
    session, base = local_service.session(), f"{local_service.url}/v1/{local_service.parent}"
    model = upload_never_ready_model(session, base)
    (local_service.gcs_root / "in").mkdir(exist_ok=True)
    (local_service.gcs_root / "in" / "one.jsonl").write_text("[1, 2]\n")
    job = batch_prediction_job(model, "gs://in/one.jsonl", "gs://in/out")
    created = session.post(f"{base}/batchPredictionJobs", json=job, timeout=30)
    assert created.status_code == 200, created.text
    name = created.json()["name"]
    assert created.json()["state"] == "JOB_STATE_PENDING"
    running = session.delete(f"{local_service.url}/v1/{name}", timeout=30)
    assert running.status_code == 400  # not ended yet
    while not serving_processes(name.rsplit("/", 1)[1]):  # its server started, never healthy
        time.sleep(0.2)
    assert session.post(f"{local_service.url}/v1/{name}:cancel", timeout=30).json() == {}
    ended = wait_ended(session, f"{local_service.url}/v1/{name}")
    assert ended["state"] == "JOB_STATE_CANCELLED"
    assert serving_processes(name.rsplit("/", 1)[1]) == []
    assert session.delete(f"{local_service.url}/v1/{name}", timeout=30).json()["done"]

    missing = dict(job, inputConfig={"instancesFormat": "jsonl",
                                     "gcsSource": {"uris": ["gs://in/nothing.jsonl"]}})  # fmt: skip
    failed = session.post(f"{base}/batchPredictionJobs", json=missing, timeout=30).json()
    ended = wait_ended(session, f"{local_service.url}/v1/{failed['name']}")
    assert ended["state"] == "JOB_STATE_FAILED"
    assert "gs://in/nothing.jsonl does not exist" in ended["error"]["message"]

    csv = dict(job, inputConfig={"instancesFormat": "csv", "gcsSource": {"uris": ["gs://in/a"]}})
    refused = session.post(f"{base}/batchPredictionJobs", json=csv, timeout=30)
    assert refused.status_code == 501 and "JSON Lines" in refused.json()["error"]["message"]
    unknown = dict(job, model=f"{local_service.parent}/models/404")
    assert session.post(f"{base}/batchPredictionJobs", json=unknown, timeout=30).status_code == 404
    nameless = session.post(f"{base}/batchPredictionJobs", json=dict(job, displayName=""))
    assert nameless.status_code == 400 and "displayName" in nameless.json()["error"]["message"]
