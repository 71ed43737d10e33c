"""The real clients, unmodified, against the service: the aiplatform SDK and installed gcloud."""

import json

import pytest
from google.cloud import aiplatform
from google.cloud.aiplatform import jobs

from tests.fixtures import State, wait_for_state, wait_until
from tests.vtp.local.conftest import OTHER_IMAGE, SCRIPT, scripted_pool, starts, write_sdist

MACHINE = {"machine_type": "n1-standard-4"}

TASK = "import os, sys\nprint('task', sys.argv[1:], os.environ['RANK'])\n"
"""The module of the packages these tests install: its args and its rank, printed."""


@pytest.fixture
def sdk(local_service, monkeypatch):
    """aiplatform initialised for the service: REST transport, anonymous, quick polling."""
    monkeypatch.setattr(jobs, "_JOB_WAIT_TIME", 0.1)  # the SDK's poll interval (5 s by default)
    local_service.init_sdk(staging_bucket="gs://staging/sdk")
    yield aiplatform
    aiplatform.init(api_endpoint=None, api_transport=None)


def script_pool(record, *args: str) -> dict:
    command = ["python", str(SCRIPT), "--record", str(record), *args]
    container = {"image_uri": OTHER_IMAGE, "command": command}
    return {"machine_spec": MACHINE, "replica_count": 1, "container_spec": container}


def test_sdk_custom_job_run_succeeds(sdk, tmp_path):
    job = sdk.CustomJob(display_name="sdk-ok", worker_pool_specs=[script_pool(tmp_path)])
    job.run()
    assert job.state == State.JOB_STATE_SUCCEEDED
    env = json.loads((tmp_path / "workerpool0-0.env.json").read_text())
    assert env["AIP_MODEL_DIR"].startswith("gs://staging/sdk/aiplatform-custom-job-")
    listed = sdk.CustomJob.list(filter='display_name="sdk-ok"')
    assert [j.resource_name for j in listed] == [job.resource_name]
    job.delete()
    assert not sdk.CustomJob.list(filter='display_name="sdk-ok"')


def test_sdk_run_raises_with_vertex_message_when_the_job_fails(sdk, tmp_path):
    job = sdk.CustomJob(
        display_name="sdk-fail", worker_pool_specs=[script_pool(tmp_path, "--exit", "2")]
    )
    with pytest.raises(RuntimeError, match=r"exited with a non-zero status of 2\. Termination"):
        job.run()
    assert job.state == State.JOB_STATE_FAILED


def test_sdk_python_package_job_installs_the_package_and_runs_the_module(sdk, local_service):
    archive = local_service.gcs_root / "pkgs" / "hello_task-0.1.tar.gz"
    archive.parent.mkdir(parents=True, exist_ok=True)
    write_sdist(archive, "hello_task", task_py=TASK)
    package = {
        "executor_image_uri": "us-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-4.py310:latest",
        "package_uris": ["gs://pkgs/hello_task-0.1.tar.gz"],
        "python_module": "hello_task.task",
        "args": ["--epochs=1"],
    }
    pools = [{"machine_spec": MACHINE, "replica_count": 1, "python_package_spec": package}] * 2
    job = sdk.CustomJob(display_name="sdk-package", worker_pool_specs=pools)
    job.run()
    assert job.state == State.JOB_STATE_SUCCEEDED
    job_id = job.resource_name.rsplit("/", 1)[-1]
    log = local_service.state_dir / "jobs" / job_id / "logs" / "workerpool0-0.log"
    assert "task ['--epochs=1'] 0" in log.read_text()  # RANK 0: the primary


def test_gcloud_create_describe_list_cancel(gcloud, local_service, tmp_path):
    command = ",".join(["python", str(SCRIPT), "--record", str(tmp_path), "--sleep", "60"])
    created = gcloud(
        "ai", "custom-jobs", "create", "--display-name=gcloud-job",
        f"--worker-pool-spec=machine-type=n1-standard-4,container-image-uri={OTHER_IMAGE}",
        f"--command={command}", "--labels=team=ml",
    )  # fmt: skip
    name = next(w.strip("[]") for w in created.stderr.split() if "/customJobs/" in w)
    wait_until(lambda: starts(tmp_path, "workerpool0-0"), what="the replica to start")

    described = gcloud.json("ai", "custom-jobs", "describe", name)
    assert (described["state"], described["labels"]) == ("JOB_STATE_RUNNING", {"team": "ml"})
    assert described["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["command"][-1] == "60"
    listed = gcloud.json("ai", "custom-jobs", "list", "--filter=displayName=gcloud-job")
    assert [j["name"] for j in listed] == [name]

    gcloud("ai", "custom-jobs", "cancel", name)
    cancelled = wait_for_state(local_service.client(), name)
    assert (cancelled.state, cancelled.error.message) == (State.JOB_STATE_CANCELLED, "CANCELED")


def test_gcloud_python_package_uris(gcloud, local_service):
    archive = local_service.gcs_root / "pkgs" / "gc_task-0.1.tar.gz"
    archive.parent.mkdir(parents=True, exist_ok=True)
    write_sdist(archive, "gc_task", task_py=TASK)
    created = gcloud(
        "ai", "custom-jobs", "create", "--display-name=gcloud-package",
        "--python-package-uris=gs://pkgs/gc_task-0.1.tar.gz",
        "--worker-pool-spec=machine-type=n1-standard-4,"
        "executor-image-uri=us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4:latest,"
        "python-module=gc_task.task",
        "--args=--lr=0.1",
    )  # fmt: skip
    name = next(w.strip("[]") for w in created.stderr.split() if "/customJobs/" in w)
    assert wait_for_state(local_service.client(), name).state == State.JOB_STATE_SUCCEEDED


def test_gcloud_shows_the_services_error_for_an_unknown_config_field(gcloud, tmp_path):
    config = tmp_path / "job.yaml"
    pool = scripted_pool(tmp_path)
    config.write_text(json.dumps({"workerPoolSpecs": [pool], "enableWebAccessX": True}))
    result = gcloud("ai", "custom-jobs", "create", "--display-name=bad", f"--config={config}",
                    check=False)  # fmt: skip
    assert result.returncode != 0
    assert "INVALID_ARGUMENT" in result.stderr and "enableWebAccessX" in result.stderr


def test_gcloud_shows_how_to_run_a_foreign_image_that_has_no_command(gcloud):
    result = gcloud("ai", "custom-jobs", "create", "--display-name=foreign",
                    "--worker-pool-spec=machine-type=n1-standard-4,container-image-uri=python:3.11",
                    check=False)  # fmt: skip
    assert result.returncode != 0
    assert "'python:3.11' is not this project's image and no command is given" in result.stderr
    assert "VTP_CONTAINER_ENGINE=podman" in result.stderr
