"""Replica logs: one file per replica, served raw and as Cloud Logging entries.

On Vertex each replica's output lands in Cloud Logging (resource type `ml_job`, labels `job_id`
and `task_name`), which is where `gcloud ai custom-jobs stream-logs` and `vtp custom-jobs
stream-logs` read it. Here each replica appends to `<replica>.log`; the supervisor gives every
complete line a timestamp when it first sees it and records it in `<replica>.lines`, so the
entries have stable timestamps and insert IDs that a client can page and resume on.

A replica's output reaches its file through a `Pump`: a thread that reads the process's pipe and
appends what comes, stamping each complete line the moment it arrives and saying so (`on_line`),
so a reader waiting on the job (`customJobs/{id}:wait`) hears of the line at once rather than at
the supervisor's next tick.
"""

import json
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

_lock = threading.Lock()
_path_locks: dict[Path, threading.Lock] = {}
_last = datetime.min.replace(tzinfo=UTC)


def _timestamp() -> str:
    """Now, strictly later than any timestamp handed out before (RFC 3339, microseconds)."""
    global _last
    with _lock:
        _last = max(datetime.now(UTC), _last + timedelta(microseconds=1))
        return _last.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _lock_for(path: Path) -> threading.Lock:
    with _lock:
        return _path_locks.setdefault(path, threading.Lock())


def index_lines(log_path: Path, final: bool = False) -> str:
    """Timestamp the lines of `log_path` not seen before (`final`: a last unterminated one too);
    the timestamp they got, "" when there were none."""
    index_path = log_path.with_suffix(".lines")
    with _lock_for(log_path):
        start = _indexed_end(index_path)
        if not log_path.is_file() or log_path.stat().st_size <= start:
            return ""
        with open(log_path, "rb") as log:
            log.seek(start)
            data = log.read()
        if not final:
            data = data[: data.rfind(b"\n") + 1]
        if not data:
            return ""
        stamp, records, offset = _timestamp(), [], start
        for line in data.splitlines(keepends=True):
            records.append(json.dumps([offset, len(line), stamp]) + "\n")
            offset += len(line)
        with open(index_path, "a", encoding="utf-8") as index:
            index.writelines(records)
        return stamp


class Pump(threading.Thread):
    """Copies a process's output from the read end of its pipe (`fd`, owned from now on) to
    `log_path` as it comes; each chunk that ends a line is stamped at once (`index_lines`) and
    `on_line(stamp)` is called. It ends at end-of-file: when the process and everything that
    inherited its output have exited."""

    def __init__(self, fd: int, log_path: Path, on_line: Callable[[str], None]) -> None:
        super().__init__(name=f"log-{log_path.stem}", daemon=True)
        self._fd, self._path, self._on_line = fd, log_path, on_line

    def run(self) -> None:
        try:
            with open(self._path, "ab", buffering=0) as log:
                while chunk := os.read(self._fd, 1 << 16):
                    log.write(chunk)
                    if b"\n" in chunk and (stamp := index_lines(self._path)):
                        self._on_line(stamp)
        finally:
            os.close(self._fd)


def entries(log_path: Path, job_name: str, replica: str) -> list[dict]:
    """The Cloud Logging entries of one replica's indexed lines, oldest first."""
    index_path = log_path.with_suffix(".lines")
    if not index_path.is_file():
        return []
    project, job_id = job_name.split("/")[1], job_name.rsplit("/", 1)[-1]
    resource = {
        "type": "ml_job",
        "labels": {"project_id": project, "job_id": job_id, "task_name": replica},
    }
    with open(log_path, "rb") as log:
        data = log.read()
    found = []
    for line in index_path.read_text(encoding="utf-8").splitlines():
        offset, length, stamp = json.loads(line)
        text = data[offset : offset + length].decode("utf-8", errors="replace").rstrip("\n")
        found.append(
            {
                "logName": f"projects/{project}/logs/{replica}",
                "resource": resource,
                "textPayload": text,
                "timestamp": stamp,
                "receiveTimestamp": stamp,
                "insertId": f"{offset:016d}-{replica}",
                "severity": "DEFAULT",  # stdout and stderr share the file: no severity to tell
            }
        )
    return found


def read(log_path: Path, replica: str, offset: int, max_bytes: int) -> dict:
    """Raw log text of one replica from byte `offset`, and the offset to read on from."""
    data = b""
    if log_path.is_file():
        with open(log_path, "rb") as log:
            log.seek(offset)
            data = log.read(max_bytes)
    text = data.decode("utf-8", errors="replace")
    return {"replica": replica, "offset": offset, "nextOffset": offset + len(data), "text": text}


def _indexed_end(index_path: Path) -> int:
    if not index_path.is_file():
        return 0
    with open(index_path, "rb") as index:
        index.seek(0, 2)
        size = index.tell()
        index.seek(max(0, size - 4096))
        tail = index.read().splitlines()
    if not tail:
        return 0
    offset, length, _ = json.loads(tail[-1])
    return offset + length
