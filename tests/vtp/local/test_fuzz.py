"""A seeded, bounded fuzz run over every route: no 5xx, no hang, and the service lives on. And a
walk over every field of a real compiled pipeline in pipelineJobs' and schedules' create
bodies, REST and gRPC (`spec_walk.py`): each wrong-typed value a 4xx naming its field."""

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from tests.fixtures import LocalService
from tests.vtp.local import route_walk, spec_walk
from tests.vtp.local.fuzz import KNOWN_OPEN, PARENT, Sent, requests_for, send_all
from tests.vtp.local.spec_walk import Mutant

SEED, COUNT = 20261122, 600
FREE = ("pipelineSpec", "parameterValues")
"""Where null is a value, not an unset field (a Struct, and Values)."""


def test_malformed_requests_get_4xx_never_5xx_or_a_hang(local_service) -> None:
    tally = send_all(local_service.url, local_service.token, SEED, COUNT, timeout=10)
    assert tally.failures == []
    assert tally.sent == COUNT and sum(tally.by_status.values()) == COUNT
    assert any(400 <= status < 500 for status in tally.by_status)  # the fuzzer does reach checks
    assert requests.get(f"{local_service.url}/healthz", timeout=5).status_code == 200
    # One traceback per known issue's 5xx (the service logs each bug once), none otherwise.
    assert local_service.service_log().count("Traceback") == len(tally.known)


def test_the_fuzzer_reaches_every_front() -> None:
    """Storage (uploads, sessions, ranges), serving, the console and raw protocol errors are all
    in a run of the suite's size, not only in the bench's."""
    sent = list(requests_for(SEED, COUNT, "token"))
    paths = [s.path for s in sent]
    assert any("upload_id={session}" in p for p in paths)
    assert any("uploadType=multipart" in p for p in paths)
    assert any(s.path.startswith("/download/") and "Range" in s.headers for s in sent)
    assert any(p.endswith(":predict") for p in paths) and any(":rawPredict" in p for p in paths)
    assert any(p.startswith("/console") for p in paths)
    assert sum(s.raw is not None for s in sent) > 10


def test_known_open_issues_still_answer_5xx(local_service) -> None:
    """Each KNOWN_OPEN entry's request still answers 5xx; one that no longer does fails here,
    naming it (its fix landed: drop the entry). A loop rather than a parametrization: with no
    issue open (none is, since e657b79), an empty parameter set was collected as a skip that
    checked nothing; this runs, replays the prologue, and replays each entry there is."""
    tally = send_all(local_service.url, local_service.token, SEED, 4)  # the prologue
    assert tally.failures == []
    fixed = []
    for issue in KNOWN_OPEN:
        headers = {"Authorization": f"Bearer {local_service.token}", **issue.sent.headers}
        sent = Sent(issue.sent.method, issue.sent.path, headers, issue.sent.body)
        response = requests.request(
            sent.method,
            local_service.url + sent.path,
            headers=sent.headers,
            data=sent.body or None,
            timeout=10,
        )
        if response.status_code < 500:
            fixed.append(issue.name)
    assert fixed == [], f"fixed now, drop from KNOWN_OPEN: {fixed}"


def test_every_route_answers_deep_huge_and_never_matching_values_with_4xx(local_service) -> None:
    """Every route of the service's own table, not a sample: a body nesting 100,000 levels is a
    400 naming the body on each JSON route of the router; on Cloud Storage's and the sign-in's,
    and for huge and never-matching values everywhere, no 5xx and no hang (each request has
    `timeout` seconds, a guard against a hang, not a measure of speed). (Storage's PATCH and
    copyTo read no body: a deep one is ignored there, as any other.)"""
    assert send_all(local_service.url, local_service.token, SEED, 4).failures == []  # prologue
    address = ("127.0.0.1", int(local_service.url.rsplit(":", 1)[1]))
    routed = set(route_walk.json_routes()) - set(route_walk.OTHER_FRONTS)
    failures, deep_refused = [], set()
    for kind, sent in route_walk.every_request(local_service.token):
        try:
            status, answer = route_walk.send_one(address, sent, timeout=30)
        except OSError as exc:
            failures.append(f"{kind} {sent.method} {sent.path[:120]}: {type(exc).__name__}")
            continue
        if status >= 500 and status != 501:
            failures.append(f"{kind} {sent.method} {sent.path[:120]}: {status} {answer[:200]}")
        refused_deep = status == 400 and "request body nests" in answer
        if kind == "deep" and (sent.method, sent.path) in routed and refused_deep:
            deep_refused.add((sent.method, sent.path))
    assert failures == [], "\n".join(failures)
    assert deep_refused == routed and len(routed) > 60  # every JSON route, the body named
    assert local_service.service_log().count("Traceback") == 0


