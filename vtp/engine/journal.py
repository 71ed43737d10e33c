"""What a run's tasks did, as they do it: one JSON line per change of a task's state in
`RUN_DIR/tasks.jsonl`, which the service reads into `PipelineJob.jobDetail.taskDetails`.

A task is an executor task, a DAG (the pipeline itself, a nested pipeline, a condition, a
loop, one iteration of a loop, an exit handler's body). Each record says everything known of the
task so far, so the last line of an id is its state:

    {"id": 3, "parent": 1, "name": "train", "path": "for-loop-2/iteration-0/train",
     "kind": "executor" | "dag" | "iteration", "state": "RUNNING", "cached": false,
     "start": "2026-...Z", "end": "", "error": "", "iteration": 0, "item": ...,
     "inputs": {...parameters}, "outputs": {...parameters},
     "artifacts": {"model": [{"uri": ..., "metadata": {...}, "schema": "system.Model"}]}}
"""

import itertools
import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FILE = "tasks.jsonl"
ENDED = frozenset({"SUCCEEDED", "FAILED", "SKIPPED", "CANCELLED", "NOT_TRIGGERED"})


def now() -> str:
    """The current UTC time as RFC 3339, as Vertex writes times."""
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class Journal:
    """Appends task records to `run_dir/tasks.jsonl` (thread-safe)."""

    def __init__(self, run_dir: Path | None) -> None:
        self._path = run_dir / FILE if run_dir else None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def new_id(self) -> int:
        """A task id unique in this run."""
        with self._lock:
            return next(self._ids)

    def write(self, record: dict[str, Any]) -> None:
        """Append one record."""
        if self._path is None:
            return
        line = json.dumps(record, default=str) + "\n"
        with self._lock, open(self._path, "a") as out:
            out.write(line)


def read(run_dir: Path, over: bool = False) -> list[dict[str, Any]]:
    """Each task's latest record, in the order the tasks first appeared.

    `over`: the run has ended (its worker is gone), so no task of it runs any more: one the
    journal last saw unfinished (the run was cancelled, or its service stopped or was killed
    while the task ran) is CANCELLED, as Vertex reports the tasks a run stopped.
    """
    latest: dict[int, dict[str, Any]] = {}
    path = run_dir / FILE
    if not path.exists():
        return []
    for line in path.read_text(errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        latest[record["id"]] = record
    if over:
        for record in latest.values():
            if record.get("state") not in ENDED:
                record["state"] = "CANCELLED"
    return list(latest.values())
