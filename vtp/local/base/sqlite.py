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

A new file is made apart and put in place whole (`_create`): SQLite's own creation of a WAL
database waits for the disk seven or eight times (the first page, the switch to WAL, each
table), which made a service's start in a new state directory, with its fifteen files, 0.3 s
slower. The file is built without those waits under a name of its own, flushed once, then
linked in under its real name: a crash leaves either no file (made again at the next start)
or a whole one, never half a database.
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
        if not path.exists():
            _create(path, schema)
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


def _create(path: Path, schema: str) -> None:
    """Make the database `path` with `schema`, in WAL mode, mode 0600, all at once: built under
    a scratch name without waiting for the disk, flushed once, then linked in (if no other
    process made it meanwhile)."""
    scratch = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.new")
    try:
        db = sqlite3.connect(scratch, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous=OFF")
            db.execute("PRAGMA journal_mode=WAL")  # kept in the file's header
            db.executescript(schema)
        finally:
            db.close()  # the last connection: its log is written into the file and removed
        os.chmod(scratch, 0o600)
        fd = os.open(scratch, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs
            os.link(scratch, path)
    finally:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{scratch}{suffix}")
