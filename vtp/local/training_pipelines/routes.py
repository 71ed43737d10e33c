"""Vertex's `trainingPipelines` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/trainingPipelines              create (TrainingPipeline)
    GET    /v1/projects/{p}/locations/{l}/trainingPipelines              list
    GET    /v1/projects/{p}/locations/{l}/trainingPipelines/{id}         get
    POST   /v1/projects/{p}/locations/{l}/trainingPipelines/{id}:cancel  cancel -> {}
    DELETE /v1/projects/{p}/locations/{l}/trainingPipelines/{id}         delete -> Operation

(and the same under /v1beta1/). Enums are names, or integers when the request asks for
`$alt=json;enum-encoding=int`.
"""

import json

from google.cloud.aiplatform_v1 import TrainingPipeline

from vtp.local.base.resources import rest_json
from vtp.local.base.routing import Request, Router, collection, list_page, resource
from vtp.local.training_pipelines.service import TrainingPipelines

_PIPELINES = collection("trainingPipelines")
_PIPELINE = resource("trainingPipelines", "pipeline")


def add_routes(router: Router, pipelines: TrainingPipelines) -> None:
    """Route the trainingPipelines methods to `pipelines`."""
    router.add(
        "POST",
        _PIPELINES,
        lambda r: _json(pipelines.create(r.params["parent"], r.body), r.enum_ints),
    )
    router.add("GET", _PIPELINES, lambda r: _list(pipelines, r))
    router.add("GET", _PIPELINE, lambda r: _json(pipelines.get(_name(r)), r.enum_ints))
    router.add("POST", _PIPELINE + ":cancel", lambda r: _cancel(pipelines, r))
    router.add("DELETE", _PIPELINE, lambda r: json.dumps(pipelines.delete(_name(r))))


def _list(pipelines: TrainingPipelines, request: Request) -> str:
    args = request.list_args()
    found, token = pipelines.list_pipelines(
        request.params["parent"], args.filter, args.page_size, args.page_token
    )
    items = [json.loads(_json(p, request.enum_ints)) for p in found]
    return list_page("trainingPipelines", items, token)


def _cancel(pipelines: TrainingPipelines, request: Request) -> str:
    pipelines.cancel(_name(request))
    return "{}"


def _json(pipeline: TrainingPipeline, enum_ints: bool) -> str:
    return rest_json(pipeline, enum_ints)


def _name(request: Request) -> str:
    return f"{request.params['parent']}/trainingPipelines/{request.params['pipeline']}"
