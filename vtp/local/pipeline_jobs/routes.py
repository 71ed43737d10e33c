"""Vertex's `pipelineJobs` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/pipelineJobs?pipelineJobId=ID  create
    GET    /v1/projects/{p}/locations/{l}/pipelineJobs                   list (filter, pageSize...)
    GET    /v1/projects/{p}/locations/{l}/pipelineJobs/{id}              get
    DELETE /v1/projects/{p}/locations/{l}/pipelineJobs/{id}              delete -> Operation
    POST   /v1/projects/{p}/locations/{l}/pipelineJobs/{id}:cancel       cancel -> {}

Local extension (not part of Vertex): `GET .../pipelineJobs/{id}:logs?offset=N&maxBytes=M` ->
`{"name", "pipelineState", "offset", "nextOffset", "text"}`, the run's kfp.local log.
(And the same under /v1beta1/.) Enums are names, or integers when the request asks for
`$alt=json;enum-encoding=int` (the aiplatform REST transport does).
"""

import json

from google.cloud import aiplatform_v1

from vtp.local.base.routing import (
    Request,
    Router,
    collection,
    list_page,
    parse_message,
    resource,
)
from vtp.local.pipeline_jobs.resource import job_json
from vtp.local.pipeline_jobs.service import PipelineJobs

_JOBS = collection("pipelineJobs")
_JOB = resource("pipelineJobs", "job")
MAX_LOG_BYTES = 1 << 20


def add_routes(router: Router, jobs: PipelineJobs) -> None:
    """Route the pipelineJobs methods to `jobs`."""
    router.add("POST", _JOBS, lambda r: job_json(_create(jobs, r), r.enum_ints))
    router.add("GET", _JOBS, lambda r: _list(jobs, r))
    router.add("GET", _JOB, lambda r: job_json(jobs.get(_name(r)), r.enum_ints))
    router.add("DELETE", _JOB, lambda r: json.dumps(jobs.delete(_name(r))))
    router.add("POST", _JOB + ":cancel", lambda r: _cancel(jobs, r))
    router.add("GET", _JOB + ":logs", lambda r: _logs(jobs, r))


def parse_job(body: bytes) -> aiplatform_v1.PipelineJob:
    """A PipelineJob from a request body; unknown fields are INVALID_ARGUMENT, as on Vertex."""
    return parse_message(aiplatform_v1.PipelineJob, body)


def _create(jobs: PipelineJobs, request: Request) -> aiplatform_v1.PipelineJob:
    job = parse_job(request.body)
    return jobs.create(request.params["parent"], job, request.arg("pipelineJobId"))


def _list(jobs: PipelineJobs, request: Request) -> str:
    args = request.list_args()
    found, token = jobs.list(request.params["parent"], args.filter, args.page_size, args.page_token)
    return list_page(
        "pipelineJobs", [json.loads(job_json(j, request.enum_ints)) for j in found], token
    )


def _cancel(jobs: PipelineJobs, request: Request) -> str:
    jobs.cancel(_name(request))
    return "{}"


def _logs(jobs: PipelineJobs, request: Request) -> str:
    max_bytes = request.integer("maxBytes") or MAX_LOG_BYTES
    return json.dumps(jobs.read_logs(_name(request), request.integer("offset"), max_bytes))


def _name(request: Request) -> str:
    return f"{request.params['parent']}/pipelineJobs/{request.params['job']}"
