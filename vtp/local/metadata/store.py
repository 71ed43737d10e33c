"""SQLite state of Vertex ML Metadata (`<state dir>/metadata.db`).

The resources (metadata stores, contexts, artifacts, executions, metadata schemas) are rows of
`base/named_store.py`'s table `nodes`, by full name. The graph between them has three tables:

    members   (context, member)            artifacts and executions a context holds
    children  (parent, child)              context -> child context
    events    (execution, artifact, type)  an execution's input and output artifacts
"""

from collections.abc import Iterable
from typing import Any

from google.cloud.aiplatform_v1 import (
    Artifact,
    Context,
    Event,
    Execution,
    MetadataSchema,
    MetadataStore,
)

from vtp.local.base.named_store import SCHEMA as NODES_SCHEMA
from vtp.local.base.named_store import NamedStore
from vtp.local.base.sqlite import Database

SCHEMA = (
    NODES_SCHEMA.format(table="nodes")
    + """
CREATE TABLE IF NOT EXISTS members (
    context TEXT NOT NULL,
    member TEXT NOT NULL,
    PRIMARY KEY (context, member)
);
CREATE INDEX IF NOT EXISTS members_member ON members (member);
CREATE TABLE IF NOT EXISTS children (
    parent TEXT NOT NULL,
    child TEXT NOT NULL,
    PRIMARY KEY (parent, child)
);
CREATE INDEX IF NOT EXISTS children_child ON children (child);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    execution TEXT NOT NULL,
    artifact TEXT NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_execution ON events (execution);
CREATE INDEX IF NOT EXISTS events_artifact ON events (artifact);
"""
)

MESSAGES: dict[str, Any] = {
    "metadataStores": MetadataStore,
    "contexts": Context,
    "artifacts": Artifact,
    "executions": Execution,
    "metadataSchemas": MetadataSchema,
}
"""Each collection's message type."""


class MetadataStoreDb:
    """The nodes and the graph between them."""

    def __init__(self, db: Database) -> None:
        self._db = db  # opened with SCHEMA; its owner closes it
        self.nodes = NamedStore(db, "nodes", MESSAGES)

    def add_members(self, context: str, members: Iterable[str]) -> None:
        """Put artifacts and executions in a context (again is no change)."""
        for member in members:
            self._db.write(
                "INSERT OR IGNORE INTO members (context, member) VALUES (?, ?)", (context, member)
            )

    def members(self, context: str) -> list[str]:
        """The artifacts and executions a context holds, in the order they were added."""
        rows = self._db.read(
            "SELECT member FROM members WHERE context = ? ORDER BY rowid", (context,)
        )
        return [row[0] for row in rows]

    def contexts_of(self, member: str) -> list[str]:
        """The contexts that hold an artifact or execution."""
        rows = self._db.read("SELECT context FROM members WHERE member = ?", (member,))
        return [row[0] for row in rows]

    def add_child(self, parent: str, child: str) -> None:
        """Make `child` a child context of `parent`."""
        self._db.write(
            "INSERT OR IGNORE INTO children (parent, child) VALUES (?, ?)", (parent, child)
        )

    def remove_child(self, parent: str, child: str) -> None:
        """Undo `add_child`."""
        self._db.write("DELETE FROM children WHERE parent = ? AND child = ?", (parent, child))

    def parents(self, child: str) -> list[str]:
        """The parent contexts of a context."""
        rows = self._db.read("SELECT parent FROM children WHERE child = ? ORDER BY rowid", (child,))
        return [row[0] for row in rows]

    def children(self, parent: str) -> list[str]:
        """The child contexts of a context."""
        rows = self._db.read(
            "SELECT child FROM children WHERE parent = ? ORDER BY rowid", (parent,)
        )
        return [row[0] for row in rows]

    def add_event(self, event: Event) -> None:
        """Record an execution's input or output."""
        self._db.write(
            "INSERT INTO events (execution, artifact, event) VALUES (?, ?, ?)",
            (event.execution, event.artifact, Event.to_json(event, indent=None)),
        )

    def events(self, *, execution: str = "", artifact: str = "") -> list[Event]:
        """The events of an execution, or of an artifact, oldest first."""
        column, value = ("execution", execution) if execution else ("artifact", artifact)
        rows = self._db.read(f"SELECT event FROM events WHERE {column} = ? ORDER BY seq", (value,))
        return [Event.from_json(row[0]) for row in rows]

    def forget(self, names: Iterable[str]) -> None:
        """Remove every link of the named (deleted) resources."""
        for name in names:
            self._db.write("DELETE FROM members WHERE context = ? OR member = ?", (name, name))
            self._db.write("DELETE FROM children WHERE parent = ? OR child = ?", (name, name))
            self._db.write("DELETE FROM events WHERE execution = ? OR artifact = ?", (name, name))
