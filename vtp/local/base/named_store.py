"""SQLite rows of nested resources, keyed by their full name: ML Metadata and TensorBoard.

A name is `projects/P/locations/L/<collection>/<id>[/<collection>/<id>...]`; each row keeps the
resource's last collection (`kind`, which picks its proto-plus message type), its parent (the name
without the last two segments) and the resource as JSON. `-` in a requested name stands for any
project or location (`base/names.py`'s rule); a stored name never holds it.
"""

from collections.abc import Iterator, Mapping
from typing import Any

import proto

from vtp.local.base import errors
from vtp.local.base.names import ANY, name_matches
from vtp.local.base.sqlite import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT UNIQUE NOT NULL,
    kind TEXT NOT NULL,
    parent TEXT NOT NULL,
    resource TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS {table}_parent ON {table} (kind, parent);
"""


def split(name: str) -> tuple[str, str, str]:
    """(parent, kind, id) of a resource name."""
    parent, kind, resource_id = name.rsplit("/", 2) if name.count("/") >= 2 else ("", "", name)
    return parent, kind, resource_id


class NamedStore:
    """Resources of several kinds in one table, by full name."""

    def __init__(
        self, db: Database, table: str, messages: Mapping[str, type[proto.Message]]
    ) -> None:
        self._db, self._table, self._messages = db, table, messages  # db opened with SCHEMA

    def insert(self, resource: Any) -> None:
        """Add a resource; ALREADY_EXISTS when its name is taken."""
        parent, kind, _ = split(resource.name)
        if self._db.read(f"SELECT 1 FROM {self._table} WHERE name = ?", (resource.name,)):
            raise errors.already_exists(f"{resource.name} already exists.")
        self._db.write(
            f"INSERT INTO {self._table} (name, kind, parent, resource) VALUES (?, ?, ?, ?)",
            (resource.name, kind, parent, self._dump(kind, resource)),
        )

    def update(self, resource: Any) -> None:
        """Replace a stored resource."""
        kind = split(resource.name)[1]
        self._db.write(
            f"UPDATE {self._table} SET resource = ? WHERE name = ?",
            (self._dump(kind, resource), resource.name),
        )

    def find(self, name: str, kind: str) -> Any | None:
        """The resource of `kind` that `name` means (`-` for any project or location), or None."""
        if split(name)[1] != kind:
            return None
        if ANY not in name.split("/")[:4]:
            rows = self._db.read(f"SELECT resource FROM {self._table} WHERE name = ?", (name,))
            return self._load(kind, rows[0][0]) if rows else None
        _, _, wanted = split(name)
        rows = self._db.read(
            f"SELECT name, resource FROM {self._table} WHERE kind = ? AND name LIKE ? ORDER BY seq",
            (kind, f"%/{wanted}"),
        )
        for stored, resource in rows:
            if name_matches(name, stored):
                return self._load(kind, resource)
        return None

    def get(self, name: str, kind: str) -> Any:
        """The resource of `kind` that `name` means; NOT_FOUND naming its message type, as Vertex
        does ("TensorboardRun projects/... not found.")."""
        found = self.find(name, kind)
        if found is None:
            raise errors.not_found(f"{self._messages[kind].__name__} {name} not found.")
        return found

    def children(self, parent: str, kind: str) -> Iterator[Any]:
        """The resources of `kind` directly under `parent` (`-` allowed), oldest first."""
        if ANY in parent.split("/")[:4]:
            rows = self._db.read(
                f"SELECT parent, resource FROM {self._table} WHERE kind = ? ORDER BY seq", (kind,)
            )
            found = (resource for stored, resource in rows if name_matches(parent, stored))
        else:
            found = (
                row[0]
                for row in self._db.read(
                    f"SELECT resource FROM {self._table} WHERE kind = ? AND parent = ? "
                    "ORDER BY seq",
                    (kind, parent),
                )
            )
        for resource in found:
            yield self._load(kind, resource)

    def count(self, parent: str, kind: str) -> int:
        """How many resources of `kind` are directly under the stored name `parent`."""
        rows = self._db.read(
            f"SELECT COUNT(*) FROM {self._table} WHERE kind = ? AND parent = ?", (kind, parent)
        )
        return int(rows[0][0])

    def delete(self, name: str) -> list[str]:
        """Remove a resource and everything under it; the names removed."""
        prefix = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%"
        where = "WHERE name = ? OR name LIKE ? ESCAPE '\\'"
        rows = self._db.read(f"SELECT name FROM {self._table} {where}", (name, prefix))
        self._db.write(f"DELETE FROM {self._table} {where}", (name, prefix))
        return [row[0] for row in rows]

    def _dump(self, kind: str, resource: Any) -> str:
        return self._messages[kind].to_json(resource, indent=None)

    def _load(self, kind: str, text: str) -> Any:
        return self._messages[kind].from_json(text)
