"""The processes of one job's replicas: start, signal, stop, reap; one log file per replica.

A `ReplicaSet` belongs to one JobRun thread, which alone calls it. Every process started is
recorded (pid and token, `process.py`) before anything else happens, and forgotten once reaped,
so a service that dies in between leaves the next one enough to clean up.
"""

import logging
import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from vtp.engine import tree_walk
from vtp.local.runtime import containers, gcs_mount, isolation
from vtp.local.runtime.launch import JobPlan, PoolPlan
from vtp.local.runtime.logs import Pump, index_lines
from vtp.local.runtime.process import kill_leftovers, signal_group, start
from vtp.local.runtime.records import ProcessRecord
from vtp.local.runtime.rules import exit_status
from vtp.local.runtime.warm import WarmProcess, WarmRequest, WarmStarter

_log = logging.getLogger(__name__)
CANNOT_START = 127
"""The status a replica whose command cannot be executed gets (as a shell reports it)."""
PUMP_DRAIN_SECONDS = 5.0
"""How long a reaped replica's output may still take to reach its log (its tree is dead by
then, so its pipe is at end-of-file at once unless something escaped the tree)."""


class ProcessBook(Protocol):
    """Where live replica processes are recorded (the service's SQLite store)."""

    def add_process(self, process: ProcessRecord) -> None: ...
    def remove_process(self, job_id: str, replica: str, exit_status: int | None) -> None: ...


@dataclass
class Replica:
    """One replica and its current process (None before it starts and after it is reaped)."""

    name: str
    pool: PoolPlan
    index: int
    proc: "subprocess.Popen | WarmProcess | None" = None
    token: str = ""
    preempted: bool = False
    """Stopped by a preemption (non-permanent failure) rather than by its own doing."""
    kill_at: float = 0.0
    """Monotonic time at which a preempted replica still running gets SIGKILL."""
    python_path: str = ""
    """Installed packages of a pythonPackageSpec pool, put first on PYTHONPATH (ahead of the
    project's folder: a user's package named `trainer` is theirs)."""
    sites: tuple[str, ...] = ()
    """What its environment reads after its own site-packages: its pool's requirements, then
    the service's (`packages.Prepared.sites`); empty: the service's alone."""
    layer: isolation.Layer | None = None
    """The Python environment of its current process (`isolation.py`)."""
    container: str = ""
    """The name of its current container, when its pool runs in an image (`containers.py`)."""
    pump: Pump | None = None
    """What copies its current process's output to its log (`logs.py`)."""

    def running(self) -> "subprocess.Popen | WarmProcess":
        """The process of a replica that has one: a live one (`ReplicaSet.live`)."""
        assert self.proc is not None, f"replica {self.name} has no process"
        return self.proc


