"""The `custom_job` component body against the local service: run, re-attach, cancel on SIGTERM."""

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1
from kfp.dsl import Artifact, Model

from tests.fixtures import PROJECT, REGION, LocalService, wait_for_state, wait_until
from tests.vtp.local.conftest import SCRIPT
from vtp.components.custom_job import custom_job
from vtp.vertex import lifecycle
from vtp.vertex.cancel import CancelOnSigterm
from vtp.vertex.protodict import SpecError

RUNNER = Path(__file__).with_name("run_component.py")
INT_FLAGS_REPLICA = Path(__file__).with_name("int_flags_replica.py")
DISPLAY_NAME = "component-test"
State = aiplatform_v1.JobState


def component_kwargs(record: Path, run: str, *script_args: str) -> dict:
    """Inputs of the component for a one-replica job running the scripted replica."""
    record.mkdir(parents=True, exist_ok=True)
    return {
        "project": PROJECT,
        "location": REGION,
        "display_name": DISPLAY_NAME,
        "output_root": "gs://bucket/runs",
        "job_spec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": 1,
                    "containerSpec": {
                        "imageUri": "python:3.11-slim",
                        "command": ["python", str(SCRIPT), "--record", str(record)],
                    },
                }
            ]
        },
        "args": list(script_args),
        "poll_interval_seconds": 0.1,
        "pipeline_run": run,
        "task_name": "train",
    }


def start_component(service: LocalService, kwargs: dict, out: Path) -> subprocess.Popen:
    """The component body in a subprocess, using the service as a pipeline run would."""
    out.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [sys.executable, str(RUNNER), json.dumps(kwargs), str(out)], env=service.env()
    )


def task_jobs(service: LocalService, run: str) -> list[aiplatform_v1.CustomJob]:
    """Every job that tasks of pipeline run `run` have submitted (each test has its own run)."""
    request = {"parent": service.parent, "filter": f'display_name="{DISPLAY_NAME}"'}
    jobs = service.client().list_custom_jobs(request=request)
    return [j for j in jobs if f"/{run}/" in j.job_spec.base_output_directory.output_uri_prefix]


def test_runs_job_and_outputs_its_directories(local_service: LocalService, tmp_path: Path) -> None:
    kwargs = component_kwargs(tmp_path / "record", "run-ok")
    process = start_component(local_service, kwargs, tmp_path / "out")
    assert process.wait(timeout=120) == 0
    outputs = json.loads((tmp_path / "out" / "outputs.json").read_text())
    base = re.fullmatch(r"(gs://bucket/runs/run-ok/train-[0-9a-f]{8})/model", outputs["model"])
    assert base, outputs["model"]
    assert outputs["checkpoints"] == f"{base[1]}/checkpoints"
    (job,) = task_jobs(local_service, "run-ok")
    assert job.state == State.JOB_STATE_SUCCEEDED and outputs["custom_job"] == job.name
    assert job.labels[lifecycle.TASK_LABEL] == lifecycle.task_key("run-ok", base[1].split("/")[-1])
    env = json.loads((tmp_path / "record" / "workerpool0-0.env.json").read_text())
    assert env["AIP_MODEL_DIR"] == f"{base[1]}/model/"
    resources = json.loads((tmp_path / "out" / "gcp_resources").read_text())
    (resource,) = resources["resources"]
    assert resource["resourceType"] == "CustomJob"
    assert resource["resourceUri"] == f"{local_service.url}/v1/{job.name}"


def test_an_output_root_outside_cloud_storage_is_named_before_submitting(tmp_path: Path) -> None:
    kwargs = component_kwargs(tmp_path / "record", "run-root") | {"output_root": "/tmp/x"}
    outputs = {"model": Model(uri=""), "checkpoints": Artifact(uri="")}
    # No service in the environment: a submission would fail on credentials, not on the root.
    with pytest.raises(SpecError, match=r"^output_root: '/tmp/x' is not a Cloud Storage URI"):
        custom_job.python_func(**kwargs, **outputs, gcp_resources=str(tmp_path / "gcp"))
    assert not (tmp_path / "gcp").exists()


def test_failed_job_fails_the_task_with_vertex_error(
    local_service: LocalService, tmp_path: Path
) -> None:
    kwargs = component_kwargs(tmp_path / "record", "run-fail", "--exit", "3")
    process = start_component(local_service, kwargs, tmp_path / "out")
    assert process.wait(timeout=120) != 0
    (job,) = task_jobs(local_service, "run-fail")
    assert job.state == State.JOB_STATE_FAILED
    assert "exited with a non-zero status of 3" in job.error.message


