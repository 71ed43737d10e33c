"""Vertex's `customJobs` REST routes, plus two local extensions.

    POST   /v1/projects/{p}/locations/{l}/customJobs                 create (CustomJob body)
    GET    /v1/projects/{p}/locations/{l}/customJobs                 list (filter, pageSize, ...)
    GET    /v1/projects/{p}/locations/{l}/customJobs/{id}            get
    DELETE /v1/projects/{p}/locations/{l}/customJobs/{id}            delete -> Operation
    POST   /v1/projects/{p}/locations/{l}/customJobs/{id}:cancel     cancel -> {}

Local extensions (not part of Vertex):

    POST   .../customJobs/{id}:preempt  {"replica": "workerpool1-0", "gracePeriod": "5s"} -> {}
    GET    .../customJobs/{id}:logs?replica=R&offset=N&maxBytes=M
           -> {"name", "jobState", "entries": [{"replica", "offset", "nextOffset", "text"}]}
    GET    .../customJobs/{id}:replicas
           -> {"name", "jobState", "replicas": [{"replica", "state", "starts", "exitStatus"}]}
    GET    .../customJobs/{id}:wait?state=JOB_STATE_RUNNING&timeout=10s[&logsAfter=TIMESTAMP]
           -> the job (as get) once its state is not `state`, or after `timeout` (at most 60s);
           with `logsAfter` (RFC 3339), also once a replica logged a line stamped later, so
           a follower of the job copies each line of its logs as it comes
    POST   /v1/projects/{p}/locations/{l}/customJobs:injectFault
           {"fault": "FAIL"|"OOM"|"PREEMPT"|"STOCKOUT", "exitCode": 1, "target": "JOB"|"TRIAL",
            "nth": 1, "attempts": N} -> {};
           the `nth` job created there after it (TRIAL: tuning trial's job) runs, and once its
           primary replica logged a line, that replica exits with `exitCode` (FAIL) or is
           killed by SIGKILL as out of memory (OOM); or it is preempted once as it starts
           (PREEMPT); or it stays PENDING while `attempts` attempts find no machines, failing
           with RESOURCE_EXHAUSTED when they outlast Vertex's retries (STOCKOUT; no `attempts`:
           the stockout lasts). `vtp.testing`'s fail_next_job, oom_next_job, preempt_next_job,
           stockout_next_job, fail_next_trial; `vtp local fault`
    GET    /v1/projects/{p}/locations/{l}/customJobs:faults
           -> {"faults": [{"fault", "exitCode", "target", "nth", "attempts", "job", "struck"}]}:
           each fault asked for there, the job it went to and whether it struck (unused ones
           fail a test's end)

Cloud Logging's entries.list, over these jobs' replica logs (`runtime/logs.py`): what
`gcloud ai custom-jobs stream-logs` reads (resource.type="ml_job", resource.labels.job_id):

    POST   /v2/entries:list  {"resourceNames", "filter", "orderBy", "pageSize", "pageToken"}

(and the same under /v1beta1/). `-` stands for any project or location in a job's name (job IDs
are unique). Responses write enums as names, or as integers when the request asks for
`$alt=json;enum-encoding=int` (the aiplatform REST transport does).
"""

import json
from datetime import datetime

from google.cloud import aiplatform_v1
from google.protobuf import duration_pb2

from vtp.local.base import errors
from vtp.local.base.resources import rest_json
from vtp.local.base.routing import Collection, Request, Router, list_page, parse_message
from vtp.local.custom_jobs.faults import parse_fault
from vtp.local.custom_jobs.service import MAX_LOG_BYTES, CustomJobs

MAX_WAIT_SECONDS = 60
JOBS = Collection("customJobs", "job")
_JOB = JOBS.item  # the local extensions below are methods of one job


