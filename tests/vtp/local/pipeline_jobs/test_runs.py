"""pipelineJobs on the local service, driven by the aiplatform PipelineServiceClient (REST).

The tiny pipeline runs for real under kfp.local in the service's worker process; its last step
writes what it computed, and the service URL it was handed, into the service's storage root.
"""

import json
import os
from datetime import datetime
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1 import JobState, PipelineJob, PipelineState, PipelineTaskDetail
from google.protobuf.field_mask_pb2 import FieldMask

from tests.fixtures import LocalService, wait_for_state, wait_until
from tests.pipelines.tiny_pipeline import (
    compile_to,
    pipeline_client,
    sleeping_job_pipeline,
    tiny_job,
    wait_for_pipeline,
)
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from tests.vtp.local.pipeline_jobs.test_standby import processes_with, run_token
from vtp.local.runtime.process import TOKEN_ENV

PARENT = "projects/local/locations/us-central1"


@pytest.fixture(scope="module")
def client(local_service: LocalService):
    return pipeline_client(local_service.url)


def marker(service: LocalService, name: str) -> Path:
    return service.gcs_root / "vtp-test" / "markers" / name


def test_run_succeeds_and_its_components_call_back(local_service, client, tiny_yaml):
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/ok", a=3, b=4)
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job, pipeline_job_id="ok-1")
    assert created.name == f"{PARENT}/pipelineJobs/ok-1"
    assert created.state in (
        PipelineState.PIPELINE_STATE_QUEUED,
        PipelineState.PIPELINE_STATE_PENDING,
    )
    done = wait_for_pipeline(client, created.name)
    assert done.state == PipelineState.PIPELINE_STATE_SUCCEEDED, done.error.message
    assert done.create_time <= done.start_time <= done.end_time
    assert json.loads(marker(local_service, "ok").read_text()) == {
        "value": 7,
        "endpoint": local_service.url,
    }
    outputs = local_service.gcs_root / "vtp-test" / "root"
    assert any(outputs.rglob("executor_output.json"))  # kfp.local wrote under the pipeline root
    logs = local_service.session().get(f"{local_service.url}/v1/{created.name}:logs", timeout=10)
    logs = logs.json()
    assert logs["pipelineState"] == "PIPELINE_STATE_SUCCEEDED"
    assert "pipeline run succeeded" in logs["text"]


def test_the_sdk_follows_a_run(local_service, client, tiny_yaml, monkeypatch):
    # PipelineJob.submit() would work too, after its Cloud Storage and Resource Manager checks
    # of the pipeline root's bucket time out offline (minutes): create with the GAPIC client.
    from google.cloud import aiplatform
    from google.cloud.aiplatform import initializer, pipeline_jobs

    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/sdk", b=10)
    job.display_name = "sdk-run"
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job)
    monkeypatch.setattr(pipeline_jobs, "_JOB_WAIT_TIME", 0.2)  # the SDK polls every 5 s
    settings = initializer.global_config
    for name in ("_project", "_location", "_api_endpoint", "_api_transport", "_credentials"):
        monkeypatch.setattr(settings, name, getattr(settings, name))  # restored after the test
    local_service.init_sdk()
    followed = aiplatform.PipelineJob.get(created.name)
    followed.wait()
    assert followed.state == PipelineState.PIPELINE_STATE_SUCCEEDED
    listed = aiplatform.PipelineJob.list(filter='display_name="sdk-run"')
    assert [j.resource_name for j in listed] == [created.name]
    assert json.loads(marker(local_service, "sdk").read_text())["value"] == 11


def test_a_failed_task_fails_the_run_with_the_task_named(local_service, client, tiny_yaml):
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/failed", fail=True)
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job)
    done = wait_for_pipeline(client, created.name)
    assert done.state == PipelineState.PIPELINE_STATE_FAILED
    assert done.error.code == 9
    assert "add" in done.error.message
    assert "RuntimeError: asked to fail" in done.error.message  # the cause, not just the task
    assert not marker(local_service, "failed").exists()


