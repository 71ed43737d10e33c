"""Hyperparameter tuning in the local Vertex service.

Pure pieces: `space` (the search space), `suggest` (grid, random and TPE suggestions),
`metrics` (cloudml-hypertune files), `stopping` (early-stopping rules), `trial_job` (a trial's
CustomJob). Service pieces: `store`, `run` (one job in motion), `tuner` (the API) and `routes`,
which `localvertex.http.build_router` adds through `register`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from localvertex.http import Router
    from localvertex.service import LocalVertex


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the hyperparameterTuningJobs routes of a new Tuner over `service` to `router`."""
    from localvertex.tuning.routes import add_routes
    from localvertex.tuning.tuner import Tuner

    add_routes(router, Tuner(service))
