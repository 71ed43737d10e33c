"""Vertex's `datasets` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/datasets                     create -> Operation
    GET    /v1/projects/{p}/locations/{l}/datasets                     list
    GET    /v1/projects/{p}/locations/{l}/datasets/{d}                 get
    PATCH  /v1/projects/{p}/locations/{l}/datasets/{d}?updateMask=     update
    DELETE /v1/projects/{p}/locations/{l}/datasets/{d}                 delete -> Operation
    POST   .../datasets/{d}:import   {"importConfigs": [...]}          -> Operation
    POST   .../datasets/{d}:export   {"exportConfig": {...}}           -> Operation
    GET    .../datasets/{d}/dataItems                                  list data items
    GET    .../datasets/{d}/operations/{op}                            the operations above

(and the same under /v1beta1/; operations also under /ui/). Enums are names, or integers when
the request asks for `$alt=json;enum-encoding=int`.
"""

import json
from collections.abc import Callable

from vtp.local.base.resources import rest_json
from vtp.local.base.routing import (
    Collection,
    Request,
    Router,
    list_page,
)
from vtp.local.datasets.service import Datasets

DATASETS = Collection("datasets", "dataset")


def add_routes(router: Router, datasets: Datasets) -> None:
    """Route the datasets methods to `datasets`."""
    router.add("POST", DATASETS.path, lambda r: json.dumps(datasets.create(_parent(r), r.body)))
    DATASETS.add_standard(router, datasets.get, datasets.list, datasets.delete)
    router.add("PATCH", DATASETS.item, lambda r: _update(datasets, r))
    router.add("POST", DATASETS.item + ":import", lambda r: _act(datasets.import_data, r))
    router.add("POST", DATASETS.item + ":export", lambda r: _act(datasets.export_data, r))
    router.add("GET", DATASETS.item + "/dataItems", lambda r: _items(datasets, r))
    DATASETS.add_operations(router, datasets.root.operations.get)


def _parent(request: Request) -> str:
    return request.params["parent"]


def _update(datasets: Datasets, request: Request) -> str:
    dataset = datasets.update(DATASETS.name(request), request.body, request.arg("updateMask"))
    return rest_json(dataset, request.enum_ints)


def _act(action: Callable[[str, bytes], dict], request: Request) -> str:
    return json.dumps(action(DATASETS.name(request), request.body))


def _items(datasets: Datasets, request: Request) -> str:
    args = request.list_args()
    found, token = datasets.list_data_items(
        DATASETS.name(request), args.filter, args.page_size, args.page_token
    )
    return list_page(
        "dataItems", [json.loads(rest_json(i, request.enum_ints)) for i in found], token
    )
