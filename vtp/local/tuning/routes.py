"""Vertex's `hyperparameterTuningJobs` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              create
    GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              list
    GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         get
    DELETE /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         delete -> Operation
    POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}:cancel  cancel -> {}

(and the same under /v1beta1/). Responses follow the customJobs routes: enums as names, or as
integers when the request asks for `$alt=json;enum-encoding=int`.
"""

from vtp.local.base.resources import rest_json
from vtp.local.base.routing import Collection, Request, Router
from vtp.local.tuning.service import Tuner

JOBS = Collection("hyperparameterTuningJobs", "job")


def add_routes(router: Router, tuner: Tuner) -> None:
    """Route the hyperparameterTuningJobs methods to `tuner`."""
    router.add(
        "POST",
        JOBS.path,
        lambda r: rest_json(tuner.create(r.params["parent"], r.body), r.enum_ints),
    )
    JOBS.add_standard(router, tuner.get, tuner.list, tuner.delete)
    router.add("POST", JOBS.item + ":cancel", lambda r: _cancel(tuner, r))


def _cancel(tuner: Tuner, request: Request) -> str:
    tuner.cancel(JOBS.name(request))
    return "{}"
