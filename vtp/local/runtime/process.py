"""Replica processes: each in a process group of its own, logging to one file.

Every replica carries a random token in its environment. The token and the group leader's pid
are stored before the service does anything else, so a restarted service can find and kill what a
crashed one left behind even if pids were reused meanwhile: only processes whose environment holds
the token are killed.
"""

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

TOKEN_ENV = "VTP_LOCAL_REPLICA_TOKEN"
"""Environment variable holding the replica's token (inherited by everything it starts)."""

SERVICE_ENV = "VTP_LOCAL_SERVICE_ID"
"""Environment variable naming the service that started a process (`watchdog.py`)."""


def spawn(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path, log_path: Path
) -> subprocess.Popen:
    """Start `argv` in a process group of its own, stdout and stderr appended to `log_path`.

    A group, not a session: the process stays in the service's session, so it shares the
    service's scheduler autogroup (Linux) and low-priority work there, such as the pipeline
    fork server's imports, yields to it instead of taking an equal share of the CPU."""
    cwd.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            list(argv),
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            process_group=0,
        )


def signal_group(pid: int, sig: signal.Signals) -> None:
    """Send `sig` to the process group led by `pid`; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def kill_leftovers(pid: int, token: str) -> int:
    """SIGKILL every process carrying `token` (and group `pid` where /proc is absent)."""
    if not Path("/proc").is_dir():
        signal_group(pid, signal.SIGKILL)
        return 0
    return kill_carrying(TOKEN_ENV, token)


def kill_carrying(name: str, value: str) -> int:
    """SIGKILL every process (but this one) whose environment has `name=value`; how many."""
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    needle = f"{name}={value}".encode()
    killed = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed
