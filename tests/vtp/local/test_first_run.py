"""A team's unchanged code, run the first time against `vtp local serve` started as the README
starts it, from a folder of the team's own: buckets nobody created, an `int` pipeline parameter
inside `parameters` reaching an argparse `type=int` flag, and A100 pools on this GPU-less
machine (they run on CPU, with one warning). `--strict-buckets` and `--strict-accelerators`
keep Cloud Storage's 404 and the accelerator refusal.

One default service and one strict service serve the whole module; each test writes to buckets
of its own, so the service's "created on first use" lines can be counted per test.
"""

import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.cloud import storage

from tests.fixtures import (
    FAST_FLAGS,
    REPO,
    Gcloud,
    LocalService,
    State,
    exec_program,
    wait_for_state,
)
from tests.vtp.local.conftest import custom_job

pytestmark = pytest.mark.slow

TRAIN = '''
    """The team's training script: argparse flags, as the replicas of its Vertex jobs get them."""
    import argparse
    import os

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--batch_size", type=int, default=8)
    args = parser.parse_args()
    devices = os.environ.get("CUDA_VISIBLE_DEVICES")
    print(f"training {args.epochs} epochs, batch {args.batch_size}, GPUs {devices!r}")
'''

PIPELINE = """
    from pathlib import Path

    from kfp import dsl

    from vtp.components.custom_job import custom_job

    SCRIPT = str(Path(__file__).resolve().with_name("train.py"))


    @dsl.pipeline(name="a100-train")
    def a100_train(project: str = "team", epochs: int = 3):
        custom_job(
            project=project,
            location="us-central1",
            display_name="a100",
            output_root="gs://team-runs/out",
            job_spec={
                "workerPoolSpecs": [
                    {
                        "machineSpec": {
                            "machineType": "a2-highgpu-1g",
                            "acceleratorType": "NVIDIA_TESLA_A100",
                            "acceleratorCount": 1,
                        },
                        "replicaCount": 1,
                        "containerSpec": {
                            "imageUri": "python:3.11",
                            "command": ["python3", SCRIPT],
                        },
                    }
                ]
            },
            args=["--batch_size", 16],
            parameters={"epochs": epochs},
        )
"""

JOB_YAML = """
    workerPoolSpecs:
    - machineSpec:
        machineType: a2-highgpu-1g
        acceleratorType: NVIDIA_TESLA_A100
        acceleratorCount: 1
      replicaCount: 1
      containerSpec:
        imageUri: python:3.11
        command: [python3, {script}]
"""

TASK = '''
    """The team's task: trains, then writes its model where Vertex says (AIP_MODEL_DIR)."""
    import argparse
    import os

    from google.cloud import storage

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, required=True)
    args = parser.parse_args()
    bucket, _, prefix = os.environ["AIP_MODEL_DIR"].removeprefix("gs://").partition("/")
    blob = storage.Client().bucket(bucket).blob(prefix.rstrip("/") + "/model.txt")
    blob.upload_from_string(f"trained {args.epochs} epochs")
'''

PROGRAM = """
    import json

    from google.api_core import exceptions
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team", location="us-central1", staging_bucket="gs://team-staging")
    job = aiplatform.CustomTrainingJob(
        display_name="first-run",
        script_path="task.py",
        container_uri="us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
        model_serving_container_image_uri="us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest",
    )
    model = job.run(args=["--epochs", "2"], replica_count=1, machine_type="n1-standard-4")
    never = storage.Client(project="team").bucket("team-never-written")
    try:
        never.blob("x.txt").download_as_bytes()
        read = "read"
    except exceptions.NotFound as exc:
        read = exc.message
    print(json.dumps({"uri": model.uri, "exists": never.exists(), "read": read}))
"""

WARNING = (
    "WARNING: workerPoolSpecs[0] asks for 1 x NVIDIA_TESLA_A100 (1 replica), but this machine "
    "has no GPU: the job runs on CPU"
)


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """`vtp local serve --strict-buckets --strict-accelerators` on this GPU-less machine."""
    flags = (*FAST_FLAGS, "--strict-buckets", "--strict-accelerators")
    service = LocalService(tmp_path_factory.mktemp("strict"), *flags).start()
    yield service
    service.stop()


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """The team's folder, outside the repository, with its training script and job config."""
    folder = tmp_path / "team"
    folder.mkdir()
    assert not folder.is_relative_to(REPO)
    (folder / "train.py").write_text(textwrap.dedent(TRAIN))
    script = folder / "train.py"
    (folder / "job.yaml").write_text(textwrap.dedent(JOB_YAML).format(script=script))
    return folder


def created_buckets(service: LocalService, bucket: str) -> list[str]:
    """The service's log lines saying it created `bucket` on first use."""
    return [
        line
        for line in service.service_log().splitlines()
        if f"bucket gs://{bucket} created on first use" in line
    ]


def gcloud_on(service: LocalService, config_dir: Path) -> Gcloud:
    """gcloud pointed at `service` (aiplatform, logging and storage), as `vtp local env` says."""
    gcloud = Gcloud(config_dir, service.url, service.state_dir / "token")
    gcloud.env.update(
        CLOUDSDK_API_ENDPOINT_OVERRIDES_LOGGING=f"{service.url}/",
        CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=f"{service.url}/storage/v1/",
    )
    return gcloud


