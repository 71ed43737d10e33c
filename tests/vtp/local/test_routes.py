"""The REST routes by hand: error shapes, paging and filters, operations, logs, preemption."""

import json
import os

import pytest
import requests

from tests.fixtures import State, wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job, scripted_pool, starts

JOBS = "/v1/projects/local/locations/us-central1/customJobs"


@pytest.fixture(scope="module")
def http(local_service):
    session = local_service.session()
    session.headers["Content-Type"] = "application/json"  # as every REST client sends

    def call(method: str, path: str, **kwargs) -> requests.Response:
        return session.request(method, local_service.url + path, timeout=30, **kwargs)

    return call


def body(job) -> str:
    return type(job).to_json(job)


def error(response: requests.Response) -> tuple[int, str, str]:
    payload = response.json()["error"]
    assert payload["code"] == response.status_code
    return response.status_code, payload["status"], payload["message"]


@pytest.fixture(scope="module")
def finished(http, local_service, tmp_path_factory):
    """Three jobs that ran to the end, with labels and display names to filter on."""
    record = tmp_path_factory.mktemp("record")
    names = []
    for display, team in (("alpha", "a"), ("alpine", "b"), ("beta", "a")):
        job = custom_job(scripted_pool(record), display_name=display)
        job.labels["team"] = team
        names.append(http("POST", JOBS, data=body(job)).json()["name"])
    client = local_service.client()
    return [wait_for_state(client, name) for name in names]


def test_unknown_field_is_invalid_argument_in_googles_shape(http):
    response = http("POST", JOBS, data=json.dumps({"displayName": "x", "bogus": 1}))
    status, code, message = error(response)
    assert (status, code) == (400, "INVALID_ARGUMENT") and "bogus" in message


@pytest.mark.parametrize(
    ("job", "named"),
    [
        ({"jobSpec": {"workerPoolSpecs": [{}]}}, "displayName is required"),
        ({"displayName": "x", "jobSpec": {}}, "workerPoolSpecs must not be empty"),
    ],
)
def test_invalid_jobs_are_refused_naming_the_field(http, job, named):
    status, code, message = error(http("POST", JOBS, data=json.dumps(job)))
    assert (status, code) == (400, "INVALID_ARGUMENT") and named in message


def test_unknown_job_and_route_are_not_found(http):
    assert error(http("GET", JOBS + "/123"))[:2] == (404, "NOT_FOUND")
    assert error(http("GET", "/v1/nothing/here"))[:2] == (404, "NOT_FOUND")


def test_list_pages_in_creation_order(http, finished):
    first = http("GET", JOBS, params={"pageSize": "2"}).json()
    rest = http("GET", JOBS, params={"pageSize": "2", "pageToken": first["nextPageToken"]}).json()
    listed = [j["name"] for j in first["customJobs"] + rest["customJobs"]]
    assert listed[-3:] == [j.name for j in finished] and "nextPageToken" not in rest
    assert error(http("GET", JOBS, params={"pageToken": "garbage"}))[:2] == (
        400,
        "INVALID_ARGUMENT",
    )


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        ('display_name="alp*"', ["alpha", "alpine"]),
        ("labels.team=a AND state=JOB_STATE_SUCCEEDED", ["alpha", "beta"]),
        ('displayName="beta" OR labels.team="b"', ["alpine", "beta"]),
        ("NOT labels.team:* OR (labels.team=b)", ["alpine"]),
        ('create_time>"2000-01-01T00:00:00Z" AND display_name!=alpha', ["alpine", "beta"]),
    ],
)
def test_list_filters(http, finished, filter, expected):
    jobs = http("GET", JOBS, params={"filter": filter}).json().get("customJobs", [])
    assert [j["displayName"] for j in jobs if j["name"] in {f.name for f in finished}] == expected


def test_a_bad_filter_is_invalid_argument(http):
    status, code, message = error(http("GET", JOBS, params={"filter": "state = ("}))
    assert (status, code) == (400, "INVALID_ARGUMENT") and "Invalid filter" in message


def test_enums_are_integers_when_the_client_asks(http, finished):
    path = f"/v1/{finished[0].name}"
    assert http("GET", path).json()["state"] == "JOB_STATE_SUCCEEDED"
    as_ints = http("GET", path, params={"$alt": "json;enum-encoding=int"}).json()
    assert as_ints["state"] == State.JOB_STATE_SUCCEEDED.value


def test_v1beta1_and_wildcard_names_reach_the_same_job(http, finished):
    job_id = finished[0].name.rsplit("/", 1)[-1]
    path = f"/v1beta1/projects/-/locations/-/customJobs/{job_id}"
    assert http("GET", path).json()["name"] == finished[0].name


def test_cancel_of_an_ended_job_is_a_failed_precondition(http, finished):
    status, code, _ = error(http("POST", f"/v1/{finished[0].name}:cancel"))
    assert (status, code) == (400, "FAILED_PRECONDITION")


def test_delete_returns_a_done_operation_that_can_be_polled(http, local_service, tmp_path):
    running = http("POST", JOBS, data=body(custom_job(scripted_pool(tmp_path, "--sleep", "60"))))
    name = running.json()["name"]
    assert error(http("DELETE", f"/v1/{name}"))[:2] == (400, "FAILED_PRECONDITION")
    http("POST", f"/v1/{name}:cancel")
    wait_for_state(local_service.client(), name)

    operation = http("DELETE", f"/v1/{name}").json()
    assert operation["done"] and operation["name"].startswith("projects/local/locations/")
    assert http("GET", f"/v1/{operation['name']}").json() == operation
    assert http("GET", f"/ui/{operation['name']}").json() == operation  # where GAPIC asks first
    assert error(http("GET", f"/v1/{name}"))[:2] == (404, "NOT_FOUND")
    assert not (local_service.state_dir / "jobs" / name.rsplit("/", 1)[-1]).exists()


