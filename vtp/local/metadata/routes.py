"""Vertex ML Metadata's REST routes (MetadataService), added to the local service's router.

    POST   {location}/metadataStores?metadataStoreId=         create -> Operation
    GET    {location}/metadataStores[/{s}]                    list, get
    DELETE {location}/metadataStores/{s}                      delete -> Operation
    POST   {store}/{kind}?{kind}Id=                           create a context, artifact,
    GET    {store}/{kind}[/{id}]                              execution, metadata schema; list, get
    PATCH  {store}/{kind}/{id}?updateMask=&allowMissing=      update (not metadataSchemas)
    DELETE {store}/{kind}/{id}                                delete -> Operation
    POST   {store}/{kind}:purge  {"filter", "force"}          purge -> Operation
    POST   {store}/contexts/{id}:addContextArtifactsAndExecutions  {"artifacts", "executions"}
    POST   {store}/contexts/{id}:addContextChildren / :removeContextChildren  {"childContexts"}
    GET    {store}/contexts/{id}:queryContextLineageSubgraph
    POST   {store}/executions/{id}:addExecutionEvents  {"events": [...]}
    GET    {store}/executions/{id}:queryExecutionInputsAndOutputs
    GET    {store}/artifacts/{id}:queryArtifactLineageSubgraph?maxHops=&filter=

({location} is /v1/projects/{p}/locations/{l}, and the same under /v1beta1/.)
"""

import json
from collections.abc import Callable
from urllib.parse import unquote

from google.cloud.aiplatform_v1 import AddExecutionEventsRequest

from vtp.local.base import errors
from vtp.local.base.resources import rest_json
from vtp.local.base.routing import Request, Router, collection, list_page, parse_message
from vtp.local.metadata.service import NODE_KINDS, Metadata

STORES = collection("metadataStores")
STORE = STORES + "/(?P<store>[^/:]+)"
ID = "/(?P<id>[^/:]+)"


def add_routes(router: Router, metadata: Metadata) -> None:
    """Route the MetadataService methods to `metadata`."""
    router.add("POST", STORES, lambda r: _create_store(metadata, r))
    router.add("GET", STORES, lambda r: _list_stores(metadata, r))
    router.add("GET", STORE, lambda r: rest_json(metadata.get_store(_store(r)), r.enum_ints))
    router.add("DELETE", STORE, lambda r: json.dumps(metadata.delete_store(_store(r))))
    for kind in (*NODE_KINDS, "metadataSchemas"):
        _add_kind(router, metadata, kind)
    contexts = f"{STORE}/contexts{ID}"
    router.add(
        "POST", contexts + ":addContextArtifactsAndExecutions", lambda r: _members(metadata, r)
    )
    router.add("POST", contexts + ":addContextChildren", lambda r: _children(metadata, r, True))
    router.add("POST", contexts + ":removeContextChildren", lambda r: _children(metadata, r, False))
    router.add(
        "GET",
        contexts + ":queryContextLineageSubgraph",
        lambda r: rest_json(metadata.context_subgraph(_name(r, "contexts")), r.enum_ints),
    )
    executions = f"{STORE}/executions{ID}"
    router.add("POST", executions + ":addExecutionEvents", lambda r: _events(metadata, r))
    router.add(
        "GET",
        executions + ":queryExecutionInputsAndOutputs",
        lambda r: rest_json(metadata.execution_subgraph(_name(r, "executions")), r.enum_ints),
    )
    router.add(
        "GET",
        f"{STORE}/artifacts{ID}:queryArtifactLineageSubgraph",
        lambda r: _artifact_lineage(metadata, r),
    )


def _add_kind(router: Router, metadata: Metadata, kind: str) -> None:
    items, item = f"{STORE}/{kind}", f"{STORE}/{kind}{ID}"
    id_param = kind[:-1] + "Id"

    def create(request: Request) -> str:
        found = metadata.create(kind, _store(request), request.body, request.arg(id_param))
        return rest_json(found, request.enum_ints)

    def listing(request: Request) -> str:
        args = request.list_args()
        found, token = metadata.listing(
            kind, _store(request), args.filter, args.order_by, args.page_size, args.page_token
        )
        return list_page(kind, [json.loads(rest_json(m, request.enum_ints)) for m in found], token)

    router.add("POST", items, create)
    router.add("GET", items, listing)
    router.add("GET", item, lambda r: rest_json(metadata.get(kind, _name(r, kind)), r.enum_ints))
    if kind == "metadataSchemas":
        return

    def update(request: Request) -> str:
        allow_missing = _flag(request, "allowMissing")
        found = metadata.update(
            kind, _name(request, kind), request.body, request.arg("updateMask"), allow_missing
        )
        return rest_json(found, request.enum_ints)

    def purge(request: Request) -> str:
        operation = metadata.purge(kind, _store(request), request.json(), _version(request))
        return json.dumps(operation)

    router.add("PATCH", item, update)
    router.add("DELETE", item, lambda r: json.dumps(metadata.delete(kind, _name(r, kind))))
    router.add("POST", items + ":purge", purge)


def _create_store(metadata: Metadata, request: Request) -> str:
    operation = metadata.create_store(
        request.params["parent"], request.body, request.arg("metadataStoreId"), _version(request)
    )
    return json.dumps(operation)


def _list_stores(metadata: Metadata, request: Request) -> str:
    args = request.list_args()
    found, token = metadata.list_stores(
        request.params["parent"], args.filter, args.page_size, args.page_token
    )
    items = [json.loads(rest_json(m, request.enum_ints)) for m in found]
    return list_page("metadataStores", items, token)


def _members(metadata: Metadata, request: Request) -> str:
    body = request.json()
    metadata.add_context_members(
        _name(request, "contexts"), _names(body, "artifacts"), _names(body, "executions")
    )
    return "{}"


def _children(metadata: Metadata, request: Request, add: bool) -> str:
    change: Callable[[str, list[str]], None] = (
        metadata.add_context_children if add else metadata.remove_context_children
    )
    change(_name(request, "contexts"), _names(request.json(), "childContexts"))
    return "{}"


def _events(metadata: Metadata, request: Request) -> str:
    parsed = parse_message(AddExecutionEventsRequest, request.body)
    metadata.add_execution_events(_name(request, "executions"), list(parsed.events))
    return "{}"


def _artifact_lineage(metadata: Metadata, request: Request) -> str:
    hops = request.arg("maxHops")
    max_hops = None
    if hops:
        try:
            max_hops = int(hops)
        except ValueError:
            max_hops = -1
        if max_hops < 0:
            raise errors.invalid_argument(f"Invalid maxHops {hops!r}: expected an integer >= 0.")
    subgraph = metadata.artifact_subgraph(
        _name(request, "artifacts"), max_hops, request.arg("filter")
    )
    return rest_json(subgraph, request.enum_ints)


def _names(body: dict, key: str) -> list[str]:
    value = body.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise errors.invalid_argument(f"{key}: expected a list of resource names.")
    return value


def _flag(request: Request, key: str) -> bool:
    value = request.arg(key, "false").lower()
    if value not in ("true", "false", "1", "0"):
        raise errors.invalid_argument(f"Invalid {key} {value!r}: expected true or false.")
    return value in ("true", "1")


def _store(request: Request) -> str:
    return f"{request.params['parent']}/metadataStores/{unquote(request.params['store'])}"


def _name(request: Request, kind: str) -> str:
    return f"{_store(request)}/{kind}/{unquote(request.params['id'])}"


def _version(request: Request) -> str:
    return request.params["version"]
