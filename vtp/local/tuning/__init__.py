"""Hyperparameter tuning in the local Vertex service.

Pure pieces: `space` (the search space), `suggest` (grid, random and TPE suggestions),
`metrics` (cloudml-hypertune files), `stopping` (early-stopping rules), `trial_job` (a trial's
CustomJob). Service pieces: `store`, `run` (one job in motion), `service` (the API) and `routes`,
which `vtp.local.server.build_router` adds through `register`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtp.local.base.routing import Router
    from vtp.local.custom_jobs.service import LocalVertex


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the hyperparameterTuningJobs routes of a new Tuner over `service` to `router`."""
    from vtp.local.tuning.routes import add_routes
    from vtp.local.tuning.service import Tuner

    add_routes(router, Tuner(service))