def add_routes(router: Router, service: CustomJobs) -> None:
    """Route the customJobs methods to `service`."""
    router.add("POST", JOBS.path, lambda r: _create(service, r))
    router.add("POST", JOBS.path + ":injectFault", lambda r: _inject_fault(service, r))
    router.add("GET", JOBS.path + ":faults", lambda r: _faults(service, r))
    JOBS.add_standard(
        router, service.get_custom_job, service.list_custom_jobs, service.delete_custom_job
    )
    JOBS.add_action(router, "cancel", service.cancel_custom_job)
    router.add("POST", _JOB + ":preempt", lambda r: _preempt(service, r))
    router.add("GET", _JOB + ":logs", lambda r: _logs(service, r))
    router.add("GET", _JOB + ":wait", lambda r: _wait(service, r))
    router.add(
        "GET", _JOB + ":replicas", lambda r: json.dumps(service.replica_states(JOBS.name(r)))
    )
    router.add("POST", "/v2/entries:list", lambda r: _entries(service, r))


def parse_job(body: bytes) -> aiplatform_v1.CustomJob:
    """A CustomJob from a request body; unknown fields are INVALID_ARGUMENT, as on Vertex."""
    return parse_message(aiplatform_v1.CustomJob, body)


def _create(service: CustomJobs, request: Request) -> str:
    name = service.create_custom_job(request.params["parent"], parse_job(request.body))
    return rest_json(service.get_custom_job(name), request.enum_ints)


def _preempt(service: CustomJobs, request: Request) -> str:
    body = request.json()
    replica = body.get("replica")
    if not isinstance(replica, str) or not replica:
        raise errors.invalid_argument('preempt: "replica" is required, e.g. "workerpool1-0".')
    grace = body.get("gracePeriod")
    seconds = None if grace is None else _seconds("preempt", "gracePeriod", grace)
    service.preempt_replica(JOBS.name(request), replica, seconds)
    return "{}"


def _inject_fault(service: CustomJobs, request: Request) -> str:
    service.inject_fault(request.params["parent"], parse_fault(request.json()))
    return "{}"


def _faults(service: CustomJobs, request: Request) -> str:
    faults = service.list_faults(request.params["parent"])
    return json.dumps({"faults": [f.to_json() for f in faults]})


def _logs(service: CustomJobs, request: Request) -> str:
    max_bytes = request.integer("maxBytes") or MAX_LOG_BYTES
    logs = service.read_logs(
        JOBS.name(request), request.arg("replica"), request.integer("offset"), max_bytes
    )
    return json.dumps(logs)


def _wait(service: CustomJobs, request: Request) -> str:
    seen = request.arg("state")
    states: dict[str, int] = dict(aiplatform_v1.JobState.__members__)
    if seen not in states:
        raise errors.invalid_argument(f'wait: "state" must be a JobState name, got {seen!r}.')
    timeout = _seconds("wait", "timeout", request.arg("timeout", "10s"))
    if not 0 <= timeout <= MAX_WAIT_SECONDS:
        raise errors.invalid_argument(f'wait: "timeout" must be 0s to {MAX_WAIT_SECONDS}s.')
    after = request.arg("logsAfter") or None
    if after is not None:
        try:
            datetime.fromisoformat(after.replace("Z", "+00:00"))
        except ValueError:
            raise errors.invalid_argument(
                f'wait: "logsAfter" must be an RFC 3339 timestamp, got {after!r}.'
            ) from None
    job = service.watch_custom_job(JOBS.name(request), states[seen], timeout, after)
    return rest_json(job, request.enum_ints)


def _seconds(method: str, field: str, value: object) -> float:
    duration = duration_pb2.Duration()
    try:
        duration.FromJsonString(str(value))
    except ValueError as exc:
        raise errors.invalid_argument(
            f'{method}: "{field}" must be a duration such as "5s", got {value!r}.'
        ) from exc
    return duration.ToTimedelta().total_seconds()


def _entries(service: CustomJobs, request: Request) -> str:
    body = request.json()
    size = body.get("pageSize", 0)
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise errors.invalid_argument(f"Invalid pageSize {size!r}: expected an integer.")
    names = body.get("resourceNames") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise errors.invalid_argument("Invalid resourceNames: expected a list of strings.")
    texts = {key: body.get(key) or "" for key in ("filter", "orderBy", "pageToken")}
    for key, value in texts.items():
        if not isinstance(value, str):
            raise errors.invalid_argument(f"Invalid {key} {value!r}: expected a string.")
    found, token = service.list_log_entries(
        names, texts["filter"], texts["orderBy"], size, texts["pageToken"]
    )
    return list_page("entries", found, token)
