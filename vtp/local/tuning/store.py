"""SQLite state of the tuning jobs, next to the service's own (`<state dir>/tuning.db`).

A job is stored as its public HyperparameterTuningJob resource (trials, measurements and all)
plus the seed of its suggester; that is everything a restarted service needs to carry on, since
the suggester is rebuilt from the stored trials.
"""

from collections.abc import Iterator
from dataclasses import dataclass

from google.cloud.aiplatform_v1 import HyperparameterTuningJob

from vtp.local.base.names import name_matches
from vtp.local.base.sqlite import Database
from vtp.local.base.store import Stored

SCHEMA = """
CREATE TABLE IF NOT EXISTS tuning_jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL,
    parent TEXT NOT NULL,
    resource TEXT NOT NULL,
    seed INTEGER NOT NULL
);
"""


@dataclass
class TuningRecord(Stored):
    """A tuning job as stored: the HyperparameterTuningJob and its suggester's seed."""

    resource: HyperparameterTuningJob
    seed: int


class TuningStore:
    """Thread-safe access to the tuning jobs' SQLite database."""

    def __init__(self, db: Database) -> None:
        self._db = db  # opened with SCHEMA; its owner closes it

    def insert(self, record: TuningRecord) -> None:
        """Add a new job."""
        self._db.write(
            "INSERT INTO tuning_jobs (id, parent, resource, seed) VALUES (?, ?, ?, ?)",
            (record.id, record.parent, _dump(record.resource), record.seed),
        )

    def update(self, record: TuningRecord) -> None:
        """Replace a job's resource."""
        self._db.write(
            "UPDATE tuning_jobs SET resource = ? WHERE id = ?", (_dump(record.resource), record.id)
        )

    def delete(self, job_id: str) -> None:
        """Remove a job."""
        self._db.write("DELETE FROM tuning_jobs WHERE id = ?", (job_id,))

    def get(self, job_id: str) -> TuningRecord | None:
        """The job with this ID, or None."""
        rows = self._db.read("SELECT resource, seed FROM tuning_jobs WHERE id = ?", (job_id,))
        return _load(*rows[0]) if rows else None

    def all(self, parent: str | None = None) -> Iterator[TuningRecord]:
        """Jobs in creation order, under `parent` when given (`-` matches any project or
        location)."""
        query = "SELECT parent, resource, seed FROM tuning_jobs"
        args: tuple[str, ...] = ()
        if parent is not None and "-" not in parent.split("/"):
            query, args = query + " WHERE parent = ?", (parent,)
        for row_parent, resource, seed in self._db.read(query + " ORDER BY seq", args):
            if parent is None or name_matches(parent, row_parent):
                yield _load(resource, seed)


def _dump(job: HyperparameterTuningJob) -> str:
    return HyperparameterTuningJob.to_json(job, indent=None)


def _load(resource: str, seed: int) -> TuningRecord:
    return TuningRecord(HyperparameterTuningJob.from_json(resource), seed)
