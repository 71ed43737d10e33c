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

from vtp.local.base.routing import Request, Router, collection, list_page, resource
from vtp.local.tuning.service import Tuner, job_json

_JOBS = collection("hyperparameterTuningJobs")
_JOB = resource("hyperparameterTuningJobs", "job")


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
    args = request.list_args()
    jobs, token = tuner.list(request.params["parent"], args.filter, args.page_size, args.page_token)
    page = [json.loads(job_json(job, request.enum_ints)) for job in jobs]
    return list_page("hyperparameterTuningJobs", page, token)


def _cancel(tuner: Tuner, request: Request) -> str:
    tuner.cancel(_name(request))
    return "{}"


def _name(request: Request) -> str:
    return f"{request.params['parent']}/hyperparameterTuningJobs/{request.params['job']}"
