"""The Model Registry in the local Vertex service: `models` upload, get, list, versions, delete.

`upload` (pure request parsing and checks), `store` (SQLite), `registry` (the API) and `routes`,
which `localvertex.http.build_router` adds through `register`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from localvertex.http import Router
    from localvertex.service import LocalVertex


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the models routes of a new ModelRegistry over `service` to `router`."""
    from localvertex.models.registry import ModelRegistry
    from localvertex.models.routes import add_routes

    add_routes(router, ModelRegistry(service))
