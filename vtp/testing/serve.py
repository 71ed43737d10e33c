"""The service a test session starts:
`python -m vtp.testing.serve STATE_DIR PROJECT_DIR [PARENT_PID]`.

A local Vertex service tuned for tests: free ports, quick polling and short grace periods, no
GPUs handed out whatever the machine has (GPU pools run on CPU, the service's default), nothing
resumed from an earlier session. Its first line on stdout is a JSON object with its addresses
(`ServiceInfo`). It stops on SIGTERM or SIGINT, and once the test session that started it
(PARENT_PID, default: its parent) is gone, however the session ended (a failing test, Ctrl-C,
even SIGKILL); its replicas stop with it.

The session's end is seen on the process itself, not only on a pipe: a pidfd of the session
(`pidfd_open`) becomes readable when it exits, and our parent's pid changes when we are handed
to another reaper (checked every `PARENT_POLL` seconds, where pidfds are refused). End of file on
standard input, the pipe only the session held, is not enough alone: a test that forks a helper
(`os.fork`, multiprocessing's fork) gives the helper a copy of every fd, close-on-exec or not, and
the pipe would stay open, and the service listening, for as long as the helper lives (#49).
"""

import contextlib
import json
import logging
import os
import select
import sys
import threading
from pathlib import Path

from vtp.stop_signals import StopSignals

POLL_INTERVAL = 0.05
"""Seconds between the supervisor's checks of replicas: a job's end is seen at once."""
GRACE_PERIOD = 1.0
"""Seconds a stopped or preempted replica gets before SIGKILL."""
PARENT_POLL = 0.5
"""Seconds between checks of our parent's pid (a pidfd, where there is one, wakes us at once)."""
_GONE = -2
"""`_pidfd`'s answer for a session that has exited already."""
_NO_PIDFD = -1
"""`_pidfd`'s answer where the kernel (or a seccomp filter) refuses pidfds."""


def main(argv: list[str]) -> int:
    """Serve until told to stop; see the module docstring."""
    from vtp.local.app import running
    from vtp.local.base.config import ServiceConfig

    state_dir, project_dir = Path(argv[0]), Path(argv[1])
    session = int(argv[2]) if len(argv) > 2 else os.getppid()
    parent, pidfd = os.getppid(), _pidfd(session)  # before the service's start takes seconds
    config = ServiceConfig.from_env(
        state_dir,
        port=0,
        poll_interval=POLL_INTERVAL,
        grace_period=GRACE_PERIOD,
        gpus=(),  # accelerator pools run on CPU (the default without --strict-accelerators)
        project_dir=project_dir,
        resume_unfinished=False,
    )
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    with StopSignals() as stop, running(config) as service:  # vtp.stop_signals: any thread
        threading.Thread(
            target=_until_gone, args=(stop, pidfd, parent), name="parent-watch", daemon=True
        ).start()
        info = {
            "url": service.url,
            "api_endpoint": service.api_endpoint,
            "state_dir": str(config.state_dir),
            "storage_root": str(config.storage_root),
            "token_file": str(config.state_dir / "token"),
            "roots_file": str(service.app.front.tls.roots_file),
        }
        print(json.dumps(info), flush=True)
        stop.wait()
    return 0


def _until_gone(stop: StopSignals, pidfd: int, parent: int) -> None:
    """Stop once the test session is gone (its `pidfd`, our `parent` as we started, our stdin:
    see the module docstring)."""
    try:
        if pidfd != _GONE:
            _wait_for_end(pidfd, parent)
    finally:
        if pidfd >= 0:
            os.close(pidfd)
    stop.request()


def _pidfd(pid: int) -> int:
    """A pidfd of `pid`, readable once it exits; `_GONE` if it has exited already, `_NO_PIDFD`
    where pidfds are refused. Opened while `pid` is our parent (the session waits for our first
    line), it can be no other process's: a pid is freed only once its process is reaped."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return _GONE
    except OSError:  # an old kernel (ENOSYS), or a seccomp filter (EPERM)
        return _NO_PIDFD


def _wait_for_end(pidfd: int, parent: int) -> None:
    """Return once the session's `pidfd` (if any) is readable, our parent's pid is no longer
    `parent`, the one we started with, or standard input reaches end of file, whichever comes
    first. Standard input is read from the fd: a thread blocked in `sys.stdin.buffer.read` holds
    its lock, and the interpreter's exit, which flushes sys.stdin, aborted on it (SIGABRT) when
    we stopped on a signal instead."""
    stdin = sys.stdin.fileno()
    watched = [stdin, *([pidfd] if pidfd >= 0 else [])]
    while os.getppid() == parent:
        readable, _, _ = select.select(watched, [], [], PARENT_POLL)
        if pidfd in readable or (stdin in readable and not _read_some(stdin)):
            return


def _read_some(fd: int) -> bytes:
    """What `fd` has to read; b"" at its end, or once it cannot be read (nothing to watch)."""
    with contextlib.suppress(OSError):
        return os.read(fd, 4096)
    return b""


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
