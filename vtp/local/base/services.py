"""What resource services have in common, written once.

`DatabaseService` is a service whose whole state is one SQLite file of the state directory,
changed under one lock, with nothing running in the background (ML Metadata, TensorBoard, Vizier,
the Model Registry). `CollectionService` is the read side of one collection kept as `Stored` rows:
`get` and `list` with Vertex's name rule (`projects/-/locations/-/...`), NOT_FOUND wording and
AIP-160 filters; batch prediction, training pipelines, datasets, endpoints, pipeline jobs,
schedules, tuning jobs and Vizier studies each declare their collection and inherit both.
`RunningCollection` adds what resources that run in threads of this service share (batch
prediction jobs, training pipelines): their state changes, a cancel asked for, the end, and
delete once ended.
"""

import threading
from collections.abc import Callable, Collection, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar, Generic, Protocol, TypeVar

import proto

from vtp.local.base import errors
from vtp.local.base.names import find
from vtp.local.base.operations import Operations
from vtp.local.base.resources import matching_page, require_ended, set_times
from vtp.local.base.sqlite import Database
from vtp.local.base.store import Record, ResourceStore, Stored
from vtp.local.base.threads import Workers

M = TypeVar("M", bound=proto.Message)
S = TypeVar("S", bound=Stored)
S_co = TypeVar("S_co", bound=Stored, covariant=True)
D = TypeVar("D")


class Rows(Protocol[S_co]):
    """A store of one collection, looked up by ID and listed by parent (`-` allowed)."""

    def get(self, resource_id: str, /) -> S_co | None:
        """The row with this ID, or None."""

    def all(self, parent: str, /) -> Iterator[S_co]:
        """Rows in creation order under `parent`."""


class DatabaseService(Generic[D]):
    """A service kept in one SQLite file, `path`, opened with `schema` and read through `store`
    (built by `store_type` over the file); nothing runs until a request comes, so `start` has
    nothing to do and `close` closes the file."""

    def __init__(self, path: Path, schema: str, store_type: Callable[[Database], D]) -> None:
        self._db = Database(path, schema)
        self._lock = threading.Lock()
        self.store: D = store_type(self._db)

    def start(self) -> None:
        """Nothing runs in the background: the resources change only when asked to."""

    def close(self) -> None:
        """Close the database."""
        self._db.close()


class CollectionService(Generic[M, S]):
    """`get` and `list` of the resources (of message type `M`) in `self.store`, one row `S` each.

    A subclass names its `collection` ("trainingPipelines"), the `kind` NOT_FOUND names
    ("TrainingPipeline") and, where Vertex pages differently, `page_size`.
    """

    collection: ClassVar[str]
    kind: ClassVar[str]
    page_size: ClassVar[int] = 100
    store: Rows[S]

    def get(self, name: str) -> M:
        """The resource `name` means (`-` for any project or location); NOT_FOUND otherwise."""
        resource: M = self._record(name).resource
        return resource

    def _record(self, name: str) -> S:
        """The row `name` means; NOT_FOUND `"{kind} {name} not found."` otherwise."""
        return find(name, self.collection, self.kind, self.store.get, lambda r: r.resource.name)

    def list(
        self, parent: str, filter: str = "", page_size: int = 0, page_token: str = ""
    ) -> tuple[list[M], str]:
        """One page of the resources under `parent` whose REST form matches `filter`, oldest
        first, and the next page token."""
        found = (row.resource for row in self.store.all(parent))
        return matching_page(found, filter, page_size, page_token, self.page_size)


class RunningCollection(CollectionService[M, Record]):
    """Resources that run in threads of this service, kept in `store` (a `ResourceStore`): each
    ends in a state of `ended`, may be deleted only then, and keeps in its row's runtime data
    (`"cancel"`) that a cancel was asked for, so that a restarted service knows."""

    ended: ClassVar[Collection[int]]

    def __init__(self, store: ResourceStore, operations: Operations) -> None:
        self.store: ResourceStore = store
        self.operations = operations
        self._lock = threading.RLock()
        self._workers = Workers()

    def close(self) -> None:
        """Wait for the running threads (the service is closing: a restart resumes their
        resources), then close the store."""
        self._workers.join()
        self.store.close()

    def delete(self, name: str) -> dict:
        """Delete an ended resource; the done Operation (FAILED_PRECONDITION while it runs)."""
        with self._lock:
            record = self._record(name)
            require_ended(record.resource, self.ended)
            self.store.delete(record.id)
        return self.operations.deleted(record.parent)

    def _ask_to_cancel(self, name: str, cancelling: int) -> Record:
        """Mark the resource `name` as asked to cancel, in state `cancelling`; its row. An ended
        one is FAILED_PRECONDITION, as on Vertex."""
        with self._lock:
            record = self._record(name)
            if record.resource.state in self.ended:
                raise errors.already_ended(record.resource.name, record.resource.state.name)
            record.runtime["cancel"] = True
            self._set_state(record, cancelling)
        return record

    def _end(self, record: Record, state: int, code: int = 0, message: str = "") -> None:
        """End the resource in `state`, with the error (`code`, `message`) when `code` is set."""
        with self._lock:
            set_times(record.resource, datetime.now(UTC), "end_time")
            if code:
                record.resource.error = {"code": code, "message": message}
            self._set_state(record, state)

    def _end_after_bug(self, resource_id: str, failed: int, exc: Exception) -> None:
        """End the resource in state `failed`, the exception as its error, unless it has ended:
        a bug met while driving one resource ends that one, and the service goes on."""
        record = self.store.get(resource_id)
        if record is not None and record.resource.state not in self.ended:
            self._end(record, failed, errors.INTERNAL, repr(exc))

    def _set_state(self, record: Record, state: int) -> None:
        """Store the resource in `state` (proto-plus takes the enum's number), updated now."""
        record.resource.state = state
        set_times(record.resource, datetime.now(UTC), "update_time")
        self.store.update(record)
