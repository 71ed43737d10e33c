"""`vtp run --from-job`: the inputs a replay checks are found from the described spec, not
guessed from parameter names (#52). The team's pipeline file, in a folder of its own, compiled
by kfp and described as `PipelineJob.to_dict()` describes it; the real `vtp` command replays it.

- A GCPC CustomTrainingJobOp whose worker pool (a compiled constant) installs a package from
  Cloud Storage: a missing package is refused before anything starts, naming the task and the
  field; it used to start and fail 17 s later.
- A parameter called `data_root` that a task reads: refused the same when missing; its name
  used to make it an output location, and the task failed with a 404.
- A parameter that only reaches where components write (GCPC's `base_output_directory`, our
  custom_job's `output_root`), whatever its name, need not exist: the replay runs.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import REPO
from tests.vtp.cli.run_helpers import vtp_run_unpointed

NIGHTLY = """
import json
import sys

from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform
from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
from kfp import compiler, dsl

POOL = {
    "machine_spec": {"machine_type": "n1-standard-4"},
    "replica_count": 1,
    "python_package_spec": {
        "executor_image_uri": "python:3.11",
        "package_uris": ["gs://team-code/trainer-0.1.tar.gz"],
        "python_module": "trainer.task",
    },
}


@dsl.component(base_image="python:3.11")
def prepare(data_root: str) -> str:
    return data_root + "/train.csv"


@dsl.pipeline(name="nightly")
def nightly(data_root: str, models: str, project: str = "local", location: str = "us-central1"):
    prepared = prepare(data_root=data_root)
    CustomTrainingJobOp(
        project=project, location=location, display_name="train", worker_pool_specs=[POOL],
        base_output_directory=models,
    ).after(prepared)


if __name__ == "__main__":
    compiler.Compiler().compile(nightly, "nightly.json")
    job = aiplatform.PipelineJob(
        display_name="nightly", template_path="nightly.json", project="team-project",
        location="us-central1", pipeline_root="gs://team-pipelines/root",
        parameter_values={"data_root": "gs://team-data/raw", "models": "gs://team-models/nightly"},
        credentials=AnonymousCredentials(),
    )
    print(json.dumps(job.to_dict()))
"""
"""The team's nightly pipeline, and the description of a run of it (what Vertex's
`PipelineJob.get(...).to_dict()` prints; no credentials are needed to describe one)."""

WRITES_ONLY = """
import json

from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform
from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
from kfp import compiler, dsl

from vtp.components.custom_job import custom_job

POOL = {
    "machine_spec": {"machine_type": "n1-standard-4"},
    "replica_count": 1,
    "container_spec": {"image_uri": "python:3.11", "command": ["python", "-c", "print('fit')"]},
}


@dsl.pipeline(name="writes-only")
def writes_only(models: str, checkpoints: str, project: str = "local",
                location: str = "us-central1"):
    CustomTrainingJobOp(
        project=project, location=location, display_name="gcpc-train", worker_pool_specs=[POOL],
        base_output_directory=models,
    )
    custom_job(
        project=project, location=location, display_name="our-train", output_root=checkpoints,
        job_spec={"workerPoolSpecs": [{
            "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 1,
            "containerSpec": {"imageUri": "python:3.11", "command": ["python", "-c", "print(1)"]},
        }]},
        poll_interval_seconds=0.2,
    )


if __name__ == "__main__":
    compiler.Compiler().compile(writes_only, "writes_only.json")
    job = aiplatform.PipelineJob(
        display_name="writes-only", template_path="writes_only.json", project="team-project",
        location="us-central1", pipeline_root="gs://team-pipelines/root",
        parameter_values={"models": "gs://team-models/gcpc", "checkpoints": "gs://team-ckpt/ours"},
        credentials=AnonymousCredentials(),
    )
    print(json.dumps(job.to_dict()))
