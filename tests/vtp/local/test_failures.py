"""Vertex's lifecycle and failure rules, with real replica processes that exit as told.

Every job goes through the aiplatform REST client to one `vtp local serve` for the module; the
replicas run `scripted_replica.py`, which records each start so restarts can be counted.
"""

import json

import pytest
from google.cloud import aiplatform_v1

from tests.fixtures import State, alive, wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job, scripted_pool, starts
from vtp.cli import main as vtp

PRIMARY, WORKER = "workerpool0-0", "workerpool1-0"


@pytest.fixture(scope="module")
def client(local_service):
    return local_service.client()


def run(client, local_service, job: aiplatform_v1.CustomJob) -> aiplatform_v1.CustomJob:
    created = client.create_custom_job(parent=local_service.parent, custom_job=job)
    return wait_for_state(client, created.name)


def submit(client, local_service, job: aiplatform_v1.CustomJob) -> str:
    return client.create_custom_job(parent=local_service.parent, custom_job=job).name


def preempt(local_service, name: str, replica: str, grace: str = "2") -> None:
    assert vtp(["local", "preempt", name, "--replica", replica, "--grace", grace,
                "--endpoint", local_service.url]) == 0  # fmt: skip


def test_user_code_exception_fails_the_job_with_vertex_wording(client, local_service, tmp_path):
    job = run(client, local_service, custom_job(scripted_pool(tmp_path, "--exit", "3")))
    assert job.state == State.JOB_STATE_FAILED
    assert job.error.code == 3
    assert job.error.message.startswith(
        "The replica workerpool0-0 exited with a non-zero status of 3. Termination reason: Error."
    )
    assert len(starts(tmp_path, PRIMARY)) == 1


@pytest.mark.parametrize("failure", [("--exit", "6"), ("--signal", "SEGV")], ids=["6", "SIGSEGV"])
def test_transient_exit_codes_retry_the_whole_job(client, local_service, tmp_path, failure):
    primary = scripted_pool(tmp_path, *failure, "--times", "2", "--in-step-with", WORKER)
    worker = scripted_pool(tmp_path, "--sleep", "60")
    job = run(client, local_service, custom_job(primary, worker))
    assert job.state == State.JOB_STATE_SUCCEEDED
    assert len(starts(tmp_path, PRIMARY)) == len(starts(tmp_path, WORKER)) == 3


def test_transient_failures_fail_the_job_after_three_retries(client, local_service, tmp_path):
    job = run(client, local_service, custom_job(scripted_pool(tmp_path, "--signal", "ABRT")))
    assert job.state == State.JOB_STATE_FAILED
    assert "exited with a non-zero status of 134. Termination reason: Error." in job.error.message
    assert len(starts(tmp_path, PRIMARY)) == 4


def test_disable_retries_fails_a_transient_exit_at_once(client, local_service, tmp_path):
    job = custom_job(scripted_pool(tmp_path, "--exit", "6"), scheduling={"disableRetries": True})
    assert run(client, local_service, job).state == State.JOB_STATE_FAILED
    assert len(starts(tmp_path, PRIMARY)) == 1


def test_sigkill_from_outside_is_out_of_memory(client, local_service, tmp_path):
    job = run(client, local_service, custom_job(scripted_pool(tmp_path, "--signal", "KILL")))
    assert job.error.message.startswith(
        "The replica workerpool0-0 ran out of memory and exited with a non-zero status of 137."
    )


def test_a_command_that_cannot_start_fails_the_job(client, local_service, tmp_path):
    pool = scripted_pool(tmp_path)
    pool["containerSpec"]["command"] = [str(tmp_path / "missing")]
    job = run(client, local_service, custom_job(pool))
    assert "exited with a non-zero status of 127" in job.error.message


def test_primary_success_ends_the_job_and_stops_the_others(client, local_service, tmp_path):
    primary = scripted_pool(
        tmp_path, "--wait-starts", f"{WORKER}=1", "--wait-starts", "workerpool1-1=1"
    )
    workers = scripted_pool(tmp_path, "--sleep", "60", replicas=2)
    job = run(client, local_service, custom_job(primary, workers))
    assert job.state == State.JOB_STATE_SUCCEEDED
    pids = starts(tmp_path, WORKER) + starts(tmp_path, "workerpool1-1")
    assert len(pids) == 2 and not any(map(alive, pids))


def test_a_worker_that_finishes_first_is_not_restarted(client, local_service, tmp_path):
    primary = scripted_pool(tmp_path, "--wait-starts", f"{WORKER}=1", "--sleep", "0.5")
    job = run(client, local_service, custom_job(primary, scripted_pool(tmp_path)))
    assert job.state == State.JOB_STATE_SUCCEEDED
    assert len(starts(tmp_path, WORKER)) == 1


