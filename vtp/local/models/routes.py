"""Vertex's `models` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/models:upload                  upload -> Operation
    GET    /v1/projects/{p}/locations/{l}/models                         list
    GET    /v1/projects/{p}/locations/{l}/models/{id}[@{version}]        get
    GET    /v1/projects/{p}/locations/{l}/models/{id}:listVersions       list versions
    DELETE /v1/projects/{p}/locations/{l}/models/{id}                    delete -> Operation
    PATCH  /v1/projects/{p}/locations/{l}/models/{id}[@{v}]?updateMask=  update a version
    POST   .../models/{id}@{v}:mergeVersionAliases  {"versionAliases": ["a", "-b"]}
    DELETE .../models/{id}@{v}:deleteVersion                             -> Operation
    GET    /v1/projects/{p}/locations/{l}/models/{id}/operations/{op}    get an upload Operation
    POST   /v1/projects/{p}/locations/{l}/models/{id}/operations/{op}:wait

(and the same under /v1beta1/; operations also under /ui/, where the aiplatform clients look
for them first). Lists take `filter`, `orderBy`, `pageSize` and `pageToken`.
Responses write enums as names, or as integers when the request asks for
`$alt=json;enum-encoding=int` (the aiplatform REST transport does).
"""

import json
from urllib.parse import unquote

from vtp.local.base import errors
from vtp.local.base.routing import (
    OPERATIONS_PARENT,
    Request,
    Router,
    collection,
    list_page,
    operation_routes,
    resource,
)
from vtp.local.models.service import ModelRegistry
from vtp.local.models.upload import model_json

_MODELS = collection("models")
_MODEL = resource("models", "model")


def add_routes(router: Router, registry: ModelRegistry) -> None:
    """Route the models methods to `registry`."""
    router.add("POST", _MODELS + ":upload", lambda r: _upload(registry, r))
    router.add("GET", _MODELS, lambda r: _list(registry, r))
    router.add("GET", _MODEL, lambda r: model_json(registry.get(_name(r)), r.enum_ints))
    router.add("GET", _MODEL + ":listVersions", lambda r: _list_versions(registry, r))
    router.add("DELETE", _MODEL, lambda r: json.dumps(registry.delete(_name(r))))
    router.add("DELETE", _MODEL + ":deleteVersion", lambda r: _delete_version(registry, r))
    router.add("PATCH", _MODEL, lambda r: _update(registry, r))
    router.add("POST", _MODEL + ":mergeVersionAliases", lambda r: _merge_aliases(registry, r))
    operation_routes(router, OPERATIONS_PARENT + "/models/[^/:]+", registry.root.operations.get)


def _upload(registry: ModelRegistry, request: Request) -> str:
    return json.dumps(registry.upload(request.params["parent"], request.body))


def _update(registry: ModelRegistry, request: Request) -> str:
    body = request.json()
    payload = json.dumps(body.get("model", body)).encode()
    model = registry.update(_name(request), payload, request.arg("updateMask"))
    return model_json(model, request.enum_ints)


def _merge_aliases(registry: ModelRegistry, request: Request) -> str:
    aliases = request.json().get("versionAliases")
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise errors.invalid_argument("versionAliases: expected a list of strings.")
    return model_json(registry.merge_version_aliases(_name(request), aliases), request.enum_ints)


def _delete_version(registry: ModelRegistry, request: Request) -> str:
    return json.dumps(registry.delete_version(_name(request)))


def _list(registry: ModelRegistry, request: Request) -> str:
    models, token = registry.list_models(request.params["parent"], *_list_args(request))
    return list_page(
        "models", [json.loads(model_json(m, request.enum_ints)) for m in models], token
    )


def _list_versions(registry: ModelRegistry, request: Request) -> str:
    models, token = registry.list_versions(_name(request), *_list_args(request))
    return list_page(
        "models", [json.loads(model_json(m, request.enum_ints)) for m in models], token
    )


def _list_args(request: Request) -> tuple[str, str, int, str]:
    args = request.list_args()
    return args.filter, args.order_by, args.page_size, args.page_token


def _name(request: Request) -> str:
    # Clients may percent-encode the `@` of `models/ID@VERSION`.
    return f"{request.params['parent']}/models/{unquote(request.params['model'])}"