def test_cancel_stops_the_running_task_and_its_processes(local_service, client, tiny_yaml):
    root = "gs://vtp-test/cancelled-root"
    job = tiny_job(tiny_yaml, root, marker_uri="gs://vtp-test/markers/cancelled", sleep_seconds=120)
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job)
    wait_for_pipeline(client, created.name, (PipelineState.PIPELINE_STATE_RUNNING,))
    # Every process of the run carries its token (the run may be in the service's standby
    # worker, whose environment was set before it knew the run's directory).
    carrying = f"{TOKEN_ENV}={run_token(local_service, created.name)}"
    assert processes_with(carrying)
    with pytest.raises(exceptions.BadRequest, match="cancel it and wait"):
        client.delete_pipeline_job(name=created.name)
    client.cancel_pipeline_job(name=created.name)
    done = wait_for_pipeline(client, created.name, timeout=30)
    assert done.state == PipelineState.PIPELINE_STATE_CANCELLED
    run_dir = local_service.state_dir / "pipelines" / created.name.rsplit("/", 1)[-1]
    task_outputs = local_service.gcs_root / "vtp-test" / "cancelled-root"
    assert processes_mentioning(str(task_outputs)) == []  # the sleeping task too
    assert processes_mentioning(str(run_dir)) == []
    assert processes_with(carrying) == []
    assert not marker(local_service, "cancelled").exists()
    with pytest.raises(exceptions.BadRequest, match="already in state"):
        client.cancel_pipeline_job(name=created.name)


def test_list_filters_and_delete_removes(local_service, client, tiny_yaml):
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/listed")
    job.display_name = "listed-run"
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job)
    query = {"parent": PARENT, "filter": 'display_name="listed-run"'}
    listed = list(client.list_pipeline_jobs(request=query))
    assert [j.name for j in listed] == [created.name]
    wait_for_pipeline(client, created.name)
    client.delete_pipeline_job(name=created.name).result(timeout=30)
    with pytest.raises(exceptions.NotFound):
        client.get_pipeline_job(name=created.name)


def request_body(template: Path, **change: object) -> dict:
    body = json.loads(PipelineJob.to_json(tiny_job(template, marker_uri="gs://vtp-test/m/x")))
    values = body["runtimeConfig"]["parameterValues"]
    for key, value in change.items():
        if key == "drop":
            values.pop(value)
        elif key in ("a", "nope", "sleep_seconds"):
            values[key] = value
        else:
            body[key] = value
    return body


BAD_REQUESTS = {
    "unknown field": ({"pipelineSpecs": {}}, "pipelineSpecs"),
    "missing parameter": ({"drop": "marker_uri"}, "parameterValues['marker_uri'] is required"),
    "unknown parameter": ({"nope": 1}, "parameterValues['nope']: the pipeline has no such"),
    "fractional integer": ({"a": 1.5}, "parameterValues['a']: expected a whole number"),
    "string for a number": ({"sleep_seconds": "x"}, "expected a NUMBER_DOUBLE value"),
    "no spec": ({"pipelineSpec": {}}, "pipelineJob.pipelineSpec is required"),
    "local pipeline root": (
        {"runtimeConfig": {"gcsOutputDirectory": "/tmp/root"}},
        "gcsOutputDirectory must be a Cloud Storage URI",
    ),
}


@pytest.mark.parametrize("case", BAD_REQUESTS, ids=list(BAD_REQUESTS))
def test_bad_requests_are_refused_before_anything_runs(local_service, tiny_yaml, case):
    change, message = BAD_REQUESTS[case]
    before = len(list((local_service.state_dir / "pipelines").glob("*")))
    response = local_service.session().post(
        f"{local_service.url}/v1/{PARENT}/pipelineJobs",
        json=request_body(tiny_yaml, **change),
        timeout=10,
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["status"] == "INVALID_ARGUMENT"
    assert message in error["message"]
    assert len(list((local_service.state_dir / "pipelines").glob("*"))) == before


def test_the_logs_long_poll_answers_with_new_lines_and_with_the_end(
    local_service, client, tiny_yaml
):
    """`:logs?timeout=` (what `vtp run` follows a run with) waits for text past the offset or
    the run's end, then answers with both; a bad timeout is a 400 naming it."""
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/poll", sleep_seconds=2)
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job)
    url = f"{local_service.url}/v1/{created.name}:logs"
    session = local_service.session()
    first = session.get(url, params={"offset": 0, "timeout": "60s"}, timeout=90).json()
    assert first["text"]  # waited for the run's lines (it prints none while its task sleeps)
    text, answer = first["text"], first
    while answer["pipelineState"] != "PIPELINE_STATE_SUCCEEDED":
        params = {"offset": answer["nextOffset"], "timeout": "60s"}
        answer = session.get(url, params=params, timeout=90).json()
        assert answer["text"] or answer["pipelineState"] == "PIPELINE_STATE_SUCCEEDED"
        text += answer["text"]
    assert text.endswith("pipeline run succeeded\n")  # all of it, once it says it has ended
    for bad in ("soon", "61s", "-1s"):
        refused = session.get(url, params={"timeout": bad}, timeout=10)
        assert refused.status_code == 400
        assert '"timeout"' in refused.json()["error"]["message"]