def test_logs_raw_and_as_cloud_logging_entries(http, local_service, tmp_path):
    primary = scripted_pool(tmp_path, "--wait-starts", "workerpool1-0=1")
    name = http("POST", JOBS, data=body(custom_job(primary, scripted_pool(tmp_path)))).json()[
        "name"
    ]
    wait_for_state(local_service.client(), name)

    raw = http("GET", f"/v1/{name}:logs", params={"replica": "workerpool1-0"}).json()
    (entry,) = raw["entries"]
    assert "workerpool1-0 started (start 1)" in entry["text"]
    assert entry["nextOffset"] == len(entry["text"].encode())
    job_id = name.rsplit("/", 1)[-1]
    query = {
        "resourceNames": ["projects/local"],
        "filter": f'resource.type="ml_job" AND resource.labels.job_id="{job_id}" '
        'AND resource.labels.task_name="workerpool0-0"',
        "orderBy": "timestamp asc",
        "pageSize": 1,
    }
    first = http("POST", "/v2/entries:list", json=query).json()
    rest = http("POST", "/v2/entries:list", json={**query, "pageToken": first["nextPageToken"]})
    entries = first["entries"] + rest.json()["entries"]
    texts = [e["textPayload"] for e in entries]
    assert "workerpool0-0 started (start 1)" in texts
    assert {e["logName"] for e in entries} == {"projects/local/logs/workerpool0-0"}
    last = entries[-2]  # resume after it the way gcloud stream-logs does
    resume = {
        **query,
        "filter": query["filter"] + f' AND ((timestamp="{last["timestamp"]}" AND '
        f'insertId>"{last["insertId"]}") OR timestamp>"{last["timestamp"]}")',
    }
    assert http("POST", "/v2/entries:list", json=resume).json()["entries"] == entries[-1:]


def test_preempt_refuses_unknown_replicas_and_jobs_not_running(http, local_service, tmp_path):
    name = http("POST", JOBS, data=body(custom_job(scripted_pool(tmp_path, "--sleep", "60"))))
    name = name.json()["name"]
    wait_until(lambda: starts(tmp_path, "workerpool0-0"))
    for request, expected in (
        ({"replica": "workerpool1-0"}, "is not in this job"),
        ({}, '"replica" is required'),
        ({"replica": "workerpool0-0", "gracePeriod": "soon"}, "gracePeriod"),
    ):
        status, code, message = error(http("POST", f"/v1/{name}:preempt", json=request))
        assert (status, code) == (400, "INVALID_ARGUMENT") and expected in message
    http("POST", f"/v1/{name}:cancel")
    wait_for_state(local_service.client(), name)
    ended = http("POST", f"/v1/{name}:preempt", json={"replica": "workerpool0-0"})
    assert error(ended)[:2] == (400, "FAILED_PRECONDITION")


def test_an_api_the_service_lacks_is_unimplemented_naming_what_it_serves(http):
    path = "/v1/projects/local/locations/us-central1/featurestores?featurestoreId=default"
    status, code, message = error(http("POST", path, data="{}"))
    assert (status, code) == (501, "UNIMPLEMENTED")
    assert "not supported by the local Vertex service" in message
    assert "customJobs" in message and "pipelineJobs" in message


def test_wait_answers_when_the_state_changes_or_at_its_timeout(http, local_service, tmp_path):
    release = tmp_path / "release"
    pool = scripted_pool(tmp_path, "--wait-file", str(release))
    name = http("POST", JOBS, data=body(custom_job(pool, pool))).json()["name"]
    wait_until(lambda: starts(tmp_path, "workerpool0-0") and starts(tmp_path, "workerpool1-0"))
    wait_until(lambda: http("GET", f"/v1/{name}").json()["state"] == "JOB_STATE_RUNNING")
    still = http("GET", f"/v1/{name}:wait", params={"state": "JOB_STATE_RUNNING", "timeout": "0s"})
    assert still.json()["state"] == "JOB_STATE_RUNNING"
    release.touch()
    changed = http("GET", f"/v1/{name}:wait", params={"state": "JOB_STATE_RUNNING"})
    assert changed.json()["state"] == "JOB_STATE_SUCCEEDED"
    # Each replica is told its share of this machine's cores, as its own machine would have.
    env = json.loads((tmp_path / "workerpool1-0.env.json").read_text())
    assert env["OMP_NUM_THREADS"] == str(max(1, (os.cpu_count() or 1) // 2))


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"state": "RUNNING"}, '"state"'),
        ({"state": "JOB_STATE_RUNNING", "timeout": "soon"}, '"timeout"'),
        ({"state": "JOB_STATE_RUNNING", "timeout": "61s"}, '"timeout"'),
    ],
)
def test_wait_refuses_bad_arguments_naming_them(http, finished, params, field):
    status, code, message = error(http("GET", f"/v1/{finished[0].name}:wait", params=params))
    assert (status, code) == (400, "INVALID_ARGUMENT") and field in message