def test_an_sdk_script_whose_staging_bucket_was_never_created_trains_a_model(local_service, team):
    (team / "task.py").write_text(textwrap.dedent(TASK))
    (team / "program.py").write_text(textwrap.dedent(PROGRAM))

    results = exec_program(local_service.url, team)

    model_file = results["uri"].replace("gs://", f"{local_service.gcs_root}/", 1) + "/model.txt"
    assert Path(model_file).read_text() == "trained 2 epochs"
    assert results["uri"].startswith("gs://team-staging/")
    assert len(created_buckets(local_service, "team-staging")) == 1  # one line, naming it
    # Reading from a bucket nobody wrote stays Cloud Storage's 404.
    assert not results["exists"]
    assert "The specified bucket does not exist: team-never-written" in results["read"]
    assert created_buckets(local_service, "team-never-written") == []


def test_a_pipeline_passes_an_int_in_parameters_to_an_a100_pool_that_runs_on_cpu(
    local_service, team
):
    (team / "my_pipeline.py").write_text(textwrap.dedent(PIPELINE))
    state_dir = str(local_service.state_dir)
    run = subprocess.run(
        [sys.executable, "-m", "vtp", "run", "my_pipeline.py", "--param", "epochs=2",
         "--state-dir", state_dir],
        cwd=team, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-4000:]
    assert "SUCCEEDED" in output
    assert "training 2 epochs, batch 16, GPUs ''" in output  # --epochs=2, not 2.0
    assert output.count(WARNING) == 1  # the job's log, as `vtp run` prints it
    assert len(created_buckets(local_service, "team-runs")) == 1  # the job's output_root


def test_a_gcloud_config_job_asking_for_an_a100_succeeds_on_cpu_with_the_warning(
    local_service, team, tmp_path
):
    gcloud = gcloud_on(local_service, tmp_path / "gcloud")
    created = gcloud.run_raw(
        "ai", "custom-jobs", "create", "--region=us-central1", "--display-name=a100",
        f"--config={team / 'job.yaml'}", "--args=--epochs=2",
        f"--access-token-file={gcloud.token}",
    )  # fmt: skip
    name = re.search(r"projects/\S+/customJobs/\d+", created.stdout + created.stderr).group()
    job = wait_for_state(local_service.client(), name)
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error.message
    job_id = name.rsplit("/", 1)[1]
    logged = gcloud.run_raw(
        "logging", "read", f"resource.type=ml_job AND resource.labels.job_id={job_id}",
        "--order=asc", "--format=value(textPayload)", f"--access-token-file={gcloud.token}",
    ).stdout  # fmt: skip
    lines = logged.splitlines()
    assert sum(WARNING in line for line in lines) == 1
    assert "training 2 epochs, batch 8, GPUs ''" in lines


def test_gcloud_storage_cp_creates_the_bucket_it_names(local_service, tmp_path):
    gcloud = gcloud_on(local_service, tmp_path / "gcloud")
    data = tmp_path / "data.csv"
    data.write_text("a,b\n1,2\n")
    token = f"--access-token-file={gcloud.token}"
    gcloud.run_raw("storage", "cp", str(data), "gs://team-uploads/in/data.csv", token)
    assert (local_service.gcs_root / "team-uploads/in/data.csv").read_text() == "a,b\n1,2\n"
    assert len(created_buckets(local_service, "team-uploads")) == 1


def test_strict_buckets_keep_cloud_storages_404(strict, tmp_path, monkeypatch):
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", strict.url)
    client = storage.Client(project="local", credentials=strict.credentials())
    with pytest.raises(exceptions.NotFound, match="The specified bucket does not exist: team-x"):
        client.bucket("team-x").blob("a.txt").upload_from_string("a")
    gcloud = gcloud_on(strict, tmp_path / "gcloud")
    data = tmp_path / "data.csv"
    data.write_text("a\n")
    token = f"--access-token-file={gcloud.token}"
    copied = gcloud.run_raw("storage", "cp", str(data), "gs://team-x/data.csv", token, check=False)
    assert copied.returncode != 0 and "team-x" in copied.stderr
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "python:3.11", "command": ["python3", "-c", "pass"]},
    }
    job = custom_job(pool, baseOutputDirectory={"outputUriPrefix": "gs://team-x/out"})
    with pytest.raises(exceptions.NotFound) as refused:
        strict.client().create_custom_job(parent=strict.parent, custom_job=job)
    assert "baseOutputDirectory" in refused.value.message and "team-x" in refused.value.message
    assert not (strict.gcs_root / "team-x").exists() and "created on first use" not in (
        strict.service_log()
    )
    client.create_bucket("team-x")  # made on purpose, the bucket takes writes as before
    client.bucket("team-x").blob("a.txt").upload_from_string("a")
    assert (strict.gcs_root / "team-x/a.txt").read_text() == "a"


def test_strict_accelerators_refuse_the_a100_job(strict, team, tmp_path):
    gcloud = gcloud_on(strict, tmp_path / "gcloud")
    refused = gcloud.run_raw(
        "ai", "custom-jobs", "create", "--region=us-central1", "--display-name=a100",
        f"--config={team / 'job.yaml'}", "--args=--epochs=2",
        f"--access-token-file={gcloud.token}", check=False,
    )  # fmt: skip
    assert refused.returncode != 0
    message = " ".join(refused.stderr.split())
    assert "FAILED_PRECONDITION" in message and "1 accelerator(s)" in message
    assert "--strict-accelerators" in message
    jobs = strict.client().list_custom_jobs(parent=strict.parent)
    assert [job.display_name for job in jobs] == []
