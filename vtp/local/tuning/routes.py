"""Vertex's `hyperparameterTuningJobs` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              create
    GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              list
    GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         get
    DELETE /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         delete -> Operation
    POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}:cancel  cancel -> {}

(and the same under /v1beta1/). Responses follow the customJobs routes: enums as names, or as
integers when the request asks for `$alt=json;enum-encoding=int`.
"""

import json

from vtp.local.base import errors
from vtp.local.server import Request, Router
from vtp.local.tuning.service import Tuner, job_json

_PARENT = r"/(?P<version>v1|v1beta1)/(?P<parent>projects/[^/]+/locations/[^/]+)"
_JOBS = _PARENT + r"/hyperparameterTuningJobs"
_JOB = _JOBS + r"/(?P<job>[^/:]+)"


def add_routes(router: Router, tuner: Tuner) -> None:
    """Route the hyperparameterTuningJobs methods to `tuner`."""
    router.add(
        "POST", _JOBS, lambda r: job_json(tuner.create(r.params["parent"], r.body), r.enum_ints)
    )
    router.add("GET", _JOBS, lambda r: _list(tuner, r))
    router.add("GET", _JOB, lambda r: job_json(tuner.get(_name(r)), r.enum_ints))
    router.add("DELETE", _JOB, lambda r: json.dumps(tuner.delete(_name(r))))
    router.add("POST", _JOB + ":cancel", lambda r: _cancel(tuner, r))


def _list(tuner: Tuner, request: Request) -> str:
    size = request.arg("pageSize", "0")
    if not size.isdigit():
        raise errors.invalid_argument(f"Invalid pageSize {size!r}: expected an integer.")
    jobs, token = tuner.list(
        request.params["parent"], request.arg("filter"), int(size), request.arg("pageToken")
    )
    page = [json.loads(job_json(job, request.enum_ints)) for job in jobs]
    body: dict = {"hyperparameterTuningJobs": page} if page else {}
    if token:
        body["nextPageToken"] = token
    return json.dumps(body)


def _cancel(tuner: Tuner, request: Request) -> str:
    tuner.cancel(_name(request))
    return "{}"


def _name(request: Request) -> str:
    return f"{request.params['parent']}/hyperparameterTuningJobs/{request.params['job']}"