"""
"""A pipeline that reads nothing from Cloud Storage: its two parameters are only where GCPC's
CustomTrainingJobOp and our custom_job write (names that do not say so)."""

PACKAGE = "gs://team-code/trainer-0.1.tar.gz"
DATA = "gs://team-data/raw"


def described(folder: Path, text: str) -> Path:
    """The team's folder with `pipeline.py` (`text`), and `job.json`, the description it prints."""
    folder.mkdir()
    (folder / "pipeline.py").write_text(text)
    made = subprocess.run(
        [sys.executable, "pipeline.py"], cwd=folder, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    (folder / "job.json").write_text(made.stdout)
    assert json.loads(made.stdout)["pipelineSpec"]["root"]
    return folder / "job.json"


def put(folder: Path, uri: str, text: str = "x") -> Path:
    """An object `uri` in the replay's local Cloud Storage (`<state dir>/gcs/BUCKET/PATH`)."""
    path = folder / "replay" / "gcs" / uri.removeprefix("gs://")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def state_files(folder: Path) -> list[str]:
    """Everything in the replay's state directory (a started run adds its service, its job)."""
    replay = folder / "replay"
    return sorted(str(p.relative_to(replay)) for p in replay.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The description of a nightly run, as the team saved it."""
    return described(tmp_path_factory.mktemp("nightly") / "team", NIGHTLY).read_text()


def team_folder(tmp_path: Path, description: str) -> Path:
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "job.json").write_text(description)
    return folder


def test_a_missing_package_in_a_gcpc_worker_pool_is_refused_before_anything_starts(
    nightly: str, tmp_path: Path
) -> None:
    folder = team_folder(tmp_path, nightly)
    put(folder, f"{DATA}/part-0.csv")  # the data is here; the package is not

    result = vtp_run_unpointed(folder, "--from-job", "job.json", timeout=600)

    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    err = result.stderr
    assert err.count("\n") == 1, err
    field = "worker_pool_specs[0].python_package_spec.package_uris[0]"
    assert f"custom-training-job: {field} = {PACKAGE}; copy it there" in err, err
    assert "gcloud storage cp FILE gs://BUCKET/PATH to the local service, or a file" in err
    assert f"{folder}/replay/gcs/BUCKET/PATH" in err
    # Only the package: the data is present, and `models` is only where the job writes.
    assert DATA not in err and "models" not in err and "--param" not in err, err
    assert state_files(folder) == ["gcs/team-data/raw/part-0.csv"]  # nothing started


def test_a_missing_data_root_that_a_task_reads_is_refused_the_same(
    nightly: str, tmp_path: Path
) -> None:
    folder = team_folder(tmp_path, nightly)
    put(folder, PACKAGE)  # the package is here; the data is not

    result = vtp_run_unpointed(folder, "--from-job", "job.json", timeout=600)

    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    err = result.stderr
    assert err.count("\n") == 1, err
    root = folder / "replay" / "gcs"
    assert f"inputs missing from local Cloud Storage ({root}): data_root={DATA}; copy it" in err
    assert err.rstrip().endswith("or give --param data_root=... instead"), err
    assert PACKAGE not in err and "models" not in err, err
    assert state_files(folder) == ["gcs/team-code/trainer-0.1.tar.gz"]  # nothing started

    elsewhere = vtp_run_unpointed(
        folder, "--from-job", "job.json", "--param", "data_root=gs://samples/x", timeout=600
    )
    assert elsewhere.returncode == 2, elsewhere.stderr
    assert ": data_root=gs://samples/x; copy it" in elsewhere.stderr, elsewhere.stderr


def test_parameters_that_only_name_where_jobs_write_need_not_exist(tmp_path: Path) -> None:
    job = described(tmp_path / "team", WRITES_ONLY)
    folder = job.parent

    result = vtp_run_unpointed(folder, "--from-job", "job.json", timeout=600)

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "[custom-training-job] workerpool0-0 | fit" in result.stdout, result.stdout[-3000:]
    assert "[custom-job] workerpool0-0 | 1" in result.stdout
    # Each job was given its output location, which the service made on first use.
    for bucket in ("team-models", "team-ckpt"):
        made = f"bucket gs://{bucket} created on first use (customJob.jobSpec.baseOutputDirectory"
        assert made in result.stderr, result.stderr[-3000:]
