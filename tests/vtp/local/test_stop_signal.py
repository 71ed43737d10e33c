"""A service stops on SIGTERM whichever of its threads the kernel gives the signal to.

Linux hands a signal sent to a process to its main thread when that thread can take it, and to
another thread when it cannot (a signal is pending on it already: under load, a SIGCHLD queued a
moment before). CPython runs the Python handler in the main thread only, so a main thread asleep
in `threading.Event.wait()` slept on, and the service ran until a second signal came: the hang
of `tuning/test_service_tuning.py::test_a_restarted_service_finishes_the_job`, once in a full
suite. Sent with a thread's id, kill(2) still sends to the whole process but makes that thread
the kernel's first choice, so each test gives the signal to a thread other than the main one.
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import REPO, LocalService, State, job_client, wait_for_state

STOP_TIMEOUT = 60
"""Generous: a stop takes well under a second; without the fix the service never stops."""


def other_thread(pid: int) -> int:
    """The id of a thread of `pid`, not its main thread, that does not block SIGTERM."""
    for name in sorted(os.listdir(f"/proc/{pid}/task"), key=int):
        status = Path(f"/proc/{pid}/task/{name}/status").read_text()
        blocked = int(
            next(ln for ln in status.splitlines() if ln.startswith("SigBlk:")).split()[1], 16
        )
        if int(name) != pid and not blocked >> (signal.SIGTERM - 1) & 1:
            return int(name)
    raise AssertionError(f"process {pid} has no thread but its main one")


def stopped(process: subprocess.Popen) -> int:
    """`process`'s exit status once it ended after SIGTERM; killed and failed if it did not."""
    try:
        return process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        pytest.fail(f"the service did not stop within {STOP_TIMEOUT} s of SIGTERM")


def test_vtp_local_serve_stops_when_another_thread_takes_sigterm(tmp_path):
    service = LocalService(tmp_path / "state").start()
    try:
        client = job_client(service.url, service.token)
        job = client.create_custom_job(
            parent=service.parent,
            custom_job={
                "display_name": "long",
                "job_spec": {
                    "worker_pool_specs": [
                        {
                            "machine_spec": {"machine_type": "n1-standard-4"},
                            "replica_count": 1,
                            "container_spec": {
                                "image_uri": "python:3.11-slim",
                                "command": [sys.executable, "-c", "import time; time.sleep(600)"],
                            },
                        }
                    ]
                },
            },
        )
        wait_for_state(client, job.name, [State.JOB_STATE_RUNNING])
        os.kill(other_thread(service.process.pid), signal.SIGTERM)
        assert stopped(service.process) == 0
    finally:
        service.stop()
    # It stopped as SIGTERM stops it: its replica was stopped, its job queued for the next start.
    assert f"job {job.name.rsplit('/', 1)[1]}: JOB_STATE_QUEUED" in service.service_log()


def test_the_test_sessions_service_stops_when_another_thread_takes_sigterm(tmp_path):
    command = [sys.executable, "-m", "vtp.testing.serve", str(tmp_path / "state"), str(tmp_path)]
    with open(tmp_path / "service.log", "wb") as log:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=REPO
        )
    try:
        assert json.loads(process.stdout.readline())["url"]
        os.kill(other_thread(process.pid), signal.SIGTERM)
        assert stopped(process) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdin.close()
        process.stdout.close()
