"""`vtp local fault`: arms the faults of `vtp.testing` on a running `vtp local serve`, for jobs
anyone creates there; bad flags exit 2 with one line naming the flag."""

import json
import subprocess
import sys

import pytest
from google.cloud import aiplatform_v1

from tests.fixtures import wait_for_state
from vtp.cli import main as vtp

STOCKOUT = "Resources are insufficient in region: us-central1."


def fault(*args: str) -> subprocess.CompletedProcess[str]:
    """`vtp local fault ARGS` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "vtp", "local", "fault", *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def run_job(local_service, parent: str, code: str) -> aiplatform_v1.CustomJob:
    """A job whose replica runs `code`, created with the API client, once it has ended."""
    command = ["python", "-c", code]
    pool = {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
            "containerSpec": {"imageUri": "python:3.11", "command": command}}  # fmt: skip
    body = {"displayName": "cli-fault", "jobSpec": {"workerPoolSpecs": [pool]}}
    client = local_service.client()
    job = aiplatform_v1.CustomJob.from_json(json.dumps(body))
    return wait_for_state(client, client.create_custom_job(parent=parent, custom_job=job).name)


def logs(local_service, job: aiplatform_v1.CustomJob) -> str:
    answer = local_service.session().get(f"{local_service.url}/v1/{job.name}:logs").json()
    return "".join(entry["text"] for entry in answer["entries"])


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["fail", "--exit-code", "x"], "--exit-code"),
        (["fail", "--exit-code", "256"], "--exit-code"),
        (["oom", "--exit-code", "3"], "--exit-code"),
        (["stockout", "--attempts", "0"], "--attempts"),
        (["fail", "--attempts", "2"], "--attempts"),
        (["preempt", "--nth", "first"], "--nth"),
        (["list", "--nth", "2"], "--nth"),
        (["crash"], "FAULT"),
        (["fail", "--region", "moon-1"], "--region"),
    ],
)
def test_bad_flags_exit_2_with_one_line_naming_the_flag(args, named, capsys) -> None:
    assert vtp(["local", "fault", *args, "--endpoint", "http://127.0.0.1:9"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("vtp: error: ") and named in err, err
    assert err.count("\n") == 1, err


def test_without_a_service_it_says_how_to_start_one() -> None:
    done = fault("oom", "--endpoint", "http://127.0.0.1:9")
    assert done.returncode == 1 and "start one with `vtp local serve`" in done.stderr


def test_the_services_refusal_is_reported(local_service) -> None:
    done = fault("fail", "--project", "-", "--endpoint", local_service.url)
    assert done.returncode == 1
    assert done.stderr == "vtp: injectFault: name one project and one location.\n"


@pytest.mark.slow
def test_a_stockout_armed_from_the_shell_strikes_the_next_job(local_service) -> None:
    armed = fault("stockout", "--attempts", "1", "--state-dir", str(local_service.state_dir))
    assert armed.returncode == 0, armed.stderr
    assert armed.stdout.startswith(
        "Armed: the next custom job finds no machines in its first attempt, then"
    )
    done = run_job(local_service, local_service.parent, "print('up')")
    assert done.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, done.error
    text = logs(local_service, done)
    assert text.count(STOCKOUT) == 1 and "attempt 2 got the machines" in text, text
    listed = fault("list", "--endpoint", local_service.url)
    assert listed.returncode == 0, listed.stderr
    [row] = listed.stdout.splitlines()[1:]
    assert row.split() == ["STOCKOUT", "JOB", "1", "yes", done.name], listed.stdout


@pytest.mark.slow
def test_a_failure_armed_for_the_second_job_of_a_project(local_service) -> None:
    parent = "projects/cli-fault/locations/us-central1"
    armed = fault("fail", "--exit-code", "3", "--nth", "2", "--project", "cli-fault",
                  "--endpoint", local_service.url)  # fmt: skip
    assert armed.returncode == 0, armed.stderr
    assert "the 2nd (from now) custom job fails with exit status 3" in armed.stdout
    code = "import time; print('epoch', 0, flush=True); time.sleep(30)"
    first = run_job(local_service, parent, code.replace("(30)", "(0)"))
    second = run_job(local_service, parent, code)
    assert first.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, first.error
    assert second.state == aiplatform_v1.JobState.JOB_STATE_FAILED
    assert second.error.message.startswith(
        "The replica workerpool0-0 exited with a non-zero status of 3."
    ), second.error.message
    assert "epoch 0" in logs(local_service, second)


def test_a_trials_fault_is_listed_until_a_trial_comes(local_service) -> None:
    armed = fault("oom", "--trial", "--project", "cli-trial", "--endpoint", local_service.url)
    assert "the next tuning trial's job runs out of memory" in armed.stdout, armed.stderr
    listed = fault("list", "--project", "cli-trial", "--endpoint", local_service.url)
    assert listed.stdout.splitlines()[1].split() == ["OOM", "TRIAL", "1", "no", "(none", "yet)"]
