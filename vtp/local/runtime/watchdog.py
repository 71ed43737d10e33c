"""Replicas die with the service, even when it is killed with SIGKILL.

The first line of defence is each process's shim (`shim.py`): a subreaper that kills the whole
tree below it when the service's pipe closes, whatever the processes did to their session or
environment. This watchdog is the second, for anything that carries the service's id but is not
below a shim; it spares the shims, so that what they hold is not handed to init.

At start the service spawns this module as a small process of its own, holding the read end of a
pipe whose write end only the service has (replicas are started with close_fds, so they never
inherit it). Every process the service starts carries `VTP_LOCAL_SERVICE_ID=<id>` in its
environment, and so does everything those start. When the pipe reads end-of-file without the
"clean stop" byte, the service is gone: the watchdog SIGKILLs every process that carries the id,
removes the containers whose environment carries it (with an engine: Podman would list them as
running, their monitor dead; Docker's are its daemon's), then exits. A clean stop writes the
byte first (the service has stopped its replicas itself).

    python -m vtp.local.runtime.watchdog <id>
"""

import os
import subprocess
import sys

from vtp import containers
from vtp.local.runtime.process import SERVICE_ENV, kill_carrying

CLEAN_STOP = b"."


class Watchdog:
    """The watchdog process of one service."""

    def __init__(self, service_id: str) -> None:
        env = {k: v for k, v in os.environ.items() if k != SERVICE_ENV}
        self._process = subprocess.Popen(
            [sys.executable, "-m", __name__, service_id],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # Ctrl-C in the service's terminal does not reach it
        )

    def close(self) -> None:
        """The service stops cleanly: let the watchdog go without killing anything."""
        stdin = self._process.stdin
        if stdin is not None:
            try:
                stdin.write(CLEAN_STOP)
                stdin.close()
            except OSError:
                pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()


def main(service_id: str) -> int:
    """Wait for the service to go; kill what it left if it did not stop cleanly."""
    data = sys.stdin.buffer.read()  # returns at end-of-file: the service closed it or died
    if data != CLEAN_STOP:
        killed = kill_carrying(SERVICE_ENV, service_id, spare_shims=True)
        print(f"vtp local: service gone; killed {killed} leftover processes", file=sys.stderr)
        engine = containers.engine_from(os.environ)
        if engine:
            removed = containers.remove_carrying(engine, service_id, os.environ)
            print(f"vtp local: removed {removed} of its containers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
