"""Vertex's `pipelineJobs` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/pipelineJobs?pipelineJobId=ID  create
    GET    /v1/projects/{p}/locations/{l}/pipelineJobs                   list (filter, pageSize...)
    GET    /v1/projects/{p}/locations/{l}/pipelineJobs/{id}              get
    DELETE /v1/projects/{p}/locations/{l}/pipelineJobs/{id}              delete -> Operation
    POST   /v1/projects/{p}/locations/{l}/pipelineJobs/{id}:cancel       cancel -> {}

Local extension (not part of Vertex): `GET .../pipelineJobs/{id}:logs?offset=N&maxBytes=M` ->
`{"name", "pipelineState", "offset", "nextOffset", "text"}`, the run's kfp.local log; with
`&timeout=0.3s` (at most 60s) a long poll: the answer waits until the log has bytes past N or the
run has ended (its state, as of before the text was read, is `pipelineState`), so a follower
(`vtp run`) hears of a line or of the end as it comes, not at its next poll.
(And the same under /v1beta1/.) Enums are names, or integers when the request asks for
`$alt=json;enum-encoding=int` (the aiplatform REST transport does).
"""

import json

from google.cloud import aiplatform_v1
from google.protobuf import duration_pb2

from vtp.local.base import errors
from vtp.local.base.resources import rest_json
from vtp.local.base.routing import Collection, Request, Router
from vtp.local.pipeline_jobs import spec as specs
from vtp.local.pipeline_jobs.service import PipelineJobs

JOBS = Collection("pipelineJobs", "job")
MAX_LOG_BYTES = 1 << 20
MAX_WAIT_SECONDS = 60
"""The longest `timeout` a `:logs` long poll takes (as customJobs `:wait`)."""


def add_routes(router: Router, jobs: PipelineJobs) -> None:
    """Route the pipelineJobs methods to `jobs`."""
    router.add("POST", JOBS.path, lambda r: rest_json(_create(jobs, r), r.enum_ints))
    JOBS.add_standard(router, jobs.get, jobs.list, jobs.delete)
    JOBS.add_action(router, "cancel", jobs.cancel)
    router.add("GET", JOBS.item + ":logs", lambda r: _logs(jobs, r))


def parse_job(body: bytes) -> aiplatform_v1.PipelineJob:
    """A PipelineJob from a request body; unknown fields are INVALID_ARGUMENT, as on Vertex,
    and so is a field of the wrong type, named (`specs.parse_request`)."""
    return specs.parse_request(aiplatform_v1.PipelineJob, body, "pipelineJob")


def _create(jobs: PipelineJobs, request: Request) -> aiplatform_v1.PipelineJob:
    job = parse_job(request.body)
    return jobs.create(request.params["parent"], job, request.arg("pipelineJobId"))


def _logs(jobs: PipelineJobs, request: Request) -> str:
    max_bytes = request.integer("maxBytes") or MAX_LOG_BYTES
    name, offset, timeout = JOBS.name(request), request.integer("offset"), _timeout(request)
    return json.dumps(jobs.read_logs(name, offset, max_bytes, timeout))


def _timeout(request: Request) -> float:
    """The `timeout` query parameter (a duration such as "0.3s"; default none) in seconds."""
    text = request.arg("timeout", "0s")
    duration = duration_pb2.Duration()
    try:
        duration.FromJsonString(text)
    except ValueError:
        raise errors.invalid_argument(
            f'logs: "timeout" must be a duration such as "0.3s", got {text[:40]!r}.'
        ) from None
    seconds = duration.ToTimedelta().total_seconds()
    if not 0 <= seconds <= MAX_WAIT_SECONDS:
        raise errors.invalid_argument(f'logs: "timeout" must be 0s to {MAX_WAIT_SECONDS}s.')
    return seconds
