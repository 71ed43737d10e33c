"""CustomJobs in the local Vertex service: created, queued, run as local processes, recovered.

`store` (SQLite of jobs, live processes, operations), `service` (the API: `LocalVertex`, which
the other resource packages build on, since tuning trials and pipeline tasks are CustomJobs) and
`routes`, which `vtp.local.server.build_router` adds through `register`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtp.local.base.routing import Router
    from vtp.local.custom_jobs.service import LocalVertex


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the customJobs routes over `service` to `router`."""
    from vtp.local.custom_jobs.routes import add_routes

    add_routes(router, service)
