"""The service killed with SIGKILL mid-job, or stopped, then started again on the same state."""

from pathlib import Path

import pytest

from tests.fixtures import LocalService, State, alive, wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job, scripted_pool, starts
from vtp.local.app import App
from vtp.local.base.config import ServiceConfig
from vtp.local.base.state_dir import StateDirInUse

PRIMARY = "workerpool0-0"


def test_sigkill_mid_job_then_restart_settles_every_job(tmp_path):
    service = LocalService(tmp_path / "state").start()
    client = service.client()
    retried, no_retries, cancelling = (tmp_path / d for d in ("retried", "no_retries", "cancel"))
    for record in (retried, no_retries, cancelling):
        record.mkdir()
    jobs = {
        "retried": custom_job(scripted_pool(retried, "--sleep", "60", "--times", "1")),
        "no_retries": custom_job(
            scripted_pool(no_retries, "--sleep", "60"), scheduling={"disableRetries": True}
        ),
        "cancelling": custom_job(scripted_pool(cancelling, "--sleep", "60", "--ignore-sigterm")),
    }
    names = {
        key: client.create_custom_job(parent=service.parent, custom_job=job).name
        for key, job in jobs.items()
    }
    for record in (retried, no_retries, cancelling):
        wait_until(lambda r=record: starts(r, PRIMARY), what=f"{record.name} to start")
    client.cancel_custom_job(name=names["cancelling"])  # its replica ignores SIGTERM: 2 s grace
    orphans = [starts(r, PRIMARY)[0] for r in (retried, no_retries, cancelling)]

    service.kill()
    # Nothing outlives the service: each replica's shim sees the service's pipe close.
    wait_until(lambda: not any(map(alive, orphans)), what="the killed service's replicas to end")
    service = LocalService(tmp_path / "state").start()
    client = service.client()
    try:
        ended = {key: wait_for_state(client, name) for key, name in names.items()}
        listed = {job.name for job in client.list_custom_jobs(parent=service.parent)}
    finally:
        service.stop()

    assert listed == set(names.values())
    assert ended["retried"].state == State.JOB_STATE_SUCCEEDED
    assert len(starts(retried, PRIMARY)) == 2
    assert (ended["no_retries"].state, ended["no_retries"].error.code) == (
        State.JOB_STATE_FAILED,
        13,
    )
    assert ended["no_retries"].error.message == "Internal error occurred for the current attempt."
    assert ended["cancelling"].state == State.JOB_STATE_CANCELLED


def test_a_stopped_service_runs_its_jobs_again_on_the_next_start(tmp_path):
    service = LocalService(tmp_path / "state").start()
    pool = scripted_pool(tmp_path, "--sleep", "60", "--times", "1")
    name = service.client().create_custom_job(parent=service.parent, custom_job=custom_job(pool))
    name = name.name
    wait_until(lambda: starts(tmp_path, PRIMARY), what="the replica to start")
    service.stop()
    assert not alive(starts(tmp_path, PRIMARY)[0])

    service = LocalService(tmp_path / "state").start()
    try:
        job = wait_for_state(service.client(), name)
    finally:
        service.stop()
    assert job.state == State.JOB_STATE_SUCCEEDED and len(starts(tmp_path, PRIMARY)) == 2


def test_a_second_service_on_the_same_state_directory_is_refused(local_service):
    second = LocalService(local_service.state_dir)
    with pytest.raises(RuntimeError, match="did not start"):
        second.start()
    assert second.process.wait(timeout=60) == 2  # a usage error, nothing started
    assert "--state-dir: another local Vertex service uses the state directory" in (
        second.service_log()
    )


def test_a_refused_service_touches_nothing_of_the_one_that_holds_the_directory(tmp_path):
    """The lock comes first: before a port is bound or a TLS file written."""
    first = App(ServiceConfig(tmp_path, port=0))
    tls_files = {p: p.read_bytes() for p in (tmp_path / "tls").iterdir()}
    try:
        with pytest.raises(StateDirInUse):
            App(ServiceConfig(tmp_path, port=0))
        assert {p: p.read_bytes() for p in (tmp_path / "tls").iterdir()} == tls_files
    finally:
        first.front.stop()
        first.close()
    second = App(ServiceConfig(tmp_path, port=0))  # released on close
    second.front.stop()
    second.close()


def test_paths_are_absolute_whatever_the_flags_said(tmp_path, monkeypatch):
    """Replicas run in their own working directories, so relative state paths would move."""
    monkeypatch.chdir(tmp_path)
    config = ServiceConfig(Path("state"), gcs_root=Path("bucket-root"))
    assert config.state_dir == tmp_path / "state"
    assert config.storage_root == tmp_path / "bucket-root"
    assert ServiceConfig(Path("state")).storage_root == tmp_path / "state" / "gcs"
