"""A team's test that forks a helper, then pytest is killed (SIGKILL): the fixture's service stops
all the same, while the helper, which holds a copy of every fd pytest had (the service's stdin
pipe included: fork copies close-on-exec fds too), still runs (security issue #49)."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures import read_until
from tests.vtp.testing.test_team_suite import pytest_command, team_env
from vtp.testing.process import ServiceInfo, ServiceProcess

FORKING_TEST = """
import json
import os
import time
from pathlib import Path
from urllib.parse import urlsplit


def test_forks_a_helper(local_vertex):
    helper = os.fork()
    if helper == 0:  # the helper: a long sleep, nothing of pytest's teardown
        quiet = os.open(os.devnull, os.O_WRONLY)  # pytest's output ends with pytest
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        time.sleep(600)
        os._exit(0)
    Path("helper.pid").write_text(str(helper))  # first: whatever happens next, it is cleaned up
    ports = [urlsplit(local_vertex.url).port, int(local_vertex.api_endpoint.rsplit(":", 1)[1])]
    Path("ports.json").write_text(json.dumps(ports))
    print("READY", flush=True)
    time.sleep(600)
"""


@pytest.mark.slow
def test_the_service_stops_with_pytest_though_a_test_forked_a_helper(tmp_path: Path) -> None:
    """The team's test forks a helper that sleeps, then waits; pytest is SIGKILLed: the service's
    ports stop accepting connections within a minute (at once, with the fix), the helper alive."""
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "test_forking.py").write_text(FORKING_TEST)
    run = subprocess.Popen(
        pytest_command(folder, "-s", "test_forking.py"),
        cwd=folder, env=team_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    helper = folder / "helper.pid"
    try:
        output = read_until(run, "READY", timeout=300)
        assert "READY" in output, output + service_logs(tmp_path)
        ports = json.loads((folder / "ports.json").read_text())
        assert all(listening(port) for port in ports), output
        run.kill()
        run.wait(timeout=60)
        still = wait_until_closed(ports, timeout=60)
        assert not still, f"the service still listens on {still} after pytest's SIGKILL"
        assert alive(int(helper.read_text())), "the helper is not the service's to stop"
    finally:
        if run.poll() is None:
            run.kill()
        run.wait()
        if helper.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(helper.read_text()), signal.SIGKILL)


def test_a_forked_helper_never_stops_the_sessions_service(tmp_path: Path) -> None:
    """A helper forked from pytest has the session's `ServiceProcess` and its `atexit` hook; its
    `stop()` (a helper that exits through atexit, or runs a copy of the teardown) does nothing.
    A sleeping process stands in for the service: what `stop()` would kill is its group."""
    standin = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    info = ServiceInfo(
        "http://127.0.0.1:1", "localhost:2", tmp_path, tmp_path, tmp_path / "t", tmp_path / "r"
    )
    service = ServiceProcess(standin, info, tmp_path / "service.log")
    try:
        helper = os.fork()
        if helper == 0:
            try:
                service.stop()
            finally:
                os._exit(0)
        os.waitpid(helper, 0)
        assert standin.poll() is None, "the helper stopped the session's service"
    finally:
        service.stop()
    assert standin.returncode == -signal.SIGTERM  # the session itself still stops it


def service_logs(root: Path) -> str:
    """The end of each service log under `root`, for a failure's message."""
    return "".join(log.read_text(errors="replace")[-3000:] for log in root.rglob("service.log"))


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=5):
        return True
    return False


def wait_until_closed(ports: list[int], timeout: float) -> list[int]:
    """The ports still accepting connections once none does or `timeout` seconds passed."""
    deadline = time.monotonic() + timeout
    while True:
        still = [port for port in ports if listening(port)]
        if not still or time.monotonic() > deadline:
            return still
        time.sleep(0.1)


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not: pytest's death handed it to another reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
