"""Vertex ML Metadata on the local service: what Vertex Experiments and pipelines record.

Metadata stores hold contexts (an experiment, a run, a pipeline run), artifacts (a dataset, a
model, metrics) and executions (a step), each with a schema title and a free-form `metadata`
Struct; contexts hold artifacts and executions and have child contexts; events say which
artifacts an execution read (INPUT) and wrote (OUTPUT). As on Vertex:

- `metadataStores/default` exists in every project and location once anything asks for it;
- create takes the ID from `contextId`, `artifactId`, `executionId`, `metadataSchemaId` (else
  one is generated); a taken ID is ALREADY_EXISTS;
- update without `updateMask` changes the fields the request sets, and merges `metadata` key by
  key (what the SDK sends is its whole copy, merged on its side); `allowMissing` creates;
- lists take AIP-160 filters with `in_context("<context>")` and `parent_contexts:"<context>"`,
  and `orderBy` on `create_time`, `update_time`, `display_name`;
- deletes and purges are done Operations; a delete takes the resource's links with it.
"""

import json
from datetime import UTC, datetime
from typing import Any

from google.cloud.aiplatform_v1 import Event, LineageSubgraph, MetadataStore

from vtp.local.base import errors
from vtp.local.base.filters import compile_filter
from vtp.local.base.named_store import split
from vtp.local.base.names import location
from vtp.local.base.resources import (
    ORDER_FIELDS,
    Page,
    chosen_id,
    matching_page,
    new_id,
    rest_json,
    set_times,
)
from vtp.local.base.routing import mask_fields, parse_message, set_fields
from vtp.local.base.services import DatabaseService
from vtp.local.metadata.store import MESSAGES, SCHEMA, MetadataStoreDb
from vtp.local.service import Service

DEFAULT_STORE = "default"
KINDS = {
    "metadataStores": "MetadataStore",
    "contexts": "Context",
    "artifacts": "Artifact",
    "executions": "Execution",
    "metadataSchemas": "MetadataSchema",
}
"""Each collection and the resource kind its errors name."""
NODE_KINDS = ("contexts", "artifacts", "executions")
UPDATABLE = (
    "display_name",
    "description",
    "labels",
    "schema_title",
    "schema_version",
    "metadata",
    "uri",
    "state",
)
FILTER_FUNCTIONS = ("in_context",)
SCHEMA_ORDER_FIELDS = ("create_time",)
"""A metadata schema has no display name and is never updated."""
DEFAULT_PAGE_SIZE = 100
PURGE_SAMPLE = 100


