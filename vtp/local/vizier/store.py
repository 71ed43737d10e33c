"""SQLite state of Vizier studies and their trials (`<state dir>/vizier.db`).

A study is stored as its public Study resource plus the seed of its suggester and the last trial
number it gave out (trial IDs count up from 1 within a study and are never reused, deleted ones
included); each trial is a row of its own, so adding a measurement rewrites one trial, not the
study. That is everything a restarted service needs: suggesters are rebuilt from the trials.
"""

from collections.abc import Iterator
from dataclasses import dataclass

from google.cloud.aiplatform_v1 import Study, Trial

from vtp.local.base.names import name_matches
from vtp.local.base.sqlite import Database
from vtp.local.base.store import Stored

SCHEMA = """
CREATE TABLE IF NOT EXISTS studies (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL,
    parent TEXT NOT NULL,
    display_name TEXT NOT NULL,
    resource TEXT NOT NULL,
    seed INTEGER NOT NULL,
    last_trial INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS trials (
    study TEXT NOT NULL,
    id INTEGER NOT NULL,
    resource TEXT NOT NULL,
    PRIMARY KEY (study, id)
);
"""


@dataclass
class StudyRecord(Stored):
    """A study as stored: the Study, its suggester's seed and the last trial ID given out."""

    resource: Study
    seed: int
    last_trial: int = 0


class VizierStore:
    """Thread-safe access to the studies' database; the service serialises changes."""

    def __init__(self, db: Database) -> None:
        self._db = db  # opened with SCHEMA; its owner closes it

    # -- studies ------------------------------------------------------------------------------

    def insert(self, record: StudyRecord) -> None:
        """Add a new study."""
        self._db.write(
            "INSERT INTO studies (id, parent, display_name, resource, seed, last_trial) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                record.id,
                record.parent,
                record.resource.display_name,
                Study.to_json(record.resource, indent=None),
                record.seed,
                record.last_trial,
            ),
        )

    def update(self, record: StudyRecord) -> None:
        """Replace a study's resource and trial counter."""
        self._db.write(
            "UPDATE studies SET resource = ?, last_trial = ? WHERE id = ?",
            (Study.to_json(record.resource, indent=None), record.last_trial, record.id),
        )

    def delete(self, study_id: str) -> None:
        """Remove a study and its trials."""
        self._db.write("DELETE FROM trials WHERE study = ?", (study_id,))
        self._db.write("DELETE FROM studies WHERE id = ?", (study_id,))

    def get(self, study_id: str) -> StudyRecord | None:
        """The study with this ID, or None."""
        rows = self._db.read(
            "SELECT resource, seed, last_trial FROM studies WHERE id = ?", (study_id,)
        )
        return _study(*rows[0]) if rows else None

    def all(self, parent: str) -> Iterator[StudyRecord]:
        """Studies under `parent` (`-` matches any project or location), in creation order."""
        query = "SELECT parent, resource, seed, last_trial FROM studies ORDER BY seq"
        for row_parent, resource, seed, last_trial in self._db.read(query):
            if name_matches(parent, row_parent):
                yield _study(resource, seed, last_trial)

    def find_display_name(self, parent: str, display_name: str) -> StudyRecord | None:
        """The study under `parent` with this display name, or None."""
        return next((r for r in self.all(parent) if r.resource.display_name == display_name), None)

    # -- trials -------------------------------------------------------------------------------

    def put_trial(self, study_id: str, trial: Trial) -> None:
        """Add or replace one trial of a study."""
        self._db.write(
            "INSERT OR REPLACE INTO trials (study, id, resource) VALUES (?, ?, ?)",
            (study_id, int(trial.id), Trial.to_json(trial, indent=None)),
        )

    def delete_trial(self, study_id: str, trial_id: int) -> None:
        """Remove one trial."""
        self._db.write("DELETE FROM trials WHERE study = ? AND id = ?", (study_id, trial_id))

    def trial(self, study_id: str, trial_id: int) -> Trial | None:
        """One trial of a study, or None."""
        rows = self._db.read(
            "SELECT resource FROM trials WHERE study = ? AND id = ?", (study_id, trial_id)
        )
        return Trial.from_json(rows[0][0]) if rows else None

    def trials(self, study_id: str) -> list[Trial]:
        """Every trial of a study, by ID."""
        rows = self._db.read("SELECT resource FROM trials WHERE study = ? ORDER BY id", (study_id,))
        return [Trial.from_json(resource) for (resource,) in rows]


def _study(resource: str, seed: int, last_trial: int) -> StudyRecord:
    return StudyRecord(Study.from_json(resource), seed, last_trial)
