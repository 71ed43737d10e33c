"""Long-running operations of every resource type, kept in the service's database.

Vertex answers creates, deletes, uploads and deploys with an Operation that clients poll by name
(`.../operations/{id}`). The local service finishes most of them at once, but stores each so that
a client polling it later, or after a restart, reads the same answer.
"""

import json

import proto

from vtp.local.base import errors
from vtp.local.base.resources import done_operation, new_id, resource_operation
from vtp.local.base.sqlite import Database

SCHEMA = "CREATE TABLE IF NOT EXISTS operations (name TEXT PRIMARY KEY, body TEXT NOT NULL);"


class Operations:
    """Operations by name, as JSON (google.longrunning.Operation's REST form)."""

    def __init__(self, db: Database) -> None:
        self._db = db  # opened with SCHEMA; its owner closes it

    def put(self, operation: dict) -> dict:
        """Store (or replace) `operation`, keyed by its `name`; return it."""
        self._db.write(
            "INSERT OR REPLACE INTO operations (name, body) VALUES (?, ?)",
            (operation["name"], json.dumps(operation)),
        )
        return operation

    def get(self, name: str) -> dict:
        """The operation named `name`; raise NOT_FOUND."""
        rows = self._db.read("SELECT body FROM operations WHERE name = ?", (name,))
        if not rows:
            raise errors.not_found(f"Operation {name} not found.")
        return json.loads(rows[0][0])

    def deleted(self, parent: str) -> dict:
        """Record and return the done Operation a delete under `parent` answers with."""
        name = f"{parent}/operations/{new_id()}"
        return self.put(done_operation(name, "DeleteOperationMetadata"))

    def finished(
        self, parent: str, metadata_type: str, resource: proto.Message, version: str
    ) -> dict:
        """Record and return the done Operation under `parent` whose response is `resource` (a
        create's, an update's), typed for the API `version` the client called."""
        name = f"{parent}/operations/{new_id()}"
        return self.put(resource_operation(name, metadata_type, resource, version))
