"""The service's SQLite files as they are made: whole, the user's alone, in WAL mode."""

import sqlite3
import stat
import threading
from pathlib import Path

from vtp.local.base.sqlite import Database

SCHEMA = "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, body TEXT NOT NULL);"


def test_a_new_database_is_whole_private_and_in_wal_mode(tmp_path: Path):
    db = Database(tmp_path / "jobs.db", SCHEMA)
    db.write("INSERT INTO jobs VALUES (?, ?)", ("1", "{}"))
    assert db.read("SELECT id FROM jobs") == [("1",)]
    assert stat.S_IMODE((tmp_path / "jobs.db").stat().st_mode) == 0o600
    with sqlite3.connect(tmp_path / "jobs.db") as other:  # another process's view
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert other.execute("SELECT id FROM jobs").fetchall() == [("1",)]
    db.close()
    # No scratch file of the creation is left beside it.
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("jobs.db")) == []


def test_an_existing_database_is_opened_as_it_is(tmp_path: Path):
    first = Database(tmp_path / "jobs.db", SCHEMA)
    first.write("INSERT INTO jobs VALUES (?, ?)", ("1", "{}"))
    first.close()
    again = Database(tmp_path / "jobs.db", SCHEMA)
    assert again.read("SELECT id FROM jobs") == [("1",)]
    again.close()


def test_two_openers_of_a_new_file_share_one_database(tmp_path: Path):
    opened: list[Database] = []
    start = threading.Barrier(2)

    def open_it() -> None:
        start.wait()
        opened.append(Database(tmp_path / "jobs.db", SCHEMA))

    threads = [threading.Thread(target=open_it) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    opened[0].write("INSERT INTO jobs VALUES (?, ?)", ("1", "{}"))
    assert opened[1].read("SELECT id FROM jobs") == [("1",)]
    for db in opened:
        db.close()
