"""Vertex-style schedules on the local service, with a test clock so a cron is due at once.

The service runs in this process so that the test can set the scheduler's clock; everything else
is real: the schedules are created through the aiplatform ScheduleServiceClient (REST) from the
request `vtp schedule create` builds, and each due time starts a real pipeline run.
"""

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import requests
from google.api_core import exceptions
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform_v1 import PipelineState
from google.oauth2.credentials import Credentials
from google.protobuf.field_mask_pb2 import FieldMask

from tests.fixtures import PROJECT, REGION, wait_until
from tests.pipelines.tiny_pipeline import pipeline_client, wait_for_pipeline
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from vtp.local.app import Running, running
from vtp.local.base.config import ServiceConfig
from vtp.vertex.scheduling import Cadence, Limits, vertex_schedule

PARENT = f"projects/{PROJECT}/locations/{REGION}"
State = aiplatform_v1.Schedule.State
T0 = datetime(2030, 1, 1, 10, 0, 30, tzinfo=UTC)


class Clock:
    """A clock that only moves when the test says so."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    state = tmp_path_factory.mktemp("schedules")
    config = ServiceConfig(state, port=0, poll_interval=0.05, grace_period=2)
    with running(config) as served:
        yield served


@pytest.fixture
def clock(served: Running) -> Clock:
    clock = Clock(T0)
    served.resources.schedules.clock = clock
    return clock


@pytest.fixture(scope="module")
def client(served: Running) -> aiplatform_v1.ScheduleServiceClient:
    return aiplatform_v1.ScheduleServiceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=served.url),
        credentials=Credentials(served.token),
    )


def schedule_request(template, name: str, limits: Limits, **params: object):
    job = aiplatform.PipelineJob(
        display_name=name,
        template_path=str(template),
        pipeline_root="gs://vtp-test/scheduled",
        parameter_values={"marker_uri": f"gs://vtp-test/markers/{name}", **params},
        project=PROJECT,
        location=REGION,
        credentials=AnonymousCredentials(),
    )
    return vertex_schedule(job, name, Cadence("* * * * *", "Europe/Paris"), limits)


def test_a_schedule_fires_on_its_cron_until_max_run_count(served, clock, client, tiny_yaml):
    request = schedule_request(tiny_yaml, "every-minute", Limits(max_run_count=2))
    created = client.create_schedule(parent=PARENT, schedule=request)
    assert created.state == State.ACTIVE
    assert created.next_run_time == datetime(2030, 1, 1, 10, 1, tzinfo=UTC)
    assert served.resources.schedules.tick() == []  # not due yet

    clock.now = datetime(2030, 1, 1, 10, 1, 5, tzinfo=UTC)  # the ticker thread sees it
    fired = wait_until(lambda: started(client, created.name, 1), 10, "the first run")
    run = fired.last_scheduled_run_response
    assert run.scheduled_run_time == datetime(2030, 1, 1, 10, 1, tzinfo=UTC)
    assert fired.next_run_time == datetime(2030, 1, 1, 10, 2, tzinfo=UTC)
    pipelines = pipeline_client(served.url)
    job = wait_for_pipeline(pipelines, run.run_response)
    assert job.state == PipelineState.PIPELINE_STATE_SUCCEEDED, job.error.message
    assert (job.schedule_name, job.display_name) == (created.name, "every-minute")
    marker = served.app.config.storage_root / "vtp-test" / "markers" / "every-minute"
    assert json.loads(marker.read_text())["value"] == 3

    clock.now = datetime(2030, 1, 1, 10, 2, tzinfo=UTC)
    done = wait_until(lambda: started(client, created.name, 2), 10, "the second run")
    assert done.state == State.COMPLETED
    assert "next_run_time" not in done
    wait_for_pipeline(pipelines, done.last_scheduled_run_response.run_response)


@pytest.mark.parametrize("allow_queueing", [False, True], ids=["skip", "queue"])
def test_max_concurrent_run_count_skips_or_queues(served, clock, client, tiny_yaml, allow_queueing):
    name = f"busy-{allow_queueing}".lower()
    request = schedule_request(
        tiny_yaml, name, Limits(allow_queueing=allow_queueing), sleep_seconds=120
    )
    created = client.create_schedule(parent=PARENT, schedule=request)
    scheduler = served.resources.schedules
    clock.now = datetime(2030, 1, 1, 10, 1, tzinfo=UTC)
    wait_until(lambda: started(client, created.name, 1), 10, "the first run")
    first = client.get_schedule(name=created.name).last_scheduled_run_response.run_response

    clock.now = datetime(2030, 1, 1, 10, 2, tzinfo=UTC)
    scheduler.tick()
    busy = client.get_schedule(name=created.name)
    assert busy.started_run_count == 1
    if allow_queueing:  # still due: it starts once the first run ends
        assert busy.next_run_time == datetime(2030, 1, 1, 10, 2, tzinfo=UTC)
    else:
        assert busy.last_scheduled_run_response.run_response.startswith(
            "Skipped: maxConcurrentRunCount (1)"
        )
        assert busy.next_run_time == datetime(2030, 1, 1, 10, 3, tzinfo=UTC)

    pipelines = pipeline_client(served.url)
    pipelines.cancel_pipeline_job(name=first)
    wait_for_pipeline(pipelines, first)
    scheduler.tick()
    assert client.get_schedule(name=created.name).started_run_count == (2 if allow_queueing else 1)
    client.pause_schedule(name=created.name)
    second = client.get_schedule(name=created.name).last_scheduled_run_response.run_response
    if allow_queueing:
        pipelines.cancel_pipeline_job(name=second)


def test_pause_and_resume_with_and_without_catch_up(served, clock, client, tiny_yaml):
    created = client.create_schedule(
        parent=PARENT, schedule=schedule_request(tiny_yaml, "paused", Limits())
    )
    client.pause_schedule(name=created.name)
    paused = client.get_schedule(name=created.name)
    assert (paused.state, paused.last_pause_time) == (State.PAUSED, T0)
    assert "next_run_time" not in paused

    clock.now = T0 + timedelta(minutes=10)
    assert served.resources.schedules.tick() == []
    client.resume_schedule(name=created.name)
    resumed = client.get_schedule(name=created.name)
    assert resumed.state == State.ACTIVE
    assert resumed.next_run_time == datetime(2030, 1, 1, 10, 11, tzinfo=UTC)

    client.pause_schedule(name=created.name)
    client.resume_schedule(request={"name": created.name, "catch_up": True})
    caught_up = client.get_schedule(name=created.name)
    assert caught_up.catch_up
    assert caught_up.next_run_time == datetime(2030, 1, 1, 10, 11, tzinfo=UTC)  # paused at 10:10:30
    with pytest.raises(exceptions.BadRequest, match="it is ACTIVE, not PAUSED"):
        client.resume_schedule(name=created.name)
    client.delete_schedule(name=created.name).result(timeout=10)
    assert created.name not in [s.name for s in client.list_schedules(parent=PARENT)]


def bad_body(template, change: dict) -> dict:
    request = schedule_request(template, "bad", Limits())
    body = json.loads(aiplatform_v1.Schedule.to_json(request))
    job = body["createPipelineJobRequest"]["pipelineJob"]
    for key, value in change.items():
        if key == "params":
            job["runtimeConfig"]["parameterValues"] = value
        elif key == "parent":
            body["createPipelineJobRequest"]["parent"] = value
        else:
            body[key] = value
    return body


BAD = {
    "six-field cron": ({"cron": "TZ=UTC 0 0 3 * * *"}, "schedule.cron: '0 0 3 * * *' has 6"),
    "unknown zone": ({"cron": "TZ=Mars/Olympus 0 3 * * *"}, "not an IANA time zone"),
    "never fires": ({"cron": "TZ=UTC 0 0 30 2 *"}, "schedule.cron: '0 0 30 2 *' never fires"),
    "no time left": ({"startTime": "9999-12-31T23:59:30Z"}, "schedule.startTime: "),
    "no concurrency": ({"maxConcurrentRunCount": "0"}, "maxConcurrentRunCount is required"),
    "missing parameter": ({"params": {}}, "parameterValues['marker_uri'] is required"),
    "other parent": ({"parent": "projects/x/locations/y"}, "parent must be projects/local"),
    "unknown field": ({"cronSchedule": "0 3 * * *"}, "cronSchedule"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_schedules_are_refused_at_create(served, client, tiny_yaml, case):
    change, message = BAD[case]
    response = requests.post(
        f"{served.url}/v1/{PARENT}/schedules",
        json=bad_body(tiny_yaml, change),
        headers={"Authorization": f"Bearer {served.token}"},
        timeout=10,
    )
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]
    names = [s.display_name for s in client.list_schedules(parent=PARENT)]
    assert "bad" not in names


def started(client, name: str, count: int):
    schedule = client.get_schedule(name=name)
    return schedule if schedule.started_run_count >= count else None


def test_start_and_end_times_bound_the_runs(served, clock, client, tiny_yaml):
    past = Limits(start_time="2020-01-01T00:00:00Z")  # no backfill: the first run is after now
    early = client.create_schedule(parent=PARENT, schedule=schedule_request(tiny_yaml, "p", past))
    assert early.next_run_time == datetime(2030, 1, 1, 10, 1, tzinfo=UTC)
    later = Limits(start_time="2030-01-02T08:00:00Z", end_time="2030-01-02T09:00:00Z")
    late = client.create_schedule(parent=PARENT, schedule=schedule_request(tiny_yaml, "l", later))
    assert late.next_run_time == datetime(2030, 1, 2, 8, 0, tzinfo=UTC)
    over = Limits(start_time="2030-01-01T10:00:40Z", end_time="2030-01-01T10:00:50Z")
    done = client.create_schedule(parent=PARENT, schedule=schedule_request(tiny_yaml, "o", over))
    assert done.state == State.COMPLETED  # no cron time falls between start and end
    for schedule in (early, late, done):
        client.delete_schedule(name=schedule.name).result(timeout=10)


def test_update_changes_the_masked_fields_and_the_next_run(served, clock, client, tiny_yaml):
    created = client.create_schedule(
        parent=PARENT, schedule=schedule_request(tiny_yaml, "updated", Limits(max_run_count=5))
    )
    assert created.next_run_time == datetime(2030, 1, 1, 10, 1, tzinfo=UTC)
    change = aiplatform_v1.Schedule(cron="TZ=UTC 0 12 * * *", display_name="ignored")
    updated = client.update_schedule(
        schedule=_named(change, created), update_mask=FieldMask(paths=["cron"])
    )
    assert (updated.cron, updated.display_name) == ("TZ=UTC 0 12 * * *", "updated")
    assert updated.next_run_time == datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    client.pause_schedule(name=created.name)
    paused = client.update_schedule(
        schedule=_named(aiplatform_v1.Schedule(max_run_count=2), created),
        update_mask=FieldMask(paths=["max_run_count"]),
    )
    assert (paused.state, paused.max_run_count) == (State.PAUSED, 2)
    assert "next_run_time" not in paused
    for paths, message in [
        ([], "updateMask is required"),
        (["state"], "state cannot be updated"),
        (["cron"], "schedule.cron is required"),  # the mask clears it: refused, nothing changed
    ]:
        with pytest.raises(exceptions.BadRequest, match=message):
            client.update_schedule(
                schedule=_named(aiplatform_v1.Schedule(), created),
                update_mask=FieldMask(paths=paths),
            )
    never = aiplatform_v1.Schedule(cron="TZ=UTC 0 0 30 2 *")  # valid fields, no such day
    with pytest.raises(exceptions.BadRequest, match=r"schedule\.cron: '0 0 30 2 \*' never fires"):
        client.update_schedule(
            schedule=_named(never, created), update_mask=FieldMask(paths=["cron"])
        )
    assert client.get_schedule(name=created.name).cron == "TZ=UTC 0 12 * * *"
    client.delete_schedule(name=created.name).result(timeout=10)


def _named(schedule: aiplatform_v1.Schedule, created: aiplatform_v1.Schedule):
    schedule.name = created.name
    return schedule