def test_the_logs_long_poll_answers_when_a_cancelled_run_ends(local_service, client, tiny_yaml):
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/poll-cancel", sleep_seconds=120)
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job)
    wait_until(lambda: marker(local_service, "poll-cancel.started").exists(), 60, "the task")
    client.cancel_pipeline_job(name=created.name)
    url = f"{local_service.url}/v1/{created.name}:logs"
    answer, offset = {}, 0
    for _ in range(20):  # each answer: new lines (the cancel's) or the end
        params = {"offset": offset, "timeout": "60s"}
        answer = local_service.session().get(url, params=params, timeout=90).json()
        assert answer["text"] or answer["pipelineState"] == "PIPELINE_STATE_CANCELLED"
        offset = answer["nextOffset"]
        if answer["pipelineState"] == "PIPELINE_STATE_CANCELLED":
            break
    assert answer["pipelineState"] == "PIPELINE_STATE_CANCELLED"


def test_the_same_pipeline_submitted_in_a_loop_gets_a_new_default_id_each_time(client, tiny_yaml):
    """The SDK names a job `<pipeline>-<the client's second>`: three creates in a row (as
    Vertex's samples compare runs) must not meet on one id, however fast the service answers."""
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/loop")
    names = []
    for _ in range(3):
        job_id = (
            f"tiny-{datetime.now().strftime('%Y%m%d%H%M%S')}"  # what aiplatform.PipelineJob does
        )
        names.append(
            client.create_pipeline_job(parent=PARENT, pipeline_job=job, pipeline_job_id=job_id).name
        )
    assert len(set(names)) == 3, names
    for name in names:
        wait_for_pipeline(client, name)


def test_job_ids_are_checked_and_unique(local_service, client, tiny_yaml):
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/dup")
    with pytest.raises(exceptions.BadRequest, match="pipelineJobId 'Bad_ID' is invalid"):
        client.create_pipeline_job(parent=PARENT, pipeline_job=job, pipeline_job_id="Bad_ID")
    client.create_pipeline_job(parent=PARENT, pipeline_job=job, pipeline_job_id="dup")
    with pytest.raises(exceptions.Conflict, match="already exists"):
        client.create_pipeline_job(parent=PARENT, pipeline_job=job, pipeline_job_id="dup")
    wait_for_pipeline(client, f"{PARENT}/pipelineJobs/dup")


def start_sleeping_job(service: LocalService, tmp_path: Path) -> dict[str, str]:
    """A run whose custom_job task has started its (sleeping) CustomJob: {"run", "job"}."""
    template = compile_to(tmp_path / "sleeping.yaml", sleeping_job_pipeline)
    job = tiny_job(template, project="local", output_root="gs://vtp-test/sleeping")
    runs, jobs = pipeline_client(service.url), service.client()
    created = runs.create_pipeline_job(parent=PARENT, pipeline_job=job)

    def sleeper_running():
        found = [j for j in jobs.list_custom_jobs(parent=PARENT) if j.display_name == "sleeper"]
        running = [j for j in found if j.state == JobState.JOB_STATE_RUNNING]
        return running if len(found) == 1 and running else None

    (custom_job,) = wait_until(sleeper_running, 60, "the task's CustomJob to run")
    run_root = service.gcs_root / "vtp-test" / "root" / created.name.rsplit("/", 1)[-1]
    wait_until(lambda: any(run_root.rglob("gcp_resources")), 30, "the task's gcp_resources")
    return {"run": created.name, "job": custom_job.name}


def test_cancelling_the_run_cancels_the_custom_job_its_task_started(local_service, tmp_path):
    started = start_sleeping_job(local_service, tmp_path)
    runs = pipeline_client(local_service.url)
    runs.cancel_pipeline_job(name=started["run"])
    done = wait_for_pipeline(runs, started["run"])
    assert done.state == PipelineState.PIPELINE_STATE_CANCELLED
    ended = wait_for_state(local_service.client(), started["job"])
    assert ended.state == JobState.JOB_STATE_CANCELLED


def start_sleeping_run(service: LocalService, tiny_yaml: Path, name: str) -> tuple[str, str]:
    """A running tiny pipeline whose task sleeps; its name and the path its task mentions."""
    client = pipeline_client(service.url)
    root = f"gs://vtp-test/{name}-root"
    job = tiny_job(tiny_yaml, root, marker_uri=f"gs://vtp-test/m/{name}", sleep_seconds=120)
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job)
    wait_for_pipeline(client, created.name, (PipelineState.PIPELINE_STATE_RUNNING,))
    started = service.gcs_root / "vtp-test" / "m" / f"{name}.started"
    wait_until(started.exists, 30, "the task to start")
    # Every process of the run (worker, fork server, the task forked from it) has the run's
    # directory in its environment (a worker started for the run, as a service's first run has;
    # a standby worker has only the run's token); a task in a fresh interpreter also names its
    # outputs in its command line.
    return created.name, str(service.state_dir / "pipelines" / created.name.rsplit("/", 1)[1])


