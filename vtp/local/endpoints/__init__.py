"""Endpoints of the local service: `store` (SQLite), `serving` (a deployed model's server as a
host process), `service` (the API: endpoints, deploy/undeploy operations, predict) and `routes`,
which `vtp.local.server.build_router` adds through `register`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtp.local.base.routing import Router
    from vtp.local.custom_jobs.service import LocalVertex


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the endpoints routes of `service` to `router`; restart deployed models' servers."""
    from vtp.local.endpoints.routes import add_routes
    from vtp.local.endpoints.service import Endpoints
    from vtp.local.models import for_service

    endpoints = Endpoints(service, for_service(service))
    add_routes(router, endpoints)
    service.on_start.append(endpoints.restart_servers)
