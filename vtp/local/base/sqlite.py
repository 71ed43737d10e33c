"""One SQLite database shared by a service's threads: the plumbing every store needs.

Each store (jobs, tuning jobs, models, pipeline jobs, schedules) keeps its own file and schema
and its own row mapping; what they share is here: WAL mode so readers never wait on the writer,
autocommit so every statement is durable on its own, one lock around the connection, and mode
0600 on the files.

Durable means: once a statement returns, any later reader, and a service restarted after this
one was killed, sees it (what a restarted service relies on to find the runs and processes a
killed one left). WAL's `synchronous=NORMAL` gives exactly that without waiting for the disk at
every statement (a flush of the log at each checkpoint instead): only a crash of the machine
itself, which takes every process the rows describe with it, can lose the last statements. A
run's bookkeeping is tens of statements (states, ML Metadata lineage), so waiting for the disk
at each cost a rerun of cached tasks most of its end on a busy disk.
"""

import contextlib
import os
import sqlite3
import threading
from pathlib import Path


class Database:
    """A thread-safe SQLite connection in autocommit and WAL mode."""

    def __init__(self, path: Path, schema: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        for suffix in ("", "-wal", "-shm"):  # the user's alone, whatever the umask was
            with contextlib.suppress(FileNotFoundError):
                os.chmod(f"{path}{suffix}", 0o600)
        self._db.executescript(schema)

    def write(self, sql: str, args: tuple = ()) -> None:
        """Run one statement that changes rows."""
        with self._lock:
            self._db.execute(sql, args)

    def read(self, sql: str, args: tuple = ()) -> list[tuple]:
        """Run one query and return all its rows."""
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