# -- every field of a compiled pipeline, wrong-typed -----------------------------------------


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The walk's pipeline, compiled by the installed kfp."""
    return spec_walk.compiled_spec(tmp_path_factory.mktemp("walk"))


def judged(
    mutants: Iterator[Mutant], send: Callable[[Mutant], tuple[int, str]], passed: str
) -> list[str]:
    """A line for each mutant the service answered wrongly: a 5xx (or no 4xx), a wrong type
    accepted where it does not fit (the answer says `passed`: every check but the last), a
    refusal that does not name the field."""
    failures = []
    for mutant in mutants:
        status, message = send(mutant)
        if not 400 <= status < 500:
            failures.append(f"{mutant.label()}: {status} {message[:200]}")
        elif mutant.dropped:
            continue  # an optional part may go; a required one is refused: either is a 4xx
        elif passed in message:
            if not spec_walk.may_pass(mutant):
                failures.append(f"{mutant.label()}: accepted")
        elif not spec_walk.names_field(message, mutant.name):
            failures.append(f"{mutant.label()}: refused without naming it: {message[:200]}")
    return failures


def rest_sender(local_service: Any, collection: str) -> Callable[[Mutant], tuple[int, str]]:
    """Send a mutant's body to `collection`'s create (a job with `spec_walk.BAD_ID`)."""
    session = local_service.session()
    query = f"?pipelineJobId={spec_walk.BAD_ID}" if collection == "pipelineJobs" else ""
    url = f"{local_service.url}/v1/{PARENT}/{collection}{query}"

    def send(mutant: Mutant) -> tuple[int, str]:
        response = session.post(url, json=mutant.body, timeout=30)
        return response.status_code, response.json().get("error", {}).get("message", "")

    return send


def grpc_sender(local_service: Any, method: str, encode: Callable[[dict], bytes]) -> Callable:
    """Call `method` over the SDK's gRPC endpoint with a mutant's body, `encode`d; the answer
    as (HTTP-like status, message): 400 for INVALID_ARGUMENT, 412 FAILED_PRECONDITION, 500
    otherwise (200: created)."""
    import grpc

    roots = (local_service.state_dir / "tls" / "ca.pem").read_bytes()
    endpoint = local_service.shell_env()["VTP_LOCAL_API_ENDPOINT"]
    channel = grpc.secure_channel(endpoint, grpc.ssl_channel_credentials(root_certificates=roots))
    call = channel.unary_unary(method)
    metadata = [("authorization", f"Bearer {local_service.token}")]
    codes = {"INVALID_ARGUMENT": 400, "FAILED_PRECONDITION": 412}

    def send(mutant: Mutant) -> tuple[int, str]:
        try:
            call(encode(mutant.body), metadata=metadata, timeout=30)
        except grpc.RpcError as exc:
            return codes.get(exc.code().name, 500), f"{exc.code().name} {exc.details()}"
        return 200, "created"

    return send


def test_pipeline_jobs_over_rest_name_every_wrong_typed_field(local_service, walked) -> None:
    """Every field of the pipeline job, at every depth, with every other JSON type (and null
    in the spec and the values); every field dropped. Nothing is stored, nothing runs."""
    body = spec_walk.job_body(walked)
    send = rest_sender(local_service, "pipelineJobs")
    base = spec_walk.Mutant((), "pipelineJob", None, False, body)
    assert spec_walk.PASSED_JOB in send(base)[1]  # the body passes every check but its ID
    mutants = spec_walk.mutants(body, "pipelineJob", free=FREE)
    failures = judged(mutants, send, spec_walk.PASSED_JOB)
    failures += judged(spec_walk.drops(body, "pipelineJob"), send, spec_walk.PASSED_JOB)
    assert failures == [], "\n".join(failures[:40])
    assert local_service.service_log().count("Traceback") == 0
    assert not list((local_service.state_dir / "pipelines").glob("*/request.json"))


