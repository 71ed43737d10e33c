"""A run's worker prepared ahead of the run (the service's standby): the same run, the same
isolation, and nothing of it left once the service is gone.

A `vtp local serve --prepare-runs` has a standby from its start, and spawns one for the next run
once a run has ended, which these tests then create; a plain `vtp local serve` has none.
"""

import json
import os
import sqlite3
from pathlib import Path

from google.cloud.aiplatform_v1 import PipelineState

from tests.fixtures import FAST_FLAGS, LocalService, wait_until
from tests.pipelines.tiny_pipeline import pipeline_client, tiny_job, wait_for_pipeline
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from vtp.local.base.config import ServiceConfig
from vtp.local.pipeline_jobs.standby import Standby
from vtp.local.runtime.process import TOKEN_ENV

PARENT = "projects/local/locations/us-central1"
IN_STANDBY = "runs in the standby worker"
PREPARING = (*FAST_FLAGS, "--prepare-runs")


def processes_with(text: str) -> list[int]:
    """Live processes (but this one) whose command line or environment holds `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            places = [(entry / name).read_bytes() for name in ("cmdline", "environ")]
        except OSError:
            continue
        if any(text.encode() in place.replace(b"\0", b" ") for place in places):
            found.append(int(entry.name))
    return found


def standby_processes(service: LocalService) -> list[int]:
    """The standby's processes: its command line names the service's cache folder."""
    return processes_with(str(service.state_dir / "pipelines" / ".cache"))


def run_token(service: LocalService, job_name: str) -> str:
    """The token the service stored for the run (what a restarted service looks for)."""
    with sqlite3.connect(service.state_dir / "pipelines.db") as db:
        (runtime,) = db.execute(
            "SELECT runtime FROM pipeline_jobs WHERE id = ?", (job_name.rsplit("/", 1)[1],)
        ).fetchone()
    return json.loads(runtime)["token"]


def run_tiny(service: LocalService, template: Path, name: str, **params: object) -> str:
    client = pipeline_client(service.url)
    job = tiny_job(template, marker_uri=f"gs://vtp-test/markers/{name}", **params)
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job, pipeline_job_id=name)
    return created.name


def test_a_run_in_the_standby_gives_the_same_results_and_nothing_outlives_the_service(
    tmp_path, tiny_yaml
):
    service = LocalService(tmp_path / "state", *PREPARING).start()
    try:
        client = pipeline_client(service.url)
        first = wait_for_pipeline(client, run_tiny(service, tiny_yaml, "first", a=3, b=4))
        assert first.state == PipelineState.PIPELINE_STATE_SUCCEEDED, first.error.message
        assert f"pipeline job first: {IN_STANDBY}" in service.service_log()  # from the start
        wait_until(lambda: standby_processes(service), 30, "the standby for the next run")
        # other inputs, so that its tasks run rather than hit the cache
        second = wait_for_pipeline(client, run_tiny(service, tiny_yaml, "second", a=2, b=5))
        assert f"pipeline job second: {IN_STANDBY}" in service.service_log()
        assert second.state == PipelineState.PIPELINE_STATE_SUCCEEDED, second.error.message
        markers = service.gcs_root / "vtp-test" / "markers"
        for name in ("first", "second"):  # the sum, and the service's address its task was given
            assert json.loads((markers / name).read_text()) == {"value": 7, "endpoint": service.url}
        tasks = [
            {
                t.task_name: t.state.name
                for t in client.get_pipeline_job(name=n).job_detail.task_details
            }
            for n in (first.name, second.name)
        ]
        assert tasks[0] == tasks[1]
        assert set(tasks[1].values()) == {"SUCCEEDED"}
        log = service.session().get(f"{service.url}/v1/{second.name}:logs", timeout=10).json()
        assert "pipeline run succeeded" in log["text"]
        wait_until(lambda: standby_processes(service), 30, "a standby for the run after")
    finally:
        service.stop()
    assert processes_with(str(service.state_dir)) == []  # the standby and its fork server too


def test_a_run_in_the_standby_carries_its_token_and_a_restarted_service_settles_it(
    tmp_path, tiny_yaml
):
    service = LocalService(tmp_path / "state", *PREPARING).start()
    try:
        client = pipeline_client(service.url)
        wait_for_pipeline(client, run_tiny(service, tiny_yaml, "before"))
        wait_until(lambda: standby_processes(service), 30, "the standby for the next run")
        name = run_tiny(service, tiny_yaml, "sleeping", sleep_seconds=120)
        started = service.gcs_root / "vtp-test" / "markers" / "sleeping.started"
        wait_until(started.exists, 30, "the task to start")
        assert f"pipeline job sleeping: {IN_STANDBY}" in service.service_log()
        carrying = f"{TOKEN_ENV}={run_token(service, name)}"
        # the worker, its fork server and its stages, and the task forked from one
        assert len(processes_with(carrying)) >= 3
        service.kill()  # SIGKILL: nothing of the run outlives it
        wait_until(lambda: not processes_with(carrying), 15, "no process of the run")
        assert processes_with(str(service.state_dir)) == []
        service.start()
        job = pipeline_client(service.url).get_pipeline_job(name=name)
        assert job.state == PipelineState.PIPELINE_STATE_FAILED
        assert "stopped while this pipeline ran" in job.error.message
    finally:
        service.stop()


def test_a_run_gets_a_fresh_worker_when_the_standby_has_died(tmp_path, tiny_yaml):
    service = LocalService(tmp_path / "state", *PREPARING).start()
    try:
        client = pipeline_client(service.url)
        wait_for_pipeline(client, run_tiny(service, tiny_yaml, "before"))
        standby = wait_until(lambda: standby_processes(service), 30, "the standby")
        for pid in standby:  # as the OOM killer would
            os.kill(pid, 9)
        # Dead, not only signalled (a zombie has no command line): the next run then finds it
        # exited, rather than racing its death through the assignment pipe. Those killed, not
        # every standby process: a process the standby started after the list was taken (its
        # fork server, on a busy machine) ends on its own once the standby has gone.
        killed = set(standby)
        wait_until(lambda: not killed & set(standby_processes(service)), 30, "the standby's death")
        done = wait_for_pipeline(client, run_tiny(service, tiny_yaml, "after", a=5))
        assert done.state == PipelineState.PIPELINE_STATE_SUCCEEDED, done.error.message
        assert "pipeline job after: a fresh worker, not the standby: it exited" in (
            service.service_log()
        )
        marker = service.gcs_root / "vtp-test" / "markers" / "after"
        assert json.loads(marker.read_text())["value"] == 7
    finally:
        service.stop()


def test_runs_in_the_standby_without_the_fork_server(tmp_path, tiny_yaml):
    service = LocalService(tmp_path / "state", *PREPARING, env={"VTP_TASK_FORK": "0"}).start()
    try:
        client = pipeline_client(service.url)
        wait_for_pipeline(client, run_tiny(service, tiny_yaml, "before"))
        wait_until(lambda: standby_processes(service), 30, "the standby")
        done = wait_for_pipeline(client, run_tiny(service, tiny_yaml, "after", a=5))
        assert done.state == PipelineState.PIPELINE_STATE_SUCCEEDED, done.error.message
        assert f"pipeline job after: {IN_STANDBY}" in service.service_log()
        ours = set(processes_with(str(service.state_dir)))
        assert ours and not ours & set(processes_with("vtp.engine.fork_server"))
    finally:
        service.stop()


def test_a_service_that_does_not_prepare_runs_starts_a_worker_per_run(tmp_path, tiny_yaml):
    service = LocalService(tmp_path / "state").start()
    try:
        client = pipeline_client(service.url)
        for name, a in (("first", 1), ("second", 2)):
            done = wait_for_pipeline(client, run_tiny(service, tiny_yaml, name, a=a))
            assert done.state == PipelineState.PIPELINE_STATE_SUCCEEDED, done.error.message
            # A standby would be spawned as the run is settled, before its end is readable.
            assert standby_processes(service) == []
        assert IN_STANDBY not in service.service_log()
    finally:
        service.stop()


def test_a_standby_that_reads_end_of_file_exits_having_started_nothing(tmp_path):
    standby = Standby(ServiceConfig(tmp_path / "state", port=0, project_dir=tmp_path))
    carrying = f"{TOKEN_ENV}={standby.token}"
    # its fork server started (nothing is cached yet): the worker and it carry the token
    wait_until(lambda: len(processes_with(carrying)) >= 3, 60, "the standby's fork server")
    standby.close()  # as a service that stops, or dies, closes the pipe
    assert standby.process.wait(timeout=60) == 0  # it ended on its own, not killed
    assert processes_with(carrying) == []
    assert not (tmp_path / "state" / "pipelines").exists()  # no run was started


def test_a_standby_takes_only_settings_read_when_used(tmp_path):
    config = ServiceConfig(tmp_path / "state", port=0, project_dir=tmp_path)
    standby = Standby(config)
    try:
        env = {k: v for k, v in standby.env.items() if k != TOKEN_ENV}
        late = {"VTP_LOCAL_ENDPOINT": "http://127.0.0.1:1", "VTP_PIPELINE_RUN_DIR": "/r"}
        assert standby.overlay({**env, **late}) == late
        moved = {**env, "PYTHONPATH": "/elsewhere"}  # read at start-up: too late to change
        assert standby.overlay(moved) == ("its environment differs from the run's in PYTHONPATH")
        lost = {k: v for k, v in env.items() if k != "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH"}
        assert "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH" in str(standby.overlay(lost))
    finally:
        standby.kill()
    assert processes_with(f"{TOKEN_ENV}={standby.token}") == []
