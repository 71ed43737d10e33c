"""The test service's process: started in a process group of its own, stopped with that group.

    service = ServiceProcess.start(state_dir, project_dir)   # waits for its addresses
    service.info.url                                         # http://127.0.0.1:PORT
    service.stop()                                           # SIGTERM, then SIGKILL the group

Three things stop it, whatever happens to the session that started it: `stop()` (the session's
end, a failing test included), `atexit` (an interpreter that exits without tearing down), and
this process's own end (Ctrl-C that skips the teardown, SIGKILL), which the service watches on
this process's pid (`serve.py`: a pidfd, its parent's pid, and end of file on its standard
input). Not on the pipe alone: a helper a test forks holds a copy of it. Its replicas die with
it (the service's shims and watchdog). A terminal's Ctrl-C does not reach it directly: it has
its own session, so it stops in order, once. A process forked from this one (a test's helper)
inherits the `atexit` hook and the object, but only this process stops the service.
"""

import atexit
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT = 120.0
"""Seconds the service may take to print its addresses (imports on a busy machine)."""
STOP_TIMEOUT = 30.0
"""Seconds a stopping service gets to stop its replicas before its group is killed."""


class ServiceFailed(RuntimeError):
    """The service did not start; the message ends with its log."""


@dataclass(frozen=True)
class ServiceInfo:
    """Where a running test service answers, as `vtp.testing.serve` prints it."""

    url: str
    """`http://127.0.0.1:PORT`: REST, gcloud, Cloud Storage's JSON API."""
    api_endpoint: str
    """`localhost:PORT`: the aiplatform SDK's endpoint, gRPC and REST over TLS."""
    state_dir: Path
    storage_root: Path
    """`gs://BUCKET/NAME` is the file `storage_root/BUCKET/NAME`."""
    token_file: Path
    roots_file: Path
    """The CA bundle clients trust the TLS endpoint with."""

    @property
    def token(self) -> str:
        """The bearer token every request carries."""
        return self.token_file.read_text().strip()


class ServiceProcess:
    """A `python -m vtp.testing.serve` child of this process."""

    def __init__(self, process: subprocess.Popen[bytes], info: ServiceInfo, log: Path) -> None:
        self.process, self.info, self.log = process, info, log
        self._owner = os.getpid()
        self._stopped = threading.Lock()
        atexit.register(self.stop)

    @classmethod
    def start(cls, state_dir: Path, project_dir: Path, env: dict[str, str]) -> "ServiceProcess":
        """Start a service over `state_dir` whose replicas import from `project_dir`, with the
        environment `env`; return once it serves. ServiceFailed with its log otherwise."""
        state_dir.mkdir(parents=True, exist_ok=True)
        log = state_dir / "service.log"
        serve = [sys.executable, "-m", "vtp.testing.serve", str(state_dir), str(project_dir)]
        with open(log, "ab") as stderr:
            process = subprocess.Popen(
                [*serve, str(os.getpid())],  # the pid whose end it watches
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=project_dir,
                env=env,
                start_new_session=True,
            )
        line = _first_line(process, START_TIMEOUT)
        try:
            raw = json.loads(line)
        except ValueError:
            process.kill()
            process.wait()
            text = log.read_text(errors="replace")[-4000:]
            raise ServiceFailed(f"the local Vertex service did not start:\n{text}") from None
        info = ServiceInfo(
            raw["url"],
            raw["api_endpoint"],
            Path(raw["state_dir"]),
            Path(raw["storage_root"]),
            Path(raw["token_file"]),
            Path(raw["roots_file"]),
        )
        return cls(process, info, log)

    def stop(self) -> None:
        """Stop the service and everything in its process group; idempotent. Nothing in a
        process forked from the one that started it: a test's helper that exits through
        `atexit`, or runs a copy of the session's teardown, would stop every other test's
        service."""
        if os.getpid() != self._owner or not self._stopped.acquire(blocking=False):
            return
        atexit.unregister(self.stop)
        process = self.process
        if process.poll() is None:
            _signal_group(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(STOP_TIMEOUT)
        _signal_group(process.pid, signal.SIGKILL)  # whatever of its group is left
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream:
                stream.close()


def _first_line(process: subprocess.Popen[bytes], timeout: float) -> str:
    """The first line of `process`'s stdout, or "" if none came within `timeout` seconds."""
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    return lines[0].decode(errors="replace") if lines else ""


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)
