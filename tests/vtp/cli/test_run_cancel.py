"""Ctrl-C (and SIGTERM) during `vtp run` cancels the pipeline job and stops everything of it;
nothing an earlier run left behind starts again with the next `vtp run`; `vtp local serve` does
resume it, and says so.

The pipeline runs a CustomJob whose replica sleeps (`sleeping_job_pipeline`); the tests wait, by
polling the run's own service, until that job is RUNNING, then signal `vtp run` as a terminal
would (it runs in a session of its own), and look for any process left holding the state
directory in its command line, working directory or environment.
"""

import json
import signal
import subprocess
from pathlib import Path

import pytest
import requests
from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1 import JobState, PipelineState

from tests.fixtures import REPO, job_client, wait_until
from tests.pipelines.tiny_pipeline import SLEEPER, pipeline_client
from tests.vtp.cli.run_helpers import Served, processes_with, serve, service_of, start_vtp, vtp

pytestmark = pytest.mark.slow

PARENT = "projects/local/locations/us-central1"
SLEEPING = "tests/pipelines/tiny_pipeline.py:sleeping_job_pipeline"
TINY = ("tests/pipelines/tiny_pipeline.py:tiny_pipeline", "--param", "marker_uri=gs://m/next")


def start_sleeping_run(
    state: Path, log: Path, pipeline: tuple[str, ...] = (SLEEPING,)
) -> tuple[subprocess.Popen, str]:
    """`vtp run PIPELINE` (the sleeping-job pipeline), once its CustomJob runs: the process,
    the job."""
    process = start_vtp(REPO, "run", *pipeline, "--state-dir", str(state), log=log)
    url, token = wait_until(lambda: service_of(state), 60, "vtp run's service")

    def sleeper_running() -> str:
        if process.poll() is not None:
            raise AssertionError(log.read_text() + log.with_suffix(".err").read_text())
        jobs = job_client(url, token).list_custom_jobs(parent=PARENT)
        running = [j.name for j in jobs if j.state == JobState.JOB_STATE_RUNNING]
        return running[0] if running else ""

    return process, wait_until(sleeper_running, 120, "the task's CustomJob to run")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_cancels_the_run_says_what_and_leaves_nothing(tmp_path: Path, signum) -> None:
    state, log = tmp_path / "state", tmp_path / "run.log"
    process, job = start_sleeping_run(state, log)
    if signum == signal.SIGINT:  # meanwhile, another run cannot take the same state dir
        second = vtp(REPO, "run", *TINY, "--state-dir", str(state))
        assert second.returncode == 2, second.stderr
        (line,) = second.stderr.splitlines()
        assert line.startswith("vtp: error: --state-dir: another `vtp run` uses the state dir")
    process.send_signal(signum)
    assert process.wait(timeout=60) == 130
    out, err = log.read_text(), log.with_suffix(".err").read_text()
    assert f"Pipeline {SLEEPING} CANCELLED in " in out
    last = err.strip().splitlines()[-1]
    assert last.startswith("vtp: interrupted: cancelled projects/local/locations/us-central1/")
    assert f"cancelled CustomJob {job}" in last, last
    assert "Traceback" not in err and "BrokenPipeError" not in err
    wait_until(lambda: not processes_with(str(state)), 15, "every process of the run to end")


def test_ctrl_c_during_the_train_pipelines_ddp_job_leaves_nothing_of_it(tmp_path: Path) -> None:
    state, log = tmp_path / "state", tmp_path / "run.log"
    long_training = ("train", "--param", 'trainer_args=["--epochs=500"]')
    process, job = start_sleeping_run(state, log, long_training)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 130
    assert "Pipeline train CANCELLED in " in log.read_text()
    assert f"cancelled CustomJob {job}" in log.with_suffix(".err").read_text()
    wait_until(lambda: not processes_with(str(state)), 15, "every process of the run to end")
    following = vtp(REPO, "run", *TINY, "--state-dir", str(state))
    assert following.returncode == 0, following.stdout[-2000:] + following.stderr[-2000:]
    assert "restored" not in following.stderr  # the cancelled job is over: nothing to resume
    assert processes_with(str(state)) == []
    with serve(REPO, state) as served:
        ended = job_client(served.url, served.token).get_custom_job(name=job)
        replicas = served_get(served, f"/v1/{job}:replicas")["replicas"]
    assert ended.state == JobState.JOB_STATE_CANCELLED
    assert len(replicas) == 2 and all(r["starts"] == 1 for r in replicas), replicas


def test_what_a_killed_run_left_does_not_start_with_the_next_run(tmp_path: Path) -> None:
    state, log = tmp_path / "state", tmp_path / "run.log"
    process, job = start_sleeping_run(state, log)
    process.kill()  # no chance to cancel: the job and its pipeline stay RUNNING in the state
    process.wait(timeout=30)
    wait_until(lambda: not processes_with(str(state)), 30, "the watchdog to end the run")

    following = vtp(REPO, "run", *TINY, "--state-dir", str(state))
    assert following.returncode == 0, following.stdout[-2000:] + following.stderr[-2000:]
    assert f"not restored: CustomJob {job} (sleeper), left RUNNING: cancelled" in following.stderr
    assert processes_with(str(state)) == []

    with serve(REPO, state) as served:  # `vtp local serve`: nothing left to resume now
        jobs = job_client(served.url, served.token)
        ended = jobs.get_custom_job(name=job)
        replicas = served_get(served, f"/v1/{job}:replicas")
        runs = list(pipeline_client(served.url).list_pipeline_jobs(parent=PARENT))
    assert ended.state == JobState.JOB_STATE_CANCELLED
    assert "starts nothing an earlier one left unfinished" in ended.error.message
    assert [r["starts"] for r in replicas["replicas"]] == [1]  # never started again
    killed = next(r for r in runs if r.display_name == "vtp-sleeping-job")
    assert killed.state == PipelineState.PIPELINE_STATE_FAILED
    assert "service restored:" not in (state / "serve.log").read_text()


def test_vtp_local_serve_resumes_an_interrupted_job_and_prints_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with serve(REPO, state) as served:
        job = job_client(served.url, served.token).create_custom_job(
            parent=PARENT, custom_job=sleeper()
        )
        jobs = job_client(served.url, served.token)
        wait_until(lambda: jobs.get_custom_job(name=job.name).state == JobState.JOB_STATE_RUNNING)
        served.process.kill()
        served.process.wait(timeout=30)
    wait_until(lambda: not processes_with(str(state)), 30, "the watchdog to end the replica")
    with serve(REPO, state) as served:
        text = (state / "serve.log").read_text()
        jobs = job_client(served.url, served.token)
        wait_until(lambda: jobs.get_custom_job(name=job.name).state == JobState.JOB_STATE_RUNNING)
        jobs.cancel_custom_job(name=job.name)
    line = f"restored: CustomJob {job.name} (sleeper), running when the service stopped"
    assert line in text, text


def sleeper() -> aiplatform_v1.CustomJob:
    """A CustomJob whose one replica sleeps for five minutes."""
    spec = aiplatform_v1.CustomJobSpec.from_json(json.dumps(SLEEPER))
    return aiplatform_v1.CustomJob(display_name="sleeper", job_spec=spec)


def served_get(served: Served, path: str) -> dict:
    """GET a path of the serve with its token, as JSON."""
    answer = requests.get(
        served.url + path, headers={"Authorization": f"Bearer {served.token}"}, timeout=10
    )
    answer.raise_for_status()
    return answer.json()
