"""Capacity: jobs whose replicas do not fit wait in JOB_STATE_QUEUED, in creation order."""

import json

import pytest
from google.api_core import exceptions

from tests.fixtures import FAST_FLAGS, LocalService, State, wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job, scripted_pool, starts


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    """A service that runs at most two replica processes at once, and hands out GPUs 0 and 1."""
    flags = (*FAST_FLAGS, "--max-replicas", "2", "--gpus", "0,1")  # the last --gpus wins
    service = LocalService(tmp_path_factory.mktemp("queue"), *flags)
    yield service.start()
    service.stop()


def test_a_job_waits_in_the_queue_until_replicas_are_free(service, tmp_path):
    client = service.client()
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    first_dir.mkdir(), second_dir.mkdir()
    gate = tmp_path / "go"
    first = custom_job(scripted_pool(first_dir, "--wait-file", str(gate)), scripted_pool(first_dir))
    first = client.create_custom_job(parent=service.parent, custom_job=first)
    second = client.create_custom_job(
        parent=service.parent, custom_job=custom_job(scripted_pool(second_dir))
    )
    wait_for_state(client, first.name, [State.JOB_STATE_RUNNING])
    wait_until(lambda: starts(first_dir, "workerpool1-0"), what="the first job's worker")
    assert client.get_custom_job(name=second.name).state == State.JOB_STATE_QUEUED
    assert not starts(second_dir, "workerpool0-0")

    gate.touch()
    done = [wait_for_state(client, job.name) for job in (first, second)]
    assert [job.state for job in done] == [State.JOB_STATE_SUCCEEDED] * 2
    assert done[1].start_time >= done[0].end_time


def test_a_job_that_can_never_fit_is_refused(service, tmp_path):
    job = custom_job(scripted_pool(tmp_path), scripted_pool(tmp_path, replicas=2))
    with pytest.raises(exceptions.BadRequest, match="at most 2 at once"):  # 400 FAILED_PRECONDITION
        service.client().create_custom_job(parent=service.parent, custom_job=job)


def test_cancelling_a_queued_job_ends_it_without_running_it(service, tmp_path):
    client = service.client()
    gate = tmp_path / "go"
    blocker = custom_job(scripted_pool(tmp_path, "--wait-file", str(gate), replicas=1))
    blocker = client.create_custom_job(parent=service.parent, custom_job=blocker)
    queued_dir = tmp_path / "queued"
    queued_dir.mkdir()
    pools = [scripted_pool(queued_dir), scripted_pool(queued_dir)]
    queued = client.create_custom_job(parent=service.parent, custom_job=custom_job(*pools))
    wait_for_state(client, blocker.name, [State.JOB_STATE_RUNNING])

    client.cancel_custom_job(name=queued.name)
    assert client.get_custom_job(name=queued.name).state == State.JOB_STATE_CANCELLED
    gate.touch()
    assert wait_for_state(client, blocker.name).state == State.JOB_STATE_SUCCEEDED
    assert not starts(queued_dir, "workerpool0-0")


def test_replicas_that_ask_for_accelerators_get_their_own_gpus(service, tmp_path):
    pools = [scripted_pool(tmp_path, "--wait-starts", "workerpool1-0=1"), scripted_pool(tmp_path)]
    for pool in pools:
        pool["machineSpec"].update(acceleratorType="NVIDIA_L4", acceleratorCount=1)
    client = service.client()
    job = client.create_custom_job(parent=service.parent, custom_job=custom_job(*pools))
    assert wait_for_state(client, job.name).state == State.JOB_STATE_SUCCEEDED
    devices = {
        name: json.loads((tmp_path / f"{name}.env.json").read_text())["CUDA_VISIBLE_DEVICES"]
        for name in ("workerpool0-0", "workerpool1-0")
    }
    assert sorted(devices.values()) == ["0", "1"]

    # More than the machine has: the job runs on CPU, saying so once in its log.
    record = tmp_path / "on_cpu"
    record.mkdir()
    # The primary waits for the worker's start: its exit ends the job, which stops the worker.
    pools = [scripted_pool(record, "--wait-starts", "workerpool1-0=1"), scripted_pool(record)]
    for pool, count in zip(pools, (2, 1), strict=True):
        pool["machineSpec"].update(acceleratorType="NVIDIA_L4", acceleratorCount=count)
    job = client.create_custom_job(parent=service.parent, custom_job=custom_job(*pools))
    assert wait_for_state(client, job.name).state == State.JOB_STATE_SUCCEEDED
    for name in ("workerpool0-0", "workerpool1-0"):
        env = json.loads((record / f"{name}.env.json").read_text())
        assert env["CUDA_VISIBLE_DEVICES"] == ""
    log = service.session().get(
        f"{service.url}/v1/{job.name}:logs", params={"replica": "workerpool0-0"}, timeout=30
    )
    warning = (
        "WARNING: workerPoolSpecs[0] asks for 2 x NVIDIA_L4 (1 replica); workerPoolSpecs[1] "
        "asks for 1 x NVIDIA_L4 (1 replica), but this machine has 2 GPU(s) for them all: the "
        "job runs on CPU"
    )
    (entry,) = log.json()["entries"]
    assert entry["text"].count(warning) == 1
