"""SQLite rows of one resource type: a public resource plus private runtime data a row.

Pipeline jobs and schedules (`<state dir>/pipelines.db`), endpoints and training pipelines keep
their resources this way, one small table each. Every change is committed before the service acts
on it, so a restarted service knows which runs were in flight and which process groups may still
be alive.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import proto

from vtp.local.base.names import name_matches
from vtp.local.base.sqlite import Database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL,
    parent TEXT NOT NULL,
    resource TEXT NOT NULL,
    runtime TEXT NOT NULL
);
"""


@dataclass
class Stored:
    """A stored resource of any store, looked up by its ID: what `CollectionService` reads."""

    resource: Any

    @property
    def id(self) -> str:
        """The last part of the resource name."""
        return self.resource.name.rsplit("/", 1)[-1]

    @property
    def parent(self) -> str:
        """`projects/P/locations/L`."""
        return "/".join(self.resource.name.split("/")[:4])


@dataclass
class Record(Stored):
    """A stored resource (`PipelineJob`, `Schedule`) and what only the service needs to know."""

    runtime: dict[str, Any] = field(default_factory=dict)


class ResourceStore:
    """Thread-safe rows of one proto-plus message type in one table."""

    def __init__(self, path: Path, table: str, message: type[proto.Message]) -> None:
        self._table, self._message = table, message
        self._db = Database(path, _SCHEMA.format(table=table))

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def insert(self, record: Record) -> None:
        """Add a new row; raise sqlite3.IntegrityError when the ID is taken."""
        self._db.write(
            f"INSERT INTO {self._table} (id, parent, resource, runtime) VALUES (?, ?, ?, ?)",
            (record.id, record.parent, self._dump(record.resource), json.dumps(record.runtime)),
        )

    def update(self, record: Record) -> None:
        """Replace a row's resource and runtime data."""
        self._db.write(
            f"UPDATE {self._table} SET resource = ?, runtime = ? WHERE id = ?",
            (self._dump(record.resource), json.dumps(record.runtime), record.id),
        )

    def delete(self, resource_id: str) -> None:
        """Remove a row."""
        self._db.write(f"DELETE FROM {self._table} WHERE id = ?", (resource_id,))

    def get(self, resource_id: str) -> Record | None:
        """The row with this ID, or None."""
        rows = self._db.read(
            f"SELECT resource, runtime FROM {self._table} WHERE id = ?", (resource_id,)
        )
        return self._load(*rows[0]) if rows else None

    def all(self, parent: str | None = None) -> Iterator[Record]:
        """Rows in creation order, under `parent` when given (`-` matches any project or
        location)."""
        query = f"SELECT parent, resource, runtime FROM {self._table} ORDER BY seq"
        for row_parent, resource, runtime in self._db.read(query):
            if parent is None or name_matches(parent, row_parent):
                yield self._load(resource, runtime)

    def _dump(self, resource: Any) -> str:
        return self._message.to_json(resource, indent=None)

    def _load(self, resource: str, runtime: str) -> Record:
        return Record(self._message.from_json(resource), json.loads(runtime))