class Metadata(DatabaseService[MetadataStoreDb]):
    """Metadata stores and everything in them."""

    def __init__(self, root: Service) -> None:
        super().__init__(root.config.state_dir / "metadata.db", SCHEMA, MetadataStoreDb)
        self.root = root

    # Metadata stores.

    def create_store(self, parent: str, body: bytes, store_id: str, version: str) -> dict:
        """Create a metadata store; return the done Operation."""
        store = parse_message(MetadataStore, body)
        store.name = f"{location(parent)}/metadataStores/{chosen_id('metadataStoreId', store_id)}"
        set_times(store, datetime.now(UTC), "create_time", "update_time")
        with self._lock:
            self.store.nodes.insert(store)
        return self.root.operations.finished(
            location(parent),
            "CreateMetadataStoreOperationMetadata",
            self.get_store(store.name),
            version,
        )

    def get_store(self, name: str) -> MetadataStore:
        """The metadata store `name` means; `default` comes into being when first asked for."""
        found = self.store.nodes.find(name, "metadataStores")
        if found is None:
            parent, _, store_id = split(name)
            if store_id != DEFAULT_STORE or "-" in parent.split("/") or not _is_location(parent):
                raise errors.not_found(f"MetadataStore {name} not found.")
            found = MetadataStore(name=name, description="The default metadata store.")
            set_times(found, datetime.now(UTC), "create_time", "update_time")
            with self._lock:
                if self.store.nodes.find(name, "metadataStores") is None:
                    self.store.nodes.insert(found)
        return found

    def list_stores(self, parent: str, filter: str, size: int, token: str) -> Page:
        """One page of the metadata stores of a location."""
        stores = list(self.store.nodes.children(location(parent), "metadataStores"))
        return matching_page(
            stores, filter, size, token, DEFAULT_PAGE_SIZE, functions=FILTER_FUNCTIONS
        )

    def delete_store(self, name: str) -> dict:
        """Delete a metadata store with everything in it."""
        store = self.get_store(name)
        with self._lock:
            self.store.forget(self.store.nodes.delete(store.name))
        return self.root.operations.deleted(split(store.name)[0])

    # Contexts, artifacts, executions, metadata schemas.

    def create(self, kind: str, parent: str, body: bytes, resource_id: str) -> Any:
        """Create a context, artifact, execution or metadata schema in store `parent`."""
        store = self.get_store(parent)
        resource = parse_message(MESSAGES[kind], body)
        id_field = f"{KINDS[kind][0].lower()}{KINDS[kind][1:]}Id"
        resource.name = f"{store.name}/{kind}/{chosen_id(id_field, resource_id)}"
        now = datetime.now(UTC)
        set_times(
            resource, now, "create_time", *([] if kind == "metadataSchemas" else ["update_time"])
        )
        if kind == "contexts":
            del resource.parent_contexts[:]
        if kind != "metadataSchemas":
            resource.etag = new_id()
        with self._lock:
            self.store.nodes.insert(resource)
        return self.get(kind, resource.name)

    def get(self, kind: str, name: str) -> Any:
        """The resource of `kind` that `name` means; NOT_FOUND naming it."""
        found = self.store.nodes.get(name, kind)
        if kind == "contexts":
            found.parent_contexts = self.store.parents(found.name)
        return found

    def listing(
        self, kind: str, parent: str, filter: str, order_by: str, size: int, token: str
    ) -> Page:
        """One page of the resources of `kind` in store `parent` that match `filter`."""
        store = self.get_store(parent)
        resources = list(self.store.nodes.children(store.name, kind))
        if kind == "contexts":
            for context in resources:
                context.parent_contexts = self.store.parents(context.name)

        def as_dict(resource: Any) -> dict:
            extra = {"inContext": self.store.contexts_of(resource.name)}
            return _dict(resource, **extra)

        allowed = SCHEMA_ORDER_FIELDS if kind == "metadataSchemas" else ORDER_FIELDS
        return matching_page(
            resources, filter, size, token, DEFAULT_PAGE_SIZE,
            order_by=order_by, allowed=allowed, as_dict=as_dict, functions=FILTER_FUNCTIONS,
        )  # fmt: skip

    def update(
        self, kind: str, name: str, body: bytes, mask: str, allow_missing: bool = False
    ) -> Any:
        """Apply a PATCH: the fields `mask` names, else those the body sets; `metadata` merges."""
        change = parse_message(MESSAGES[kind], body)
        fields = mask_fields(mask) or set_fields(body, UPDATABLE)
        for field in fields:
            if field not in UPDATABLE or field not in MESSAGES[kind].meta.fields:
                raise errors.invalid_argument(
                    f"updateMask: {field!r} cannot be updated; updatable: {', '.join(UPDATABLE)}."
                )
        if allow_missing and self.store.nodes.find(name, kind) is None:
            store_name, _, resource_id = name.rpartition(f"/{kind}/")
            return self.create(kind, store_name, body, resource_id)
        with self._lock:
            found = self.store.nodes.get(name, kind)
            for field in fields:
                if field == "metadata":
                    merged = {**_struct(found), **_struct(change)}
                    found.metadata = merged
                else:
                    setattr(found, field, getattr(change, field))
            set_times(found, datetime.now(UTC), "update_time")
            found.etag = new_id()
            self.store.nodes.update(found)
        return self.get(kind, found.name)

    def put(self, kind: str, resource: Any) -> Any:
        """Create the context, artifact or execution `resource.name` names, or bring the stored
        one to `resource` (its `metadata` merged key by key): how the service's own parts record
        what they run (pipeline runs), by names they choose."""
        store_name, _, resource_id = resource.name.rpartition(f"/{kind}/")
        self.get_store(store_name)
        chosen_id(f"{KINDS[kind][0].lower()}{KINDS[kind][1:]}Id", resource_id)
        now = datetime.now(UTC)
        with self._lock:
            found = self.store.nodes.find(resource.name, kind)
            created = found is None
            if found is None:
                found = MESSAGES[kind](resource)
                set_times(found, now, "create_time")
                if kind == "contexts":
                    del found.parent_contexts[:]
            else:
                for field in UPDATABLE:
                    if field == "metadata":
                        found.metadata = {**_struct(found), **_struct(resource)}
                    elif field in MESSAGES[kind].meta.fields:
                        setattr(found, field, getattr(resource, field))
            set_times(found, now, "update_time")
            found.etag = new_id()
            if created:
                self.store.nodes.insert(found)
            else:
                self.store.nodes.update(found)
        return self.get(kind, found.name)

    def delete(self, kind: str, name: str) -> dict:
        """Delete a context, artifact or execution with its links; the done Operation."""
        resource = self.get(kind, name)
        with self._lock:
            self.store.forget(self.store.nodes.delete(resource.name))
        return self.root.operations.deleted(location(resource.name))

    def purge(self, kind: str, parent: str, body: dict, version: str) -> dict:
        """Delete the resources of `kind` that match `filter` (only count them unless `force`)."""
        filter = body.get("filter")
        force = body.get("force", False)
        if not isinstance(filter, str) or not filter.strip():
            raise errors.invalid_argument("filter is required: say what to purge.")
        if not isinstance(force, bool):
            raise errors.invalid_argument(f"Invalid force {force!r}: expected true or false.")
        store = self.get_store(parent)
        everything, token = self.listing(kind, store.name, filter, "", 1000, "")
        while token:
            more, token = self.listing(kind, store.name, filter, "", 1000, token)
            everything += more
        if force:
            with self._lock:
                for resource in everything:
                    self.store.forget(self.store.nodes.delete(resource.name))
        singular = KINDS[kind]
        api = f"type.googleapis.com/google.cloud.aiplatform.{version}"
        response = {
            "@type": f"{api}.Purge{singular}sResponse",
            "purgeCount": str(len(everything)),
            "purgeSample": [r.name for r in everything[:PURGE_SAMPLE]],
        }
        operation = self.root.operations.finished(
            location(store.name), f"Purge{singular}sMetadata", MetadataStore(), version
        )
        operation["response"] = response
        return self.root.operations.put(operation)

    # The graph.

    def add_context_members(
        self, context: str, artifacts: list[str], executions: list[str]
    ) -> None:
        """Put artifacts and executions in a context; each must exist (NOT_FOUND)."""
        found = self.get("contexts", context)
        names = [self.get("artifacts", a).name for a in artifacts]
        names += [self.get("executions", e).name for e in executions]
        with self._lock:
            self.store.add_members(found.name, names)

    def add_context_children(self, context: str, children: list[str]) -> None:
        """Make contexts children of `context`; a cycle is INVALID_ARGUMENT."""
        parent = self.get("contexts", context)
        with self._lock:
            for child_name in children:
                child = self.get("contexts", child_name)
                if child.name == parent.name or parent.name in self._descendants(child.name):
                    raise errors.invalid_argument(
                        f"childContexts: adding {child.name} under {parent.name} makes a cycle."
                    )
                self.store.add_child(parent.name, child.name)

    def remove_context_children(self, context: str, children: list[str]) -> None:
        """Undo `add_context_children`."""
        parent = self.get("contexts", context)
        with self._lock:
            for child in children:
                self.store.remove_child(parent.name, self.get("contexts", child).name)

    def add_execution_events(self, execution: str, events: list[Event]) -> None:
        """Record an execution's inputs and outputs; each artifact must exist."""
        found = self.get("executions", execution)
        now = datetime.now(UTC)
        checked = []
        for event in events:
            if not event.artifact:
                raise errors.invalid_argument("events: each event needs its artifact.")
            if event.type_ == Event.Type.TYPE_UNSPECIFIED:
                raise errors.invalid_argument("events: each event needs its type, INPUT or OUTPUT.")
            event.artifact = self.get("artifacts", event.artifact).name
            event.execution = found.name
            if "event_time" not in event:
                set_times(event, now, "event_time")
            checked.append(event)
        with self._lock:
            for event in checked:
                self.store.add_event(event)

    def execution_events(self, execution: str) -> list[Event]:
        """The events of an execution, oldest first."""
        return self.store.events(execution=self.get("executions", execution).name)

    def context_subgraph(self, context: str) -> LineageSubgraph:
        """The artifacts and executions in a context (and its child contexts), with the events
        between them."""
        found = self.get("contexts", context)
        members: list[str] = []
        for name in [found.name, *self._descendants(found.name)]:
            members += [m for m in self.store.members(name) if m not in members]
        artifacts = [m for m in members if split(m)[1] == "artifacts"]
        executions = [m for m in members if split(m)[1] == "executions"]
        events = [
            e
            for execution in executions
            for e in self.store.events(execution=execution)
            if e.artifact in artifacts
        ]
        return self._subgraph(artifacts, executions, events)

    def execution_subgraph(self, execution: str) -> LineageSubgraph:
        """An execution, its input and output artifacts and their events."""
        found = self.get("executions", execution)
        events = self.store.events(execution=found.name)
        artifacts = list(dict.fromkeys(e.artifact for e in events))
        return self._subgraph(artifacts, [found.name], events)

    def artifact_subgraph(
        self, artifact: str, max_hops: int | None, filter: str
    ) -> LineageSubgraph:
        """The lineage around an artifact: executions that read or wrote it, their artifacts,
        and so on for `max_hops` event edges (all of it when None); `filter` keeps artifacts."""
        found = self.get("artifacts", artifact)
        predicate = compile_filter(filter, FILTER_FUNCTIONS)
        artifacts, executions, events = [found.name], list[str](), list[Event]()
        frontier, hops = [found.name], 0
        while frontier and (max_hops is None or hops < max_hops):
            hops += 1
            following = []
            for name in frontier:
                kind = split(name)[1]
                edges = (
                    self.store.events(artifact=name)
                    if kind == "artifacts"
                    else self.store.events(execution=name)
                )
                for event in edges:
                    other = event.execution if kind == "artifacts" else event.artifact
                    seen = executions if kind == "artifacts" else artifacts
                    if other not in seen:
                        seen.append(other)
                        following.append(other)
                    if event not in events:
                        events.append(event)
            frontier = following
        kept = [
            a for a in artifacts if a == found.name or predicate(_dict(self.get("artifacts", a)))
        ]
        events = [e for e in events if e.artifact in kept and e.execution in executions]
        return self._subgraph(kept, executions, events)

    def _subgraph(
        self, artifacts: list[str], executions: list[str], events: list[Event]
    ) -> LineageSubgraph:
        return LineageSubgraph(
            artifacts=[self.get("artifacts", a) for a in artifacts],
            executions=[self.get("executions", e) for e in executions],
            events=events,
        )

    def _descendants(self, context: str) -> list[str]:
        found, frontier = [], [context]
        while frontier:
            following = []
            for name in frontier:
                for child in self.store.children(name):
                    if child not in found:
                        found.append(child)
                        following.append(child)
            frontier = following
        return found


def _is_location(parent: str) -> bool:
    parts = parent.split("/")
    return len(parts) == 4 and parts[0] == "projects" and parts[2] == "locations"


def _struct(resource: Any) -> dict:
    return json.loads(rest_json(resource)).get("metadata", {})


def _dict(resource: Any, **extra: object) -> dict:
    return {**json.loads(rest_json(resource)), **extra}
