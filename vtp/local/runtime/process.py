"""The service's processes: each under a shim (`shim.py`), in a process group of its own.

Every process the service starts (replicas, package installs, pipeline workers, model servers)
runs below `shim.py`, a child subreaper that kills everything below it when its command ends,
when the service asks, and when the service is gone (`kill -9` included): it watches the read
end of a pipe whose write end only this process holds. So nothing the service started outlives
it, whatever a process did to its session or environment (`setsid`, `env -i`).

Every replica also carries a random token in its environment. The token and the group leader's
pid are stored before the service does anything else, so a restarted service can find and kill
what a crashed one left behind even if pids were reused meanwhile: only processes whose
environment holds the token are killed.
"""

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from vtp.containers import SERVICE_VARIABLE
from vtp.local.runtime.shim import KILL_TREE, stop_then_kill

SHIM = Path(__file__).with_name("shim.py")
_pipe: tuple[int, int] | None = None
_pipe_lock = threading.Lock()
warm_shims: set[int] = set()
"""Pids of the live shims of warm replicas (`warm.py`): forks of the preloaded server, whose
command line is the server's, not the shim's; `signal_group` kills their trees as it does."""
warm_shims_lock = threading.Lock()

TOKEN_ENV = "VTP_LOCAL_REPLICA_TOKEN"
"""Environment variable holding the replica's token (inherited by everything it starts)."""

SERVICE_ENV = SERVICE_VARIABLE
"""Environment variable naming the service that started a process (`watchdog.py`)."""


def spawn(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path, log_path: Path
) -> subprocess.Popen:
    """Start `argv` in a process group of its own, stdout and stderr appended to `log_path`.

    A group, not a session: the process stays in the service's session, so it shares the
    service's scheduler autogroup (Linux) and low-priority work there, such as the pipeline
    fork server's imports, yields to it instead of taking an equal share of the CPU."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        return start(argv, env, cwd, log)


def start(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    output: IO[bytes] | int,
    stdin: int = subprocess.DEVNULL,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen:
    """Start `argv` under the shim in a process group of its own (the shim leads it), stdout and
    stderr to `output`, stdin from `stdin` (a file descriptor; none by default), holding
    `pass_fds` too. OSError, as Popen raises it, when `argv[0]` cannot be executed."""
    cwd.mkdir(parents=True, exist_ok=True)
    _check_executable(argv[0], env, cwd)
    watched = service_fd()
    return subprocess.Popen(
        [sys.executable, "-I", "-S", str(SHIM), str(watched), *argv],
        env=dict(env),
        cwd=cwd,
        stdin=stdin,
        stdout=output,
        stderr=subprocess.STDOUT,
        process_group=0,
        pass_fds=(watched, *pass_fds),
    )


def signal_group(pid: int, sig: signal.Signals) -> None:
    """Send `sig` to the process group led by `pid`; a group already gone is fine.

    SIGKILL goes to the shim leading the group instead, which kills the group and everything
    else below it (the group alone would miss what left it) and then dies by SIGKILL itself."""
    if sig == signal.SIGKILL and (_is_live_shim(pid) or pid in warm_shims):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, KILL_TREE)
            return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _is_live_shim(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, IndexError):
        return False
    return state != b"Z" and str(SHIM).encode() in command


def service_fd() -> int:
    """The read end of the pipe whose write end only this process holds (never closed, so it
    reads end-of-file exactly when this process is gone)."""
    global _pipe
    with _pipe_lock:
        if _pipe is None:
            _pipe = os.pipe()  # neither end inheritable; the shim gets the read end by pass_fds
        return _pipe[0]


def _check_executable(program: str, env: Mapping[str, str], cwd: Path) -> None:
    """Raise what Popen would raise for a program that cannot be executed (the shim would
    only exit 127); a relative path is the child's, under `cwd`."""
    if "/" in program:
        path = os.path.join(cwd, program)
        found: str | None = path if os.path.isfile(path) else None
    else:
        found = shutil.which(program, mode=os.F_OK, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
    if not os.access(found, os.X_OK) or os.path.isdir(found):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)


def kill_leftovers(pid: int, token: str) -> int:
    """SIGKILL every process carrying `token` (and group `pid` where /proc is absent)."""
    if not Path("/proc").is_dir():
        signal_group(pid, signal.SIGKILL)
        return 0
    return kill_carrying(TOKEN_ENV, token)


def kill_carrying(name: str, value: str, spare_shims: bool = False) -> int:
    """SIGKILL every process (but this one) whose environment has `name=value`, all stopped
    first (`shim.stop_then_kill`); how many.

    `spare_shims`: leave the shims, which kill their own trees once the service is gone (one
    killed first would hand the processes that dropped the variable to init)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    needle = f"{name}={value}".encode()
    shim = str(SHIM).encode()
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if spare_shims and shim in (entry / "cmdline").read_bytes().split(b"\0"):
                continue
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return stop_then_kill(found)
