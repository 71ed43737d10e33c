"""Vertex-style schedules in the local Vertex service: crons that create pipeline jobs.

Pure piece: `cron` (Vertex's `TZ=Zone m h dom mon dow` and its fire times). Service pieces:
`service` (the API and the ticker thread) and `routes`, which `vtp.local.server.build_router`
adds through `register`. Runs are created through the service's `vtp.local.pipeline_jobs`.
"""

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtp.local.base.routing import Router
    from vtp.local.custom_jobs.service import LocalVertex
    from vtp.local.schedules.service import Schedules

_by_service: "weakref.WeakKeyDictionary[LocalVertex, Schedules]" = weakref.WeakKeyDictionary()


def for_service(service: "LocalVertex") -> "Schedules":
    """The one Schedules of `service` (tests set its `clock`)."""
    from vtp.local import pipeline_jobs
    from vtp.local.schedules.service import Schedules

    if service not in _by_service:
        _by_service[service] = Schedules(service, pipeline_jobs.for_service(service))
    return _by_service[service]


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the schedules routes of `service` to `router`."""
    from vtp.local.schedules.routes import add_routes

    add_routes(router, for_service(service))