class ReplicaSet:
    """All replicas of one job, under `<state>/jobs/<id>/` (logs/, work/ and envs/)."""

    def __init__(
        self,
        job_id: str,
        plan: JobPlan,
        job_dir: Path,
        book: ProcessBook,
        wake: threading.Event,
        storage_root: Path,
        engine: tuple[str, ...] = (),
        on_line: Callable[[str], None] = lambda stamp: None,
        job_name: str = "",
        warm: WarmStarter | None = None,
    ) -> None:
        """`job_name`: the job's resource name, which its containers' credential names
        (`containers.client_environment`); `warm`: the service's preloaded server, which host
        replicas fork from where they can (`warm.py`)."""
        self._warm = warm
        self.job_id = job_id
        self.job_name = job_name or job_id
        self._on_line = on_line
        """Called with their timestamp whenever new lines of a replica's log are stamped."""
        self._storage_root = storage_root
        self._engine = engine
        self.replicas = {n: Replica(n, p, i) for p in plan.pools for i, n in enumerate(p.replicas)}
        self._job_dir = job_dir
        self._book = book
        self._wake = wake

    def log_path(self, name: str) -> Path:
        """The replica's log file (stdout and stderr, appended across restarts)."""
        return self._job_dir / "logs" / f"{name}.log"

    def live(self) -> list[Replica]:
        """Replicas whose process has not been reaped yet."""
        return [r for r in self.replicas.values() if r.proc is not None]

    def start(self, replica: Replica, env: Callable[[Replica], Mapping[str, str]]) -> bool:
        """Start `replica` (its environment from `env`); False when the command cannot run."""
        replica.token, replica.preempted, replica.kill_at = uuid.uuid4().hex, False, 0.0
        self.note(replica, f"starting {replica.name}: {' '.join(replica.pool.argv)}")
        work = self._job_dir / "work" / replica.name
        # A restarted replica is a new container on Vertex: its files start fresh, and only
        # Cloud Storage (the storage root here) keeps what an earlier start wrote.
        tree_walk.remove_tree(work, ignore_errors=True)
        # A new environment per start, as a restarted replica is a new container on Vertex.
        layer = isolation.Layer(self._job_dir / "envs" / replica.name)
        warm: WarmRequest | None = None
        try:
            if replica.pool.image:
                replica.container = f"vtp-{self.job_id}-{replica.name}-{replica.token[:8]}"
                argv, environment = self._in_image(replica, env(replica))
            else:
                isolation.create(layer.root, replica.sites or None)
                replica.layer = layer
                argv = isolation.command(replica.pool.argv, layer)
                environment = isolation.environment(env(replica), layer)
                warm = self._warm_request(replica, argv, environment, layer, work)
            started: tuple[subprocess.Popen | WarmProcess, Pump] | None = None
            if warm is not None:
                started = self._spawn_warm(replica, warm)
            if started is None:
                if not replica.pool.image:
                    argv = gcs_mount.wrap(argv, self._storage_root)
                started = self._spawn(argv, environment, work, self.log_path(replica.name))
            proc, replica.pump = started
        except OSError as exc:
            self._clean(replica)
            self.note(replica, f"cannot start {replica.name}: {exc}")
            return False
        replica.proc = proc
        self._book.add_process(ProcessRecord(self.job_id, replica.name, proc.pid, replica.token))
        # Wake the supervisor the moment the process ends, rather than at its next poll.
        threading.Thread(target=self._wake_on_exit, args=(proc,), daemon=True).start()
        return True

    def _spawn(
        self, argv: list[str], env: Mapping[str, str], work: Path, log_path: Path
    ) -> tuple[subprocess.Popen, Pump]:
        """Start `argv` with its output on a pipe that a Pump copies to `log_path`."""
        read, write = os.pipe()
        try:
            proc = start(argv, env, work, write)
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)  # the process holds it now; end-of-file once it and its tree exit
        pump = Pump(read, log_path, self._on_line)
        pump.start()
        return proc, pump

    def _warm_request(
        self,
        replica: Replica,
        argv: list[str],
        env: Mapping[str, str],
        layer: isolation.Layer,
        work: Path,
    ) -> WarmRequest | None:
        """The request that forks `replica` from the preloaded server, if it can (`warm.py`);
        a reason of its own to start cold goes to its log."""
        if self._warm is None:
            return None
        gcs = "" if gcs_mount.problem() else os.path.realpath(self._storage_root)
        request, reason = self._warm.plan(argv, env, layer, replica.sites, work, gcs)
        if reason:
            self.note(replica, f"{replica.name} starts cold: {reason}")
        return request

    def _spawn_warm(
        self, replica: Replica, request: WarmRequest
    ) -> tuple[WarmProcess, Pump] | None:
        """Fork `replica` from the preloaded server, its output on a pipe that a Pump copies to
        its log; None when the server could not (it then starts cold)."""
        assert self._warm is not None  # a request comes from it
        request.cwd.mkdir(parents=True, exist_ok=True)
        read, write = os.pipe()
        try:
            proc = self._warm.start(request, write)
        finally:
            os.close(write)
        if proc is None:
            os.close(read)
            return None
        self.note(replica, f"{replica.name} starts warm: forked from the preloaded server")
        pump = Pump(read, self.log_path(replica.name), self._on_line)
        pump.start()
        return proc, pump

    def preempt(self, replica: Replica, grace: float) -> None:
        """SIGTERM now, SIGKILL at `grace` seconds (see `escalate`), as a maintenance event."""
        self.note(replica, f"preempting {replica.name}: SIGTERM, SIGKILL in {grace:g}s")
        replica.preempted = True
        replica.kill_at = time.monotonic() + grace
        signal_group(replica.running().pid, signal.SIGTERM)

    def escalate(self) -> None:
        """SIGKILL preempted replicas whose grace period is over."""
        for replica in self.live():
            if replica.kill_at and time.monotonic() >= replica.kill_at:
                signal_group(replica.running().pid, signal.SIGKILL)
                replica.kill_at = 0.0

    def stop(self, replicas: list[Replica], grace: float, poll: float) -> None:
        """SIGTERM each replica's group, SIGKILL what is left after `grace` seconds, reap all."""
        deadline = time.monotonic() + grace
        for replica in replicas:
            signal_group(replica.running().pid, signal.SIGTERM)
        pending = list(replicas)
        while pending:
            pending = [r for r in pending if r.running().poll() is None]
            if pending and time.monotonic() >= deadline:
                for replica in pending:
                    signal_group(replica.running().pid, signal.SIGKILL)
                    replica.running().wait()
            elif pending:
                time.sleep(min(poll, 0.05))
        for replica in replicas:
            self.reap(replica)

    def reap(self, replica: Replica) -> None:
        """Forget an ended replica's process, killing anything it left behind."""
        proc = replica.running()
        kill_leftovers(proc.pid, replica.token)
        if replica.pump is not None:
            replica.pump.join(PUMP_DRAIN_SECONDS)  # the last of its output, before the final index
            replica.pump = None
        self._index(replica, final=True)
        code = proc.returncode
        self._book.remove_process(
            self.job_id, replica.name, None if code is None else exit_status(code)
        )
        replica.proc = None
        self._clean(replica)

    def _clean(self, replica: Replica) -> None:
        """Remove what a replica's process had of its own: its environment or its container."""
        if replica.layer:
            isolation.remove(replica.layer)  # what it installed vanishes with it
            replica.layer = None
        if replica.container:
            containers.remove(self._engine, replica.container, os.environ)
            replica.container = ""

    def _in_image(
        self, replica: Replica, host_env: Mapping[str, str]
    ) -> tuple[list[str], dict[str, str]]:
        """The engine's command line and its client's environment for `replica`'s container
        (with the GPUs the service gave it, when the engine can give them: `containers.py`)."""
        devices = containers.gpu_devices(host_env)
        problem = devices and containers.gpu_problem(self._engine, os.environ)
        if problem:
            gpus = ",".join(devices)
            self.note(replica, f"{replica.name} runs without its GPUs {gpus}: {problem}")
            devices = []
        inside = containers.container_environment(host_env, gpus=bool(devices))
        pool = replica.pool
        argv = containers.replica_argv(
            self._engine, replica.container, pool.image, pool.command,
            pool.argv[len(pool.command):], sorted(inside), self._storage_root, devices,
        )  # fmt: skip
        return argv, containers.client_environment(inside, os.environ, self.job_name)

    def index_logs(self) -> None:
        """Timestamp the new complete log lines of running replicas (for `entries:list`); the
        pumps do as lines come, this catches what a process wrote to its log file itself."""
        for replica in self.live():
            self._index(replica)

    def note(self, replica: Replica, text: str) -> None:
        """A line from the service in the replica's log (and the service's own log), stamped
        at once so that a follower of the job sees it now."""
        path = self.log_path(replica.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"[vtp local] {text}\n")
        _log.info("job %s: %s", self.job_id, text)
        self._index(replica)

    def _index(self, replica: Replica, final: bool = False) -> None:
        if stamp := index_lines(self.log_path(replica.name), final):
            self._on_line(stamp)

    def _wake_on_exit(self, proc: "subprocess.Popen | WarmProcess") -> None:
        proc.wait()
        self._wake.set()
