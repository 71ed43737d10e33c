"""SQLite state of CustomJobs (`<state dir>/state.db`): jobs and their live replica processes.

Every change is committed before the service acts on it, so a service killed with SIGKILL loses
no job record, and on restart it knows which process groups may still be running.
"""

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass

from google.cloud import aiplatform_v1

from vtp.local.base.names import name_matches
from vtp.local.base.sqlite import Database
from vtp.local.runtime.records import ProcessRecord, Runtime

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL,
    parent TEXT NOT NULL,
    resource TEXT NOT NULL,
    runtime TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS processes (
    job_id TEXT NOT NULL,
    replica TEXT NOT NULL,
    pid INTEGER NOT NULL,
    token TEXT NOT NULL,
    PRIMARY KEY (job_id, replica)
);
"""


@dataclass
class JobRecord:
    """A job as stored: the resource clients see and the service's runtime data."""

    job: aiplatform_v1.CustomJob
    runtime: Runtime

    @property
    def id(self) -> str:
        """The job ID (last part of the name)."""
        return self.job.name.rsplit("/", 1)[-1]


class Store:
    """Thread-safe rows of jobs and their replica processes."""

    def __init__(self, db: Database) -> None:
        self._db = db  # opened with SCHEMA; its owner closes it

    def insert_job(self, record: JobRecord) -> None:
        """Add a new job."""
        parent = record.job.name.rsplit("/customJobs/", 1)[0]
        self._db.write(
            "INSERT INTO jobs (id, parent, resource, runtime) VALUES (?, ?, ?, ?)",
            (record.id, parent, _dump_job(record.job), _dump_runtime(record.runtime)),
        )

    def update_job(self, record: JobRecord) -> None:
        """Replace a job's resource and runtime."""
        self._db.write(
            "UPDATE jobs SET resource = ?, runtime = ? WHERE id = ?",
            (_dump_job(record.job), _dump_runtime(record.runtime), record.id),
        )

    def delete_job(self, job_id: str) -> None:
        """Remove a job and its process records."""
        self._db.write("DELETE FROM jobs WHERE id = ?", (job_id,))
        self._db.write("DELETE FROM processes WHERE job_id = ?", (job_id,))

    def get_job(self, job_id: str) -> JobRecord | None:
        """The job with this ID, or None."""
        rows = self._db.read("SELECT resource, runtime FROM jobs WHERE id = ?", (job_id,))
        return _load(*rows[0]) if rows else None

    def jobs(self, parent: str | None = None) -> Iterator[JobRecord]:
        """Jobs in creation order, under `parent` when given (`-` matches any project or
        location, as in `projects/-/locations/-`)."""
        query = "SELECT parent, resource, runtime FROM jobs"
        args: tuple = ()
        if parent is not None and "-" not in parent.split("/"):
            query, args = query + " WHERE parent = ?", (parent,)
        for row_parent, resource, runtime in self._db.read(query + " ORDER BY seq", args):
            if parent is None or name_matches(parent, row_parent):
                yield _load(resource, runtime)

    def add_process(self, process: ProcessRecord) -> None:
        """Remember a replica process group before anything else can go wrong."""
        self._db.write(
            "INSERT OR REPLACE INTO processes (job_id, replica, pid, token) VALUES (?, ?, ?, ?)",
            (process.job_id, process.replica, process.pid, process.token),
        )

    def remove_process(self, job_id: str, replica: str) -> None:
        """Forget a replica process group that has ended."""
        self._db.write("DELETE FROM processes WHERE job_id = ? AND replica = ?", (job_id, replica))

    def processes(self) -> list[ProcessRecord]:
        """Every replica process group that may still be alive."""
        rows = self._db.read("SELECT job_id, replica, pid, token FROM processes", ())
        return [ProcessRecord(*row) for row in rows]


def _dump_job(job: aiplatform_v1.CustomJob) -> str:
    return aiplatform_v1.CustomJob.to_json(job, indent=None)


def _dump_runtime(runtime: Runtime) -> str:
    return json.dumps(dataclasses.asdict(runtime))


def _load(resource: str, runtime: str) -> JobRecord:
    job = aiplatform_v1.CustomJob.from_json(resource)
    return JobRecord(job, Runtime(**json.loads(runtime)))
