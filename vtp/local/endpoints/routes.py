"""Vertex's `endpoints` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/endpoints[?endpointId=ID]        create -> Operation
    GET    /v1/projects/{p}/locations/{l}/endpoints                        list
    GET    /v1/projects/{p}/locations/{l}/endpoints/{id}                   get
    PATCH  /v1/projects/{p}/locations/{l}/endpoints/{id}?updateMask=...    update
    DELETE /v1/projects/{p}/locations/{l}/endpoints/{id}                   delete -> Operation
    POST   .../endpoints/{id}:deployModel     {deployedModel, trafficSplit} -> Operation
    POST   .../endpoints/{id}:undeployModel   {deployedModelId, trafficSplit} -> Operation
    POST   .../endpoints/{id}:predict         {instances, parameters} -> {predictions, ...}
    POST   .../endpoints/{id}:rawPredict      the model server's own request and answer
    GET    .../endpoints/{id}/operations/{op}[:wait]

(and the same under /v1beta1/; operations also under /ui/).
"""

import base64
import json

from vtp.local.base import errors
from vtp.local.base.resources import rest_json
from vtp.local.base.routing import Collection, Request, Router
from vtp.local.endpoints.service import Endpoints

ENDPOINTS = Collection("endpoints", "endpoint")
_ENDPOINT = ENDPOINTS.item


def add_routes(router: Router, endpoints: Endpoints) -> None:
    """Route the endpoints methods to `endpoints`."""
    router.add("POST", ENDPOINTS.path, lambda r: _create(endpoints, r))
    ENDPOINTS.add_standard(router, endpoints.get, endpoints.list, endpoints.delete)
    router.add("PATCH", _ENDPOINT, lambda r: _update(endpoints, r))
    router.add(
        "POST",
        _ENDPOINT + ":deployModel",
        lambda r: json.dumps(endpoints.deploy(ENDPOINTS.name(r), r.body)),
    )
    router.add(
        "POST",
        _ENDPOINT + ":undeployModel",
        lambda r: json.dumps(endpoints.undeploy(ENDPOINTS.name(r), r.body)),
    )
    router.add("POST", _ENDPOINT + ":predict", lambda r: _predict(endpoints, r, raw=False))
    router.add("POST", _ENDPOINT + ":rawPredict", lambda r: _predict(endpoints, r, raw=True))
    get_operation = endpoints.root.operations.get
    ENDPOINTS.add_operations(router, get_operation)


def _create(endpoints: Endpoints, request: Request) -> str:
    parent = request.params["parent"]
    return json.dumps(endpoints.create(parent, request.body, request.arg("endpointId")))


def _update(endpoints: Endpoints, request: Request) -> str:
    body = request.json()
    payload = json.dumps(body.get("endpoint", body)).encode()  # the SDK sends the resource
    return rest_json(endpoints.update(ENDPOINTS.name(request), payload, request.arg("updateMask")))


def _predict(endpoints: Endpoints, request: Request, raw: bool) -> str:
    payload = request.body
    if raw:  # over gRPC the body arrives wrapped: {"httpBody": {"data": base64}}
        wrapped = request.json().get("httpBody")
        if isinstance(wrapped, dict) and isinstance(wrapped.get("data"), str):
            try:
                payload = base64.b64decode(wrapped["data"])
            except ValueError:
                raise errors.invalid_argument("httpBody.data is not base64.") from None
    status, answer, _ = endpoints.predict(ENDPOINTS.name(request), payload, raw=raw)
    if raw and status != 200:
        raise errors.ApiError(
            errors.INVALID_ARGUMENT if 400 <= status < 500 else errors.INTERNAL,
            f"The model server answered {status}: {answer.decode(errors='replace')[:2000]}",
            http_status=status,
        )
    return answer.decode()
