"""The service a test session starts: `python -m vtp.testing.serve STATE_DIR PROJECT_DIR`.

A local Vertex service tuned for tests: free ports, quick polling and short grace periods, no
GPUs handed out whatever the machine has (GPU pools run on CPU, the service's default), nothing
resumed from an earlier session. Its first line on stdout is a JSON object with its addresses
(`ServiceInfo`). It stops on SIGTERM or SIGINT, and when its standard input reaches end of file:
the test session holds the other end of that pipe, so however the session ends (a failing test,
Ctrl-C, even SIGKILL), the service stops too, and its replicas with it.
"""

import json
import logging
import os
import sys
import threading
from pathlib import Path

from vtp.stop_signals import StopSignals

POLL_INTERVAL = 0.05
"""Seconds between the supervisor's checks of replicas: a job's end is seen at once."""
GRACE_PERIOD = 1.0
"""Seconds a stopped or preempted replica gets before SIGKILL."""


def main(argv: list[str]) -> int:
    """Serve until told to stop; see the module docstring."""
    from vtp.local.app import running
    from vtp.local.base.config import ServiceConfig

    state_dir, project_dir = Path(argv[0]), Path(argv[1])
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
        threading.Thread(target=_until_eof, args=(stop,), name="parent-watch", daemon=True).start()
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


def _until_eof(stop: StopSignals) -> None:
    """Stop once standard input ends: the session that started us is gone. Read from the fd:
    a thread blocked in `sys.stdin.buffer.read` holds its lock, and the interpreter's exit,
    which flushes sys.stdin, aborted on it (SIGABRT) when we stopped on a signal instead."""
    while os.read(sys.stdin.fileno(), 4096):
        pass
    stop.request()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
