"""Training pipelines of the local service (what the SDK's CustomTrainingJob classes create):
`service` (a CustomJob, then the model upload it describes) and `routes`, which
`vtp.local.server.build_router` adds through `register`.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from vtp.local.base.routing import Router
    from vtp.local.custom_jobs.service import LocalVertex


def register(service: "LocalVertex", router: "Router") -> None:
    """Add the trainingPipelines routes of `service` to `router`; resume unfinished ones."""
    from vtp.local.models import for_service
    from vtp.local.training_pipelines.routes import add_routes
    from vtp.local.training_pipelines.service import TrainingPipelines

    pipelines = TrainingPipelines(service, for_service(service))
    add_routes(router, pipelines)
    service.on_start.append(pipelines.resume)
