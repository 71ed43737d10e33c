"""`vtp custom-jobs ... --local` end to end against the real local Vertex service.

The replicas run a one-line Python command on the host (an image that is not this project's,
with an explicit command), so the test needs no trainer and no Docker.
"""

import json

import pytest
from google.cloud import aiplatform_v1

from tests.fixtures import LocalService, point_vtp_at, run_vtp, wait_for_state

State = aiplatform_v1.JobState
POOL = "--worker-pool-spec=machine-type=n1-standard-4,container-image-uri=python:3.11-slim"


@pytest.fixture
def local(local_service: LocalService, monkeypatch: pytest.MonkeyPatch) -> LocalService:
    return point_vtp_at(local_service, monkeypatch)


def vtp(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_vtp(capsys, "custom-jobs", *argv)


def created(capsys: pytest.CaptureFixture[str], display_name: str, *flags: str) -> str:
    """The name of the job `custom-jobs create --local` made, running POOL with `flags`."""
    code, out, err = vtp(
        capsys, "create", "--local", f"--display-name={display_name}", POOL, *flags
    )
    assert code == 0, err
    return out.strip()


def test_create_then_stream_logs_until_it_succeeds(local: LocalService, capsys) -> None:
    hello = "--command=python,-c,import sys; print('hello from ' + sys.argv[1])"
    name = created(capsys, "hello", hello, "--args=workerpool0")
    assert name.startswith(local.parent + "/customJobs/")

    code, out, err = vtp(capsys, "stream-logs", name, "--local", "--polling-interval=0.1")
    assert code == 0, err
    assert "workerpool0-0\thello from workerpool0" in out
    assert "JOB_STATE_SUCCEEDED" in err

    code, out, _ = vtp(capsys, "describe", name, "--local")
    described = json.loads(out)
    assert (code, described["state"], described["displayName"]) == (
        0,
        "JOB_STATE_SUCCEEDED",
        "hello",
    )
    assert described["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"] == ["workerpool0"]

    code, out, _ = vtp(capsys, "list", "--local")
    assert code == 0 and any(line.split()[0] == name.rsplit("/", 1)[1] for line in out.splitlines())


def test_cancel_stops_a_running_job(local: LocalService, capsys) -> None:
    name = created(capsys, "sleeper", "--command=python,-c,import time; time.sleep(120)")
    client = local.client()
    wait_for_state(client, name, [State.JOB_STATE_RUNNING])
    assert vtp(capsys, "cancel", name, "--local")[0] == 0
    assert wait_for_state(client, name).state == State.JOB_STATE_CANCELLED

    code, _, err = vtp(capsys, "stream-logs", name, "--local", "--polling-interval=0.1")
    assert code == 1 and "JOB_STATE_CANCELLED" in err


def test_the_service_refuses_what_it_cannot_run_and_vtp_says_why(local: LocalService, capsys):
    # Valid for Vertex, but an image that is not ours, with no command, cannot run locally.
    code, out, err = vtp(capsys, "create", "--local", "--display-name=x", POOL)
    assert (code, out) == (1, "")
    assert "vtp: error:" in err and "command" in err