def test_a_preempted_worker_restarts_alone_under_the_same_name(client, local_service, tmp_path):
    primary = scripted_pool(tmp_path, "--wait-starts", f"{WORKER}=2")
    name = submit(
        client, local_service, custom_job(primary, scripted_pool(tmp_path, "--sleep", "60"))
    )
    wait_until(lambda: starts(tmp_path, WORKER), what="the worker to start")
    before = json.loads((tmp_path / f"{WORKER}.env.json").read_text())
    preempt(local_service, name, WORKER)

    assert wait_for_state(client, name).state == State.JOB_STATE_SUCCEEDED
    after = json.loads((tmp_path / f"{WORKER}.env.json").read_text())
    assert (len(starts(tmp_path, PRIMARY)), len(starts(tmp_path, WORKER))) == (1, 2)
    assert after["CLUSTER_SPEC"] == before["CLUSTER_SPEC"]  # same name, same address
    # A new container: the restarted worker's working directory starts empty.
    assert (tmp_path / f"{WORKER}.leftovers").read_text().split() == ["False", "False"]


def test_restart_job_on_worker_restart_restarts_every_worker(client, local_service, tmp_path):
    primary = scripted_pool(tmp_path, "--wait-starts", f"{WORKER}=2")
    job = custom_job(
        primary,
        scripted_pool(tmp_path, "--sleep", "60"),
        scheduling={"restartJobOnWorkerRestart": True},
    )
    name = submit(client, local_service, job)
    wait_until(lambda: starts(tmp_path, WORKER) and starts(tmp_path, PRIMARY))
    preempt(local_service, name, WORKER)

    assert wait_for_state(client, name).state == State.JOB_STATE_SUCCEEDED
    assert (len(starts(tmp_path, PRIMARY)), len(starts(tmp_path, WORKER))) == (2, 2)


def test_a_sixth_preemption_fails_the_job_when_retries_are_disabled(
    client, local_service, tmp_path
):
    # A replica that ignores SIGTERM is killed after the grace period; it still counts.
    pool = scripted_pool(tmp_path, "--sleep", "60", "--ignore-sigterm")
    name = submit(client, local_service, custom_job(pool, scheduling={"disableRetries": True}))
    for count in range(1, 7):
        wait_until(lambda n=count: len(starts(tmp_path, PRIMARY)) == n, what=f"start {count}")
        preempt(local_service, name, PRIMARY, grace="0.1")

    job = wait_for_state(client, name)
    assert job.state == State.JOB_STATE_FAILED
    assert job.error.message.startswith(
        "The replica workerpool0-0 exited with a non-zero status of 137. "
        "Termination reason: Preempted."
    )
    assert len(starts(tmp_path, PRIMARY)) == 6


def test_timeout_stops_the_job(client, local_service, tmp_path):
    job = custom_job(scripted_pool(tmp_path, "--sleep", "60"), scheduling={"timeout": "0.5s"})
    job = run(client, local_service, job)
    assert (job.state, job.error.code) == (State.JOB_STATE_FAILED, 4)
    assert "scheduling.timeout = 0.5s" in job.error.message
    assert not any(map(alive, starts(tmp_path, PRIMARY)))


def test_cancel_kills_a_replica_that_ignores_sigterm_after_the_grace_period(
    client, local_service, tmp_path
):
    pool = scripted_pool(tmp_path, "--sleep", "60", "--ignore-sigterm")
    name = submit(client, local_service, custom_job(pool))
    wait_until(lambda: starts(tmp_path, PRIMARY))
    client.cancel_custom_job(name=name)
    assert client.get_custom_job(name=name).state == State.JOB_STATE_CANCELLING

    job = wait_for_state(client, name)
    assert (job.state, job.error.code, job.error.message) == (
        State.JOB_STATE_CANCELLED,
        1,
        "CANCELED",
    )
    assert not alive(starts(tmp_path, PRIMARY)[0])


def test_replicas_get_vertex_environment(client, local_service, tmp_path):
    pools = (
        # The primary's end ends the job: it waits until the replicas read here have started.
        scripted_pool(
            tmp_path,
            "--wait-starts",
            "workerpool3-0=1",
            "--wait-starts",
            "workerpool1-1=1",
            TEAM="ml",
        ),
        scripted_pool(tmp_path, replicas=2),
        {},
        scripted_pool(tmp_path),
    )
    job = custom_job(*pools, baseOutputDirectory={"outputUriPrefix": "gs://bucket/run"})
    job = run(client, local_service, job)
    assert job.state == State.JOB_STATE_SUCCEEDED
    env = {
        n: json.loads((tmp_path / f"{n}.env.json").read_text()) for n in (PRIMARY, "workerpool1-1")
    }
    spec = json.loads(env["workerpool1-1"]["CLUSTER_SPEC"])
    assert sorted(spec["cluster"]) == ["workerpool0", "workerpool1", "workerpool3"]
    assert spec["task"] == {"type": "workerpool1", "index": 1}
    assert (env["workerpool1-1"]["RANK"], env["workerpool1-1"]["WORLD_SIZE"]) == ("2", "3")
    primary = env[PRIMARY]
    assert (
        primary["MASTER_ADDR"] + ":" + primary["MASTER_PORT"] == spec["cluster"]["workerpool0"][0]
    )
    assert primary["CLOUD_ML_JOB_ID"] == job.name.rsplit("/", 1)[-1]
    assert primary["AIP_MODEL_DIR"] == "gs://bucket/run/model/"
    assert primary["VTP_GCS_ROOT"] == str(local_service.gcs_root)
    assert (primary["TEAM"], primary["CUDA_VISIBLE_DEVICES"]) == ("ml", "")
    assert "TEAM" not in env["workerpool1-1"]
