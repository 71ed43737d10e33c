"""Faults where Vertex has them (issue #53): a team's test folder, outside the repository, run
with pytest as the team runs it. A FAIL or OOM fault lets the job go RUNNING and its replica run
its own code; once that replica has logged a line it exits (status 1, or SIGKILL as out of
memory) and the job fails with Vertex's message. A fault that never strikes fails its test at
teardown, with one line naming it. Then the service's `injectFault` method itself: which job a
fault goes to (`nth`), a stockout under FLEX_START's wait, and bad input refused naming the
field. (team_suite/tests/test_faults.py has the stockout, `nth` and pipeline-task cases a team
writes.)"""

import json
import os
import subprocess
import sys

import pytest
from google.cloud import aiplatform_v1

from tests.fixtures import wait_for_state
from vtp.local.custom_jobs.faults import Fault, Faults

TEAM_TEST = """
import pytest
from google.cloud import aiplatform


def job(code):
    return aiplatform.CustomJob(
        display_name="team",
        worker_pool_specs=[{
            "machine_spec": {"machine_type": "n1-standard-4"},
            "replica_count": 1,
            "container_spec": {
                "image_uri": "us-docker.pkg.dev/team/ml/job:1",
                "command": ["python", "-c", code],
            },
        }],
    )


# The replica's own words: the service's "starting" line quotes its command, not these.
TRAINING = (
    "import time; print('epoch', 0, 'loss', 1.0, flush=True); time.sleep(60); print('fin' 'ished')"
)


def test_a_job_fails_after_its_replica_logged(local_vertex):
    local_vertex.fail_next_job()
    with pytest.raises(RuntimeError):
        job(TRAINING).run()
    [failed] = local_vertex.jobs()
    assert failed.state.name == "JOB_STATE_FAILED"
    assert failed.start_time, "the job went RUNNING first"
    assert failed.error.message.startswith(
        "The replica workerpool0-0 exited with a non-zero status of 1. Termination reason: Error."
    ), failed.error.message
    logs = local_vertex.logs(failed)
    assert "epoch 0 loss 1.0" in logs and "finished" not in logs, logs


def test_a_transient_exit_code_retries_the_job_as_on_vertex(local_vertex):
    local_vertex.fail_next_job(exit_code=134)  # SIGABRT: Vertex retries the whole job
    job(TRAINING.replace("(60)", "(0)")).run()
    [done] = local_vertex.jobs()
    assert done.state.name == "JOB_STATE_SUCCEEDED"
    logs = local_vertex.logs(done)
    assert logs.count("epoch 0 loss 1.0") == 2 and "retry_job after exit status 134" in logs


def test_a_job_runs_out_of_memory(local_vertex):
    local_vertex.oom_next_job()
    with pytest.raises(RuntimeError):
        job(TRAINING).run()
    [failed] = local_vertex.jobs()
    assert failed.state.name == "JOB_STATE_FAILED"
    assert failed.error.message.startswith(
        "The replica workerpool0-0 ran out of memory and exited with a non-zero status of 137."
    ), failed.error.message
    assert "epoch 0 loss 1.0" in local_vertex.logs(failed)


def test_a_trials_fault_counts_against_max_failed_trial_count(local_vertex):
    from google.cloud.aiplatform import hyperparameter_tuning as hpt

    local_vertex.fail_next_trial()
    tuning = aiplatform.HyperparameterTuningJob(
        display_name="team-hpt",
        custom_job=job(TRAINING.replace("(60)", "(0)")),
        metric_spec={"score": "maximize"},
        parameter_spec={"x": hpt.DoubleParameterSpec(min=0, max=1, scale="linear")},
        max_trial_count=2,
        parallel_trial_count=1,
        max_failed_trial_count=1,
    )
    with pytest.raises(RuntimeError):
        tuning.run()
    assert local_vertex.jobs() == []  # a trial's job is not listed, as on Vertex
    [study] = aiplatform.HyperparameterTuningJob.list()
    assert study.state.name == "JOB_STATE_FAILED"
    assert "reaching the limit of 1 (maxFailedTrialCount)" in study.error.message, study.error
    assert [t.state.name for t in study.trials] == ["INFEASIBLE"]
    reason = study.trials[0].infeasible_reason
    assert "workerpool0-0 exited with a non-zero status of 1" in reason, reason


def test_an_unused_fault_is_reported(local_vertex):
    local_vertex.fail_next_job()


def test_a_fault_its_job_never_reached_is_reported(local_vertex):
    local_vertex.oom_next_job()
    job("pass").run()  # it logs no line: nothing for the fault to follow
"""


@pytest.fixture(scope="module")
def team_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    folder = tmp_path_factory.mktemp("faults") / "team"
    (folder / "tests").mkdir(parents=True)
    (folder / "tests" / "test_faults.py").write_text(TEAM_TEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    command = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
               f"--basetemp={folder.parent / 'basetemp'}"]  # fmt: skip
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=600)


def outcome(run: subprocess.CompletedProcess[str], test: str) -> str:
    """The `-rA` summary lines about `test` (PASSED, FAILED, ERROR at teardown ...)."""
    return "\n".join(line for line in run.stdout.splitlines() if f"::{test}" in line)


