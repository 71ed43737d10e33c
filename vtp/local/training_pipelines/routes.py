"""Vertex's `trainingPipelines` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/trainingPipelines              create (TrainingPipeline)
    GET    /v1/projects/{p}/locations/{l}/trainingPipelines              list
    GET    /v1/projects/{p}/locations/{l}/trainingPipelines/{id}         get
    POST   /v1/projects/{p}/locations/{l}/trainingPipelines/{id}:cancel  cancel -> {}
    DELETE /v1/projects/{p}/locations/{l}/trainingPipelines/{id}         delete -> Operation

(and the same under /v1beta1/). Enums are names, or integers when the request asks for
`$alt=json;enum-encoding=int`.
"""

from vtp.local.base.routing import Collection, Router
from vtp.local.training_pipelines.service import TrainingPipelines

PIPELINES = Collection("trainingPipelines", "pipeline")


def add_routes(router: Router, pipelines: TrainingPipelines) -> None:
    """Route the trainingPipelines methods to `pipelines`."""
    PIPELINES.add_create(router, pipelines.create)
    PIPELINES.add_standard(router, pipelines.get, pipelines.list, pipelines.delete)
    PIPELINES.add_action(router, "cancel", pipelines.cancel)