def test_runs_in_flight_when_the_service_stops_or_dies_fail_on_restart(tmp_path, tiny_yaml):
    service = LocalService(tmp_path / "state").start()
    try:
        stopped, stopped_task = start_sleeping_run(service, tiny_yaml, "stopped")
        service.stop()  # as Ctrl-C: nothing of the run outlives the service
        assert processes_mentioning(stopped_task) == []
        service.start()
        orphan, orphan_task = start_sleeping_run(service, tiny_yaml, "orphan")
        custom = start_sleeping_job(service, tmp_path)
        service.kill()  # SIGKILL: the service's watchdog kills what it started
        wait_until(lambda: not processes_mentioning(orphan_task), 15, "no orphaned task")
        service.start()  # finds the runs it lost
        assert processes_mentioning(orphan_task) == []
        client = pipeline_client(service.url)
        session = service.session()
        for name in (stopped, orphan, custom["run"]):
            job = client.get_pipeline_job(name=name)
            assert job.state == PipelineState.PIPELINE_STATE_FAILED
            assert "stopped while this pipeline ran" in job.error.message
            # No task of it runs: those it stopped are CANCELLED, in its details and in ML
            # Metadata alike.
            tasks = {t.task_name: t for t in job.job_detail.task_details}
            assert tasks, name
            assert not [t.task_name for t in tasks.values() if t.state in UNFINISHED_TASK], name
            states = {t.task_name: t.state.name for t in tasks.values()}
            assert any(t.state == TaskState.CANCELLED for t in tasks.values()), (name, states)
            for task in tasks.values():
                execution = session.get(f"{service.url}/v1/{task.execution.name}", timeout=30)
                assert execution.json()["state"] not in ("NEW", "RUNNING"), execution.text
        # The service queued the task's CustomJob again; with no run to watch it, it is cancelled.
        ended = wait_for_state(service.client(), custom["job"])
        assert ended.state == JobState.JOB_STATE_CANCELLED
    finally:
        service.stop()


TaskState = PipelineTaskDetail.State
UNFINISHED_TASK = (TaskState.PENDING, TaskState.RUNNING)


def processes_mentioning(text: str) -> list[int]:
    """Pids of live processes whose command line, working directory or environment contains
    `text` (every process of a run has the run's directory in its environment)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            places = [
                (entry / "cmdline").read_text(errors="replace"),
                os.readlink(entry / "cwd"),
                (entry / "environ").read_text(errors="replace"),
            ]
        except OSError:
            continue
        if any(text in place for place in places):
            found.append(int(entry.name))
    return found


def test_a_run_acts_as_the_default_service_account_and_lists_take_a_read_mask(
    local_service, client, tiny_yaml
):
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/masked")
    job.display_name = "masked-run"
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job)
    assert created.service_account == "100000000001-compute@developer.gserviceaccount.com"
    query = {"parent": PARENT, "filter": 'display_name="masked-run"'}
    paths = ["name", "display_name", "pipeline_spec.pipeline_info", "job_detail.pipeline_context"]
    masked = {**query, "read_mask": FieldMask(paths=paths)}  # the SDK's simple view
    [full] = client.list_pipeline_jobs(request=query)
    [simple] = client.list_pipeline_jobs(request=masked)
    assert full.service_account and full.pipeline_spec["root"]
    assert (simple.name, simple.display_name) == (created.name, "masked-run")
    assert not simple.service_account and not simple.runtime_config.gcs_output_directory
    assert dict(simple.pipeline_spec) == {"pipelineInfo": dict(full.pipeline_spec["pipelineInfo"])}
    wait_for_pipeline(client, created.name)


def test_a_worker_that_dies_says_why_in_the_runs_error(local_service, client, tiny_yaml):
    # The worker cannot write its result (a folder stands where the file goes): it dies on the
    # OSError, and the run's error ends with that exception's line, not only the run's log.
    run_dir = local_service.state_dir / "pipelines" / "dies-1"
    (run_dir / "result.json.tmp").mkdir(parents=True)
    job = tiny_job(tiny_yaml, marker_uri="gs://vtp-test/markers/dies", a=1, b=2)
    created = client.create_pipeline_job(parent=PARENT, pipeline_job=job, pipeline_job_id="dies-1")
    done = wait_for_pipeline(client, created.name)
    assert done.state == PipelineState.PIPELINE_STATE_FAILED
    message = done.error.message
    assert message.startswith("The pipeline run process exited with status 1 and no result: ")
    assert message.endswith(f"IsADirectoryError: [Errno 21] Is a directory: "
                            f"'{run_dir / 'result.json.tmp'}'"), message  # fmt: skip