@pytest.mark.slow
@pytest.mark.parametrize(
    "test",
    [
        "test_a_job_fails_after_its_replica_logged",
        "test_a_transient_exit_code_retries_the_job_as_on_vertex",
        "test_a_job_runs_out_of_memory",
        "test_a_trials_fault_counts_against_max_failed_trial_count",
    ],
)
def test_a_fault_strikes_after_the_replica_logged(team_run, test: str) -> None:
    lines = outcome(team_run, test)
    assert lines.startswith("PASSED") and "ERROR" not in lines, team_run.stdout[-6000:]


@pytest.mark.slow
def test_an_unused_fault_fails_its_test_at_teardown(team_run) -> None:
    lines = outcome(team_run, "test_an_unused_fault_is_reported")
    assert "ERROR" in lines, team_run.stdout[-6000:]
    assert "fail_next_job() (exit status 1) was never used: no custom job was created" in (
        team_run.stdout
    ), team_run.stdout[-6000:]
    reached = outcome(team_run, "test_a_fault_its_job_never_reached_is_reported")
    assert "ERROR" in reached, team_run.stdout[-6000:]
    assert "oom_next_job() was never used: its job projects/" in team_run.stdout


# -- the service's method ---------------------------------------------------------------------

STOCKOUT = "Resources are insufficient in region: us-central1. Please try a different region."


def test_a_fault_goes_to_the_nth_job_counting_those_an_earlier_fault_took() -> None:
    faults, parent = Faults(), "projects/p/locations/us-central1"
    for fault in (Fault("FAIL", 1, nth=2), Fault("OOM", 137), Fault("PREEMPT", nth=2)):
        faults.arm(parent, fault)
    faults.arm(parent, Fault("FAIL", 1, target="TRIAL"))
    claimed = [faults.claim(parent, "JOB", f"{parent}/customJobs/{n}") for n in range(4)]
    assert [f.fault if f else None for f in claimed] == ["OOM", "FAIL", "PREEMPT", None]
    assert faults.claim(parent, "JOB", "trial", listed=False) is None  # a trial's is unlisted
    assert faults.claim("projects/q/locations/us-central1", "JOB", "elsewhere") is None
    trial = faults.claim(parent, "TRIAL", "trial", listed=False)
    assert trial is not None and (trial.target, trial.job) == ("TRIAL", "trial")
    assert [f.job.rsplit("/", 1)[-1] for f in faults.listed(parent)] == ["1", "0", "2", "trial"]


def job_body(code: str, **scheduling: object) -> str:
    command = ["python", "-c", code]
    pool = {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
            "containerSpec": {"imageUri": "python:3.11", "command": command}}  # fmt: skip
    spec = {"workerPoolSpecs": [pool], **({"scheduling": scheduling} if scheduling else {})}
    return json.dumps({"displayName": "faulted", "jobSpec": spec})


def run_job(local_service, body: str) -> aiplatform_v1.CustomJob:
    client = local_service.client()
    job = aiplatform_v1.CustomJob.from_json(body)
    created = client.create_custom_job(parent=local_service.parent, custom_job=job)
    return wait_for_state(client, created.name)


def inject(local_service, **body: object):
    url = f"{local_service.url}/v1/{local_service.parent}/customJobs:injectFault"
    return local_service.session().post(url, json=body)


@pytest.mark.slow
def test_a_flex_start_job_waits_out_a_stockout_past_the_retries(local_service) -> None:
    assert inject(local_service, fault="STOCKOUT", attempts=5).status_code == 200
    done = run_job(local_service, job_body("print('up')", strategy="FLEX_START"))
    assert done.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, done.error
    logs = local_service.session().get(f"{local_service.url}/v1/{done.name}:logs").json()
    text = "".join(entry["text"] for entry in logs["entries"])
    assert text.count(STOCKOUT) == 5 and "attempt 6 got the machines" in text, text


@pytest.mark.slow
def test_a_stockout_past_max_wait_duration_fails_the_job(local_service) -> None:
    assert inject(local_service, fault="STOCKOUT").status_code == 200
    body = job_body("print('up')", strategy="FLEX_START", maxWaitDuration="0.2s")
    failed = run_job(local_service, body)
    assert failed.state == aiplatform_v1.JobState.JOB_STATE_FAILED
    assert failed.error.code == 8 and failed.error.message.startswith(STOCKOUT)
    assert not failed.start_time  # it never ran


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"fault": "STOCKOUTS"}, '"fault"'),
        ({"fault": "FAIL", "target": "STUDY"}, '"target"'),
        ({"fault": "FAIL", "exitCode": 0}, '"exitCode"'),
        ({"fault": "FAIL", "nth": 0}, '"nth"'),
        ({"fault": "FAIL", "nth": "2"}, '"nth"'),
        ({"fault": "STOCKOUT", "attempts": 0}, '"attempts"'),
        ({"fault": "STOCKOUT", "attempts": True}, '"attempts"'),
        ({"fault": "OOM", "attempts": 2}, '"attempts"'),
    ],
)
def test_bad_fault_input_is_a_400_naming_the_field(local_service, body, field) -> None:
    answer = inject(local_service, **body)
    assert answer.status_code == 400, answer.text
    assert field in answer.json()["error"]["message"], answer.text
