"""One pipeline run's worker process: its own process group, watched until it exits.

The worker and every task it starts share one process group, so a cancel reaches the running
task directly (SIGTERM; the custom_job component then cancels its CustomJob), and SIGKILL after
the grace period ends whatever ignored it. Whatever is left of the group when the worker exits
is killed too, so no task outlives its run. The group carries a token in its environment from
its start, which a restarted service uses to find what a killed one left behind
(`vtp.local.runtime.process`); every task of the run also gets the run's directory
(`RUN_DIR_ENV`) in its environment, so a process of the run can be told by its environment
whatever its command line and working directory.

The worker starts from a container's environment (`runtime/cluster.py`'s, the one replicas
get), not the service's: its tasks inherit it, so credentials in the service's shell reach no
task. Over it go what the service gives (its clients' settings, the token, the start-up hook on
PYTHONPATH, the service's id) and the engine's own settings named in `ENGINE_NAMES`
(`worker_environment`).

The worker works in the user's folder (the service's `project_dir`), which is also on its
PYTHONPATH, as a replica's: a task that imports a module of the user's finds it, whichever
client created the run.

A run's worker is either started for it (`RunProcess.start`) or was started before the run, a
standby that had done its imports already (`standby.py`), and is adopted (`RunProcess.adopt`):
watched, cancelled and killed the same way.
"""

import os
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from vtp import containers
from vtp.engine import worker
from vtp.local.runtime.cluster import container_environment
from vtp.local.runtime.process import TOKEN_ENV, signal_group, spawn

ENGINE_NAMES = (
    "VTP_TASK_FORK",
    "VTP_TASK_PRELOAD",
    "VTP_PIPELINE_CACHE_DIR",
    "VTP_DEBUG",
    "VTP_PROJECT_IMAGE",
    "VTP_EXTRA_REGIONS",
    "VTP_RUNTIME_DIR",
    "VTP_LOCAL_POLL_INTERVAL",
    "VTP_LOCAL_GRACE_PERIOD",
    "VTP_LOCAL_REQUEST_DEADLINE",
    "VTP_LOCAL_PROJECT",
    "VTP_LOCAL_LOCATION",
    "XDG_RUNTIME_DIR",
)
"""What a run takes of the service's environment besides a container's: the engine's and our
launchers' settings (never credentials)."""

RUN_DIR_ENV = "VTP_PIPELINE_RUN_DIR"
"""The run's directory (where request.json is), in the environment of every process of the run."""


def worker_environment(settings: Mapping[str, str], passed: Sequence[str] = ()) -> dict[str, str]:
    """A run worker's environment but its token: a container's, with the names of `passed`
    (`--pass-env`), `ENGINE_NAMES` and the container engine's client settings kept of the
    service's own, then the service's `settings` over it."""
    interpreter_bin = str(Path(sys.executable).parent)
    # the container engine's client settings, for container components (`task_containers`)
    own = [k for k in os.environ if k.startswith(containers.ENGINE_PREFIXES)]
    return {
        **container_environment(os.environ, interpreter_bin, (*ENGINE_NAMES, *passed, *own)),
        **settings,
        "PYTHONUNBUFFERED": "1",
    }


class RunProcess:
    """The worker process of one run, started (or adopted), watched, cancelled and killed."""

    def __init__(self, run_dir: Path, poll: float, grace: float, token: str = "") -> None:
        """`token`: the one the worker's environment holds (an adopted worker's); by default a
        new one, for `start`."""
        self.run_dir, self.poll, self.grace = run_dir, poll, grace
        self.token = token or secrets.token_hex(16)
        self._process: subprocess.Popen | None = None
        self._cancelled_at: float | None = None

    @property
    def pid(self) -> int:
        """The worker's pid, which is also its process group's ID."""
        return self._process.pid if self._process else 0

    def start(self, env: Mapping[str, str], cwd: Path) -> int:
        """Spawn the worker in a process group of its own, with `env` (`worker_environment`'s,
        `RUN_DIR_ENV` included) and the token, in `cwd`; return its pid."""
        argv = [sys.executable, "-m", "vtp.engine.worker", str(self.run_dir)]
        env = {**env, TOKEN_ENV: self.token}
        self._process = spawn(argv, env, cwd, self.run_dir / "run.log")
        return self._process.pid

    def adopt(self, process: subprocess.Popen) -> int:
        """Take `process`, a worker already started with this token and given this run
        (`standby.py`); return its pid."""
        self._process = process
        return process.pid

    def watch(
        self, on_started: Callable[[], None], on_poll: Callable[[], None] = lambda: None
    ) -> int:
        """Wait for the worker to exit (calling `on_started` once its pipeline runs, and
        `on_poll` at every poll while it runs); its status. What the run left behind is then
        being killed; `wait_ended` waits until it is gone.

        A thread of its own waits for the exit (a blocking waitpid), so the exit is seen when
        it happens, not up to 50 ms later as `Popen.wait(timeout)`'s sleeps between polls
        would see it; this loop wakes at once then, or every poll interval to do its work.
        The worker runs under the shim, which exits once it has killed and reaped whatever the
        worker left (the fork server's stages: 50-80 ms of freeing their memory); the worker's
        own exit is watched too (`_on_exit`), and once it has exited with its run succeeded
        (every task ended), its status adds nothing to the result: the run is settled while the
        shim finishes. A failed or cancelled run waits for the shim, so that nothing of it is
        left once it shows as ended (a task's own processes may be what failed it)."""
        process = self._process
        assert process is not None, "start() first"
        ended = threading.Event()

        def reap() -> None:
            process.wait()
            ended.set()

        threading.Thread(target=reap, name=f"reap-{process.pid}", daemon=True).start()
        _on_exit(_only_child(process.pid), ended)
        started = False
        while not ended.wait(self.poll):
            if not started and (self.run_dir / worker.STARTED).exists():
                started = True
                on_started()
            if started:
                on_poll()
            if self._cancelled_at is not None and time.monotonic() > self._cancelled_at:
                self.kill()
        self.kill()  # whatever the run left behind in its group
        if process.poll() is None and (worker.read_result(self.run_dir) or {}).get("succeeded"):
            return 0  # the worker ended with its run succeeded (the shim kills the rest)
        return process.wait()

    def wait_ended(self) -> None:
        """Wait until the shim has exited: nothing of the run is left."""
        if self._process is not None:
            self._process.wait()

    def cancel(self) -> None:
        """SIGTERM the whole group now, SIGKILL it after the grace period."""
        if self._cancelled_at is None:
            self._cancelled_at = time.monotonic() + self.grace
            signal_group(self.pid, signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL the whole group."""
        signal_group(self.pid, signal.SIGKILL)


def _only_child(pid: int) -> int:
    """The one child of process `pid` (the shim's: the worker), or 0 when it has none or
    several, or this kernel does not list children."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0
    return int(children[0]) if len(children) == 1 else 0


def _on_exit(pid: int, ended: threading.Event) -> None:
    """Set `ended` when process `pid` (not a child of ours) exits, from a thread; nothing when
    `pid` is 0, is gone already, or this system has no pidfds (the shim's exit sets it then)."""
    if not pid:
        return
    try:
        pidfd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return

    def wait() -> None:
        try:
            select.select([pidfd], [], [])
        finally:
            os.close(pidfd)
        ended.set()

    threading.Thread(target=wait, name=f"exit-{pid}", daemon=True).start()