@pytest.mark.parametrize(
    "parameters",
    [{"epochs": 3, "lr": 0.5}, {"epochs": 3.0, "lr": 0.5}],
    ids=["as-given", "as-a-struct-hands-them-over"],
)
def test_integer_parameters_reach_an_int_flag_as_integers(
    local_service: LocalService, tmp_path: Path, parameters: dict
) -> None:
    record = tmp_path / "record"
    kwargs = component_kwargs(record, f"run-{type(parameters['epochs']).__name__}")
    kwargs["parameters"] = parameters
    kwargs["job_spec"]["workerPoolSpecs"][0]["containerSpec"]["command"] = [
        "python", str(INT_FLAGS_REPLICA), "--record", str(record),
    ]  # fmt: skip
    process = start_component(local_service, kwargs, tmp_path / "out")
    assert process.wait(timeout=120) == 0  # argparse's type=int would exit 2 on --epochs=3.0
    seen = json.loads((record / "job.json").read_text())
    assert seen["argv"][-2:] == ["--epochs=3", "--lr=0.5"]
    assert seen["parsed"]["epochs"] == 3 and seen["parsed"]["lr"] == 0.5


@pytest.mark.slow
def test_retried_task_reattaches_instead_of_submitting_again(
    local_service: LocalService, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    kwargs = component_kwargs(tmp_path / "record", "run-retry", "--wait-file", str(release))
    first = start_component(local_service, kwargs, tmp_path / "attempt1")
    client = local_service.client()
    (job,) = wait_until(lambda: task_jobs(local_service, "run-retry"), what="the submission")
    wait_for_state(client, job.name, [State.JOB_STATE_RUNNING])
    first.kill()  # the task's pod dies; the job keeps running on Vertex
    first.wait()
    second = start_component(local_service, kwargs, tmp_path / "attempt2")
    wait_until(lambda: (tmp_path / "attempt2" / "gcp_resources").exists(), what="re-attach")
    release.write_text("go")
    assert second.wait(timeout=120) == 0
    (again,) = task_jobs(local_service, "run-retry")
    assert again.name == job.name and again.state == State.JOB_STATE_SUCCEEDED


@pytest.mark.slow
def test_sigterm_cancels_the_job_and_waits_for_it(
    local_service: LocalService, tmp_path: Path
) -> None:
    kwargs = component_kwargs(tmp_path / "record", "run-cancel", "--sleep", "600")
    process = start_component(local_service, kwargs, tmp_path / "out")
    client = local_service.client()
    (job,) = wait_until(lambda: task_jobs(local_service, "run-cancel"), what="the submission")
    wait_for_state(client, job.name, [State.JOB_STATE_RUNNING])
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 128 + signal.SIGTERM
    # The task only exits once the cancel took: the job is already terminal here.
    assert client.get_custom_job(name=job.name).state == State.JOB_STATE_CANCELLED


def test_sigterm_during_submission_cancels_the_job_once_it_exists(
    local_service: LocalService, tmp_path: Path
) -> None:
    guard = CancelOnSigterm()
    client = local_service.client()
    kwargs = component_kwargs(tmp_path / "record", "run-early", "--sleep", "600")
    spec = aiplatform_v1.CustomJobSpec.from_json(json.dumps(kwargs["job_spec"]))
    with guard.installed():
        os.kill(os.getpid(), signal.SIGTERM)  # lands while the create request would be in flight
        job = client.create_custom_job(
            parent=local_service.parent,
            custom_job=aiplatform_v1.CustomJob(display_name="early", job_spec=spec),
        )
        with pytest.raises(SystemExit) as exited:
            guard.attach(
                job.name,
                lambda: lifecycle.cancel_and_confirm(client, lifecycle.CUSTOM_JOB, job.name),
            )
    assert exited.value.code == 128 + signal.SIGTERM
    assert client.get_custom_job(name=job.name).state == State.JOB_STATE_CANCELLED


def test_replica_log_lines_reach_the_task_log_locally(
    local_service: LocalService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog
) -> None:
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", local_service.url)
    client = local_service.client()
    kwargs = component_kwargs(tmp_path / "record", "run-logs")
    spec = aiplatform_v1.CustomJobSpec.from_json(json.dumps(kwargs["job_spec"]))
    job = client.create_custom_job(
        parent=local_service.parent,
        custom_job=aiplatform_v1.CustomJob(display_name="logs", job_spec=spec),
    )
    wait_for_state(client, job.name)
    target = lifecycle.Target.resolve(PROJECT, REGION)
    copy = lifecycle.replica_logs(lifecycle.CUSTOM_JOB, target, job.name)
    with caplog.at_level("INFO", logger=lifecycle.__name__):
        copy()
        copy()  # nothing new the second time: each line once
    lines = [r.getMessage() for r in caplog.records if "workerpool0-0 |" in r.getMessage()]
    assert lines.count("workerpool0-0 | workerpool0-0 started (start 1)") == 1
