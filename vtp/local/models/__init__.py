"""The Model Registry in the local Vertex service: `models` upload, get, list, versions, delete.

`upload` (pure request parsing and checks), `store` (SQLite), `service` (the API) and `routes`,
which `vtp.local.server.build_router` adds through `register`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtp.local.base.routing import Router
    from vtp.local.custom_jobs.service import LocalVertex


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the models routes of a new ModelRegistry over `service` to `router`."""
    from vtp.local.models.routes import add_routes
    from vtp.local.models.service import ModelRegistry

    add_routes(router, ModelRegistry(service))
