"""SQLite state of the Model Registry, next to the service's own (`<state dir>/models.db`).

One row per model version, holding the public Model resource of that version (its `name` is the
model's, without `@version`); the versions of a model share `parent` and `model_id`.
"""

from google.cloud.aiplatform_v1 import Model

from vtp.local.base.names import name_matches
from vtp.local.base.sqlite import Database

SCHEMA = """
CREATE TABLE IF NOT EXISTS model_versions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    parent TEXT NOT NULL,
    model_id TEXT NOT NULL,
    version_id INTEGER NOT NULL,
    resource TEXT NOT NULL,
    UNIQUE (parent, model_id, version_id)
);
"""


class ModelStore:
    """Thread-safe access to the registry's SQLite database."""

    def __init__(self, db: Database) -> None:
        self._db = db  # opened with SCHEMA; its owner closes it

    def insert(self, version: Model) -> None:
        """Add a model version (a new model's first, or a further one)."""
        parent, model_id = split_name(version.name)
        self._db.write(
            "INSERT INTO model_versions (parent, model_id, version_id, resource) "
            "VALUES (?, ?, ?, ?)",
            (parent, model_id, int(version.version_id), _dump(version)),
        )

    def update(self, version: Model) -> None:
        """Replace a stored version's resource (its aliases moved, ...)."""
        parent, model_id = split_name(version.name)
        self._db.write(
            "UPDATE model_versions SET resource = ? "
            "WHERE parent = ? AND model_id = ? AND version_id = ?",
            (_dump(version), parent, model_id, int(version.version_id)),
        )

    def versions(self, parent: str, model_id: str) -> list[Model]:
        """Every version of one model, oldest first; empty when there is no such model. `-` in
        `parent` matches any project or location (the first model with that ID)."""
        rows = self._db.read(
            "SELECT parent, resource FROM model_versions WHERE model_id = ? ORDER BY version_id",
            (model_id,),
        )
        matching = [(p, r) for p, r in rows if name_matches(parent, p)]
        first = matching[0][0] if matching else ""
        return [_load(resource) for p, resource in matching if p == first]

    def model_names(self, parent: str) -> list[str]:
        """The names of the models under `parent` (`-` matches any project or location), in
        order of creation."""
        rows = self._db.read(
            "SELECT parent, model_id FROM model_versions "
            "GROUP BY parent, model_id ORDER BY MIN(seq)"
        )
        return [f"{p}/models/{i}" for p, i in rows if name_matches(parent, p)]

    def delete_version(self, name: str, version_id: str) -> None:
        """Remove one version of a model."""
        parent, model_id = split_name(name)
        self._db.write(
            "DELETE FROM model_versions WHERE parent = ? AND model_id = ? AND version_id = ?",
            (parent, model_id, int(version_id)),
        )

    def delete(self, parent: str, model_id: str) -> None:
        """Remove a model and all its versions."""
        self._db.write(
            "DELETE FROM model_versions WHERE parent = ? AND model_id = ?", (parent, model_id)
        )


def split_name(name: str) -> tuple[str, str]:
    """`projects/P/locations/L/models/ID` -> (`projects/P/locations/L`, `ID`)."""
    parent, _, model_id = name.rpartition("/models/")
    return parent, model_id


def _dump(version: Model) -> str:
    return Model.to_json(version, indent=None)


def _load(resource: str) -> Model:
    return Model.from_json(resource)
