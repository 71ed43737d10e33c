"""Vertex's `persistentResources` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/persistentResources?persistentResourceId=ID
                                                                  create -> Operation
    GET    /v1/projects/{p}/locations/{l}/persistentResources    list (filter, pageSize, ...)
    GET    .../persistentResources/{id}                           get
    DELETE .../persistentResources/{id}                           delete -> Operation
    POST   .../persistentResources/{id}:reboot                    reboot -> Operation
    GET    .../persistentResources/{id}/operations/{op}[:wait]

(and the same under /v1beta1/; operations also under /ui/). Over gRPC, the aiplatform SDK's
`PersistentResourceService` reaches the same routes (`grpc_server.py`).
"""

import json

from vtp.local.base.routing import Collection, Request, Router
from vtp.local.persistent_resources.service import PersistentResources

RESOURCES = Collection("persistentResources", "resource")


def add_routes(router: Router, resources: PersistentResources) -> None:
    """Route the persistentResources methods to `resources`."""
    router.add("POST", RESOURCES.path, lambda r: _create(resources, r))
    RESOURCES.add_standard(router, resources.get, resources.list, resources.delete)
    router.add(
        "POST",
        RESOURCES.item + ":reboot",
        lambda r: json.dumps(resources.reboot(RESOURCES.name(r), r.params["version"])),
    )
    RESOURCES.add_operations(router, resources.root.operations.get)


def _create(resources: PersistentResources, request: Request) -> str:
    parent, version = request.params["parent"], request.params["version"]
    operation = resources.create(parent, request.body, request.arg("persistentResourceId"), version)
    return json.dumps(operation)
