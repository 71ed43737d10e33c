"""Vertex's `hyperparameterTuningJobs` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              create
    GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs              list
    GET    /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         get
    DELETE /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}         delete -> Operation
    POST   /v1/projects/{p}/locations/{l}/hyperparameterTuningJobs/{id}:cancel  cancel -> {}

(and the same under /v1beta1/). Responses follow the customJobs routes: enums as names, or as
integers when the request asks for `$alt=json;enum-encoding=int`.
"""

from vtp.local.base.routing import Collection, Router
from vtp.local.tuning.service import Tuner

JOBS = Collection("hyperparameterTuningJobs", "job")


def add_routes(router: Router, tuner: Tuner) -> None:
    """Route the hyperparameterTuningJobs methods to `tuner`."""
    JOBS.add_create(router, tuner.create)
    JOBS.add_standard(router, tuner.get, tuner.list, tuner.delete)
    JOBS.add_action(router, "cancel", tuner.cancel)
