"""Pipeline jobs in the local Vertex service: the compiled spec of a PipelineJob run by kfp.local.

Pure pieces: `spec` (what a request must hold, the run's typed arguments) and `resource` (the
created resource, the jobs a run's tasks started). Service pieces: `store` (SQLite rows of
resources, shared with `vtp.local.schedules`), `worker` (the process that runs one pipeline
with kfp.local), `process` (that process, watched and cancelled), `service` (the API) and
`routes`, which `vtp.local.server.build_router` adds through `register`.
"""

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtp.local.base.routing import Router
    from vtp.local.custom_jobs.service import LocalVertex
    from vtp.local.pipeline_jobs.service import PipelineJobs

_by_service: "weakref.WeakKeyDictionary[LocalVertex, PipelineJobs]" = weakref.WeakKeyDictionary()


def for_service(service: "LocalVertex") -> "PipelineJobs":
    """The one PipelineJobs of `service` (schedules create their runs through it)."""
    from vtp.local.pipeline_jobs.service import PipelineJobs

    if service not in _by_service:
        _by_service[service] = PipelineJobs(service)
    return _by_service[service]


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the pipelineJobs routes of `service` to `router`."""
    from vtp.local.pipeline_jobs.routes import add_routes

    add_routes(router, for_service(service))
