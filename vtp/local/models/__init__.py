"""The Model Registry in the local Vertex service: `models` upload, get, list, versions, delete.

`upload` (pure request parsing and checks), `store` (SQLite), `service` (the API) and `routes`,
which `vtp.local.server.build_router` adds through `register`.
"""

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtp.local.base.routing import Router
    from vtp.local.custom_jobs.service import LocalVertex
    from vtp.local.models.service import ModelRegistry

_by_service: "weakref.WeakKeyDictionary[LocalVertex, ModelRegistry]" = weakref.WeakKeyDictionary()


def for_service(service: "LocalVertex") -> "ModelRegistry":
    """The one ModelRegistry of `service` (endpoints and training pipelines use it too)."""
    from vtp.local.models.service import ModelRegistry

    if service not in _by_service:
        _by_service[service] = ModelRegistry(service)
    return _by_service[service]


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the models routes of `service`'s ModelRegistry to `router`."""
    from vtp.local.models.routes import add_routes

    add_routes(router, for_service(service))
