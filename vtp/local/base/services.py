"""What resource services have in common, written once.

`DatabaseService` is a service whose whole state is one SQLite file of the state directory,
changed under one lock, with nothing running in the background (ML Metadata, TensorBoard, Vizier,
the Model Registry). `CollectionService` is the read side of one collection kept as `Stored` rows:
`get` and `list` with Vertex's name rule (`projects/-/locations/-/...`), NOT_FOUND wording and
AIP-160 filters; batch prediction, training pipelines, datasets, endpoints, schedules, tuning jobs
and Vizier studies each declare their collection and inherit both.
"""

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar, Generic, Protocol, TypeVar

import proto

from vtp.local.base.names import find
from vtp.local.base.resources import matching_page
from vtp.local.base.sqlite import Database
from vtp.local.base.store import Stored

M = TypeVar("M", bound=proto.Message)
S = TypeVar("S", bound=Stored)
S_co = TypeVar("S_co", bound=Stored, covariant=True)


class Rows(Protocol[S_co]):
    """A store of one collection, looked up by ID and listed by parent (`-` allowed)."""

    def get(self, resource_id: str, /) -> S_co | None:
        """The row with this ID, or None."""

    def all(self, parent: str, /) -> Iterator[S_co]:
        """Rows in creation order under `parent`."""


class DatabaseService:
    """A service kept in one SQLite file, `path`, opened with `schema`; nothing runs until a
    request comes, so `start` has nothing to do and `close` closes the file."""

    def __init__(self, path: Path, schema: str) -> None:
        self._db = Database(path, schema)
        self._lock = threading.Lock()

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