def test_schedules_over_rest_name_every_wrong_typed_field(local_service, walked) -> None:
    """The schedule's own fields and its createPipelineJobRequest's, each wrong-typed in turn
    (one JSON type per field: the job's fields have every type above). None is created."""
    body = spec_walk.schedule_body(walked)
    send = rest_sender(local_service, "schedules")
    base = spec_walk.Mutant((), "schedule", None, False, body)
    assert spec_walk.PASSED_SCHEDULE in send(base)[1]
    mutants = spec_walk.mutants(body, "schedule", every_kind=False, free=FREE)
    failures = judged(mutants, send, spec_walk.PASSED_SCHEDULE)
    assert failures == [], "\n".join(failures[:40])
    listed = local_service.session().get(f"{local_service.url}/v1/{PARENT}/schedules").json()
    assert listed.get("schedules", []) == []
    assert local_service.service_log().count("Traceback") == 0


@pytest.mark.parametrize("kind", ["pipelineJobs", "schedules"])
def test_grpc_creates_name_every_wrong_typed_field(local_service, walked, kind) -> None:
    """What gRPC can carry of another type, a spec's fields (a Struct) and the parameter
    values (Values), through the SDK's endpoint: the same refusals, as INVALID_ARGUMENT."""
    if kind == "pipelineJobs":
        body, where, passed = spec_walk.job_body(walked), "pipelineJob", spec_walk.PASSED_JOB
        method = "/google.cloud.aiplatform.v1.PipelineService/CreatePipelineJob"
        send = grpc_sender(local_service, method, spec_walk.grpc_job_request)
    else:
        body, where, passed = spec_walk.schedule_body(walked), "schedule", spec_walk.PASSED_SCHEDULE
        method = "/google.cloud.aiplatform.v1.ScheduleService/CreateSchedule"
        send = grpc_sender(local_service, method, spec_walk.grpc_schedule_request)
    assert passed in send(spec_walk.Mutant((), where, None, False, body))[1]
    mutants = spec_walk.mutants(body, where, every_kind=False, free=FREE)
    failures = judged(spec_walk.only_under(mutants, *FREE), send, passed)
    assert failures == [], "\n".join(failures[:40])
    assert local_service.service_log().count("Traceback") == 0


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN"])
@pytest.mark.parametrize(
    "path", [("runtimeConfig", "parameterValues", "n"), ("pipelineSpec", "root", "inputDefinitions",
    "parameters", "n", "defaultValue")], ids=["value", "default"],
)  # fmt: skip
def test_a_number_json_cannot_hold_is_refused_naming_where(
    local_service, walked, number, path
) -> None:
    """Python's JSON reads Infinity and NaN, protobuf takes them in a Value, and the job could
    then not be stored or shown (a 500): a 400 naming the part that holds one."""
    body = spec_walk.job_body(walked)
    holder = body
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = "NUMBER"
    raw = json.dumps(body).replace('"NUMBER"', number)
    response = local_service.session().post(
        f"{local_service.url}/v1/{PARENT}/pipelineJobs?pipelineJobId={spec_walk.BAD_ID}",
        data=raw,
        headers={"Content-Type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 400, response.text
    assert f"pipelineJob.{path[0]}: every number must be finite" in response.text


def test_grpc_refuses_a_number_json_cannot_hold(walked, tmp_path) -> None:
    """A Value of Infinity in a gRPC CreatePipelineJob: INVALID_ARGUMENT, as over REST. A
    service of its own: the failure logs a traceback, which the shared one must not have."""
    import grpc
    from google.cloud import aiplatform_v1

    with LocalService(tmp_path / "service") as service:
        body = spec_walk.job_body(walked)
        request = aiplatform_v1.CreatePipelineJobRequest.pb()()
        request.ParseFromString(spec_walk.grpc_job_request(body))
        request.pipeline_job.runtime_config.parameter_values["n"].number_value = float("inf")
        roots = (service.state_dir / "tls" / "ca.pem").read_bytes()
        endpoint = service.shell_env()["VTP_LOCAL_API_ENDPOINT"]
        credentials = grpc.ssl_channel_credentials(root_certificates=roots)
        with grpc.secure_channel(endpoint, credentials) as channel:
            call = channel.unary_unary(
                "/google.cloud.aiplatform.v1.PipelineService/CreatePipelineJob"
            )
            with pytest.raises(grpc.RpcError) as refused:
                metadata = [("authorization", f"Bearer {service.token}")]
                call(request.SerializeToString(), metadata=metadata, timeout=30)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "parameter_values" in refused.value.details()  # the field, as protobuf names it
    assert "Traceback" not in (service.state_dir / "service.log").read_text()
