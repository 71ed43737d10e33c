"""Runs one job: starts its replicas, watches them, and applies Vertex's rules (`rules.py`).

One `JobRun` thread per job that has left the queue. It alone touches the job's processes
(`replicas.py`); the API talks to it through `cancel()`, `preempt()` and `shutdown()`, which wake
it. It also wakes when a replica exits, and otherwise every poll interval.
"""

import dataclasses
import logging
import os
import queue
import secrets
import signal
import socket
import sys
import threading
import time
import traceback
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Protocol, cast

from google.cloud import aiplatform_v1

from vtp import private_files
from vtp.engine import tree_walk
from vtp.local.base import errors
from vtp.local.base.config import ServiceConfig
from vtp.local.runtime import rules
from vtp.local.runtime.cluster import (
    Cluster,
    container_environment,
    layered_environment,
    replica_environment,
)
from vtp.local.runtime.launch import JobPlan, PoolPlan
from vtp.local.runtime.packages import InstallError, InstallInterrupted, index_settings, install
from vtp.local.runtime.pip_cache import user_cache
from vtp.local.runtime.process import SERVICE_ENV, TOKEN_ENV, signal_group
from vtp.local.runtime.records import Runtime
from vtp.local.runtime.replicas import CANNOT_START, ProcessBook, Replica, ReplicaSet
from vtp.local.runtime.warm import WarmStarter
from vtp.storage import GCS_ROOT_ENV
from vtp.vertex.prebuilt_images import training_image

State = aiplatform_v1.JobState
_log = logging.getLogger(__name__)
STOCKOUT_RETRIES = 3
"""Retries of a job whose machines are out of stock before it fails (Vertex does not publish
its own number; as many as its job retries). FLEX_START waits on, up to maxWaitDuration."""
MAX_WAIT_DEFAULT = 24 * 3600.0
"""`scheduling.maxWaitDuration` when a FLEX_START job sets none, as on Vertex."""
_EVERYONE = (rules.Action.RESTART_ALL, rules.Action.RETRY_JOB)


@dataclass(frozen=True)
class Outcome:
    """How a job ended. `state` None means the service shut down: the job goes back to the queue.

    `state` is a JobState member, typed as the int mypy sees proto-plus enum members as."""

    state: int | None
    error_code: int = 0
    message: str = ""


class JobBook(ProcessBook, Protocol):
    """What a JobRun needs from the service: record state changes and live processes."""

    def set_state(self, job_id: str, state: int) -> None: ...
    def save_history(self, job_id: str, history: rules.History) -> None: ...
    def finish(self, job_id: str, outcome: Outcome) -> None: ...
    def logged(self, job_id: str, stamp: str) -> None:
        """New lines in the job's replica logs, the newest stamped `stamp` (wakes followers)."""
        ...

    def fault_struck(self, job_id: str) -> None:
        """The fault a test gave the job happened to it."""
        ...

    @property
    def service_id(self) -> str:
        """The service's id, which every replica carries."""
        ...

    @property
    def client_env(self) -> dict[str, str]:
        """What points a replica's clients back at the service."""
        ...

    @property
    def warm(self) -> WarmStarter | None:
        """The service's preloaded server that host replicas fork from (`warm.py`), if any."""
        ...


@dataclass
class _Preempt:
    replica: str
    grace: float
    reply: Future = field(default_factory=Future)


class JobRun(threading.Thread):
    """The supervisor of one job: from PENDING to a terminal state."""

    def __init__(
        self,
        job: aiplatform_v1.CustomJob,
        runtime: Runtime,
        plan: JobPlan,
        gpus: dict[str, tuple[str, ...]],
        config: ServiceConfig,
        book: JobBook,
    ) -> None:
        self.job_id = job.name.rsplit("/", 1)[-1]
        super().__init__(name=f"job-{self.job_id}", daemon=True)
        self.gpus = gpus
        self._spec = job.job_spec
        self._runtime = runtime
        self._plan = plan
        self._config = config
        self._book = book
        scheduling = job.job_spec.scheduling
        self._policy = rules.Policy(
            scheduling.restart_job_on_worker_restart, scheduling.disable_retries
        )
        self._history = rules.History(runtime.job_retries, dict(runtime.worker_restarts))
        self._cancel, self._shutdown, self._wake = (threading.Event() for _ in range(3))
        job_dir = config.state_dir / "jobs" / self.job_id
        self._rendezvous_root = job_dir / "rendezvous"
        self._armed = _armed_fault(runtime.fault)
        """(fault, status) still to strike the primary replica once it logs a line, or None."""
        self._strike_lock = threading.Lock()
        self._struck: dict[str, tuple[str, int]] = {}
        """Replicas a fault made exit, not yet reaped: the fault and the status they exit with."""
        self._own_lines_from = 0
        """Where in the primary's log its lines of this job run begin (the fault reads on)."""
        self._set = ReplicaSet(
            self.job_id, plan, job_dir, book, self._wake, config.storage_root,
            config.container_engine, self._on_line, job.name, book.warm,
        )  # fmt: skip
        self._cluster = self._new_cluster()
        self._commands: queue.Queue[_Preempt] = queue.Queue()
        self._cannot_start: list[rules.ReplicaExit] = []

    # -- what other threads call ------------------------------------------------------------

    def cancel(self) -> None:
        """Stop every replica (SIGTERM, grace, SIGKILL); the job ends CANCELLED."""
        self._cancel.set()
        self._wake.set()

    def shutdown(self) -> None:
        """Stop every replica because the service stops; the job goes back to the queue."""
        self._shutdown.set()
        self._wake.set()

    def preempt(self, replica: str, grace: float, timeout: float = 60.0) -> None:
        """Stop `replica` as a maintenance event would; raise ApiError if it is not running."""
        if replica not in self._set.replicas:
            known = ", ".join(self._set.replicas)
            raise errors.invalid_argument(f"replica {replica!r} is not in this job ({known}).")
        command = _Preempt(replica, grace)
        self._commands.put(command)
        self._wake.set()
        try:
            command.reply.result(timeout=timeout)
        except TimeoutError:
            raise errors.failed_precondition("the job did not take the preemption.") from None

    def warn(self, text: str) -> None:
        """A line from the service in the job's log (its first replica's), before it starts."""
        self._set.note(next(iter(self._set.replicas.values())), text)

    # -- the thread ---------------------------------------------------------------------------

    def run(self) -> None:
        try:
            outcome = self._run()
        except Exception:
            _log.error("job %s: internal error\n%s", self.job_id, traceback.format_exc())
            outcome = Outcome(State.JOB_STATE_FAILED, errors.INTERNAL, rules.INTERNAL_ERROR_MESSAGE)
        self._stop_replicas(self._set.live())
        tree_walk.remove_tree(self._rendezvous_root, ignore_errors=True)
        self._refuse_commands()
        self._book.finish(self.job_id, outcome)

    def _run(self) -> Outcome:
        self._book.set_state(self.job_id, State.JOB_STATE_PENDING)
        failure = self._provision() or self._install_packages()
        if failure or self._cancel.is_set() or self._shutdown.is_set():
            return failure or self._interrupted()
        log = self._set.log_path(rules.PRIMARY)
        self._own_lines_from = log.stat().st_size if log.is_file() else 0
        self._start_all()
        self._book.set_state(self.job_id, State.JOB_STATE_RUNNING)
        if self._runtime.fault == "PREEMPT":
            self._preempt_once()
        while True:
            self._wake.clear()
            outcome = self._tick()
            if outcome:
                return outcome
            self._wake.wait(self._config.poll_interval)

    def _tick(self) -> Outcome | None:
        if self._cancel.is_set() or self._shutdown.is_set():
            return self._interrupted()
        if self._timed_out():
            self._stop_replicas(self._set.live())
            return Outcome(State.JOB_STATE_FAILED, errors.DEADLINE_EXCEEDED, self._timeout_msg())
        self._run_commands()
        self._strike()
        self._set.escalate()
        self._set.index_logs()
        for event in self._exits():
            decision = rules.decide(event, self._history, self._policy)
            outcome = self._apply(decision, event)
            if outcome or decision.action in _EVERYONE:
                return outcome  # after a restart of everything the rest of the batch is moot
        return None

    def _apply(self, decision: rules.Decision, event: rules.ReplicaExit) -> Outcome | None:
        action, replica = decision.action, self._set.replicas[decision.replica]
        if action is rules.Action.CONTINUE:
            return None
        if action in (rules.Action.SUCCEED, rules.Action.FAIL):
            self._stop_replicas(self._set.live())
            if action is rules.Action.SUCCEED:
                return Outcome(State.JOB_STATE_SUCCEEDED)
            log = self._set.log_path(replica.name)
            hint = f" To find out more about why your job exited please check the logs: {log}"
            return Outcome(State.JOB_STATE_FAILED, decision.error_code, decision.message + hint)
        self._history = rules.after(decision, self._history)
        self._book.save_history(self.job_id, self._history)
        self._set.note(
            replica, f"{action.value} after exit status {event.status} ({self._counts()})"
        )
        if action is rules.Action.RESTART_WORKER:
            self._start(replica)
            return None
        self._stop_replicas(self._set.live())
        if action is rules.Action.RETRY_JOB:
            self._cluster = self._new_cluster()  # a new attempt gets fresh ports
        self._start_all()
        return None

    def _exits(self) -> list[rules.ReplicaExit]:
        exits, self._cannot_start = self._cannot_start, []
        together = self._policy.restart_job_on_worker_restart and not self._policy.disable_retries
        # With restartJobOnWorkerRestart, peers that crash because a preempted worker vanished are
        # part of that restart, not user errors: their failures wait for the preemption to end.
        hold = together and any(r.preempted for r in self._set.live())
        for replica in self._set.live():
            code = replica.running().poll()
            if code is None or (hold and code != 0 and not replica.preempted):
                continue
            self._set.reap(replica)
            status = self._struck_status(replica, rules.exit_status(code))
            exits.append(rules.ReplicaExit(replica.name, status, replica.preempted))
        return sorted(exits, key=lambda e: (not e.preempted, e.replica))

    # -- replicas -----------------------------------------------------------------------------

    def _start_all(self) -> None:
        self._cluster = self._new_rendezvous(self._cluster)
        for replica in self._set.replicas.values():
            self._start(replica)

    def _new_rendezvous(self, cluster: Cluster) -> Cluster:
        """`cluster` with a new private folder where the PyTorch nodes (pools 0 and 1) meet,
        the earlier ones removed (vtp.trainer.rendezvous: another user cannot enter it, and no
        network namespace reach it, where a TCP store on MASTER_PORT would be open to both).

        New at every start of all replicas: a store file the previous start's processes left
        (killed, they never clean up) would hand the new ones its keys. None when a node runs in
        an image, which does not see this machine's folders: the nodes then all meet at
        MASTER_ADDR:MASTER_PORT (127.0.0.1, which the trainer binds its store to)."""
        tree_walk.remove_tree(self._rendezvous_root, ignore_errors=True)
        if any(pool.image for pool in self._plan.pools if pool.index in (0, 1)):
            return dataclasses.replace(cluster, rendezvous_dir="")
        folder = private_files.private_dir(self._rendezvous_root / secrets.token_hex(8))
        return dataclasses.replace(cluster, rendezvous_dir=str(folder))

    def _start(self, replica: Replica) -> None:
        if not self._set.start(replica, self._environment):
            self._cannot_start.append(rules.ReplicaExit(replica.name, CANNOT_START))

    def _stop_replicas(self, replicas: list[Replica]) -> None:
        self._set.stop(replicas, self._config.grace_period, self._config.poll_interval)

    def _environment(self, replica: Replica) -> dict[str, str]:
        service = {
            GCS_ROOT_ENV: str(self._config.storage_root),
            "PYTHONUNBUFFERED": "1",
            "CUDA_VISIBLE_DEVICES": ",".join(self.gpus.get(replica.name, ())),
            # On Vertex each replica has its machine's cores; here the job's replicas share this
            # one's. Without a share each would start a thread per core and they would thrash.
            "OMP_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // sum(self._plan.pool_sizes()))),
        }
        base = self._container()
        clients = self._book.client_env  # Vertex and Cloud Storage calls reach this service
        service.update(clients)
        paths = [
            clients.get("PYTHONPATH"),  # the start-up hook
            replica.python_path,
            str(self._config.import_dir or ""),
            base.get("PYTHONPATH"),
        ]
        service["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
        vertex = replica_environment(self._cluster, replica.pool.index, replica.index)
        # Precedence, lowest first: a container's environment, Vertex's variables, the service's
        # own, the caller's extras (a tuning trial's metric file), the pool's `env`.
        return layered_environment(
            base,
            vertex,
            service,
            self._runtime.extra_env,
            dict(replica.pool.env),
            {TOKEN_ENV: replica.token, SERVICE_ENV: self._book.service_id},
        )

    def _container(self) -> dict[str, str]:
        """What a container on Vertex has of this machine's environment (`cluster.py`)."""
        interpreter_bin = str(Path(sys.executable).parent)
        return container_environment(os.environ, interpreter_bin, self._config.pass_env)

    def _install_environment(self) -> dict[str, str]:
        """pip's environment: a replica's container, how this machine reaches its package
        index, the storage root, and the service's id (so the watchdog finds it too)."""
        return layered_environment(
            self._container(),
            index_settings(os.environ),
            {
                GCS_ROOT_ENV: str(self._config.storage_root),
                "PYTHONUNBUFFERED": "1",
                SERVICE_ENV: self._book.service_id,
            },
        )

    def _new_cluster(self) -> Cluster:
        sizes = self._plan.pool_sizes()
        pools = tuple(tuple(f"127.0.0.1:{_free_port()}" for _ in range(n)) for n in sizes)
        spec_json = aiplatform_v1.CustomJobSpec.to_json(self._spec, indent=None)
        base = self._spec.base_output_directory.output_uri_prefix
        trial = self._runtime.trial_id
        return Cluster(
            self.job_id, pools, spec_json, base, trial, job_name=self._set.job_name,
            experiment=self._spec.experiment, experiment_run=self._spec.experiment_run,
        )  # fmt: skip

    def _install_packages(self) -> Outcome | None:
        cache = self._config.state_dir / "packages"
        env = self._install_environment()
        for pool in self._plan.pools:
            image = self._prebuilt_image(pool)
            if not pool.package_uris and not image:
                continue
            first = self._set.replicas[pool.replicas[0]]
            if pool.package_uris:
                self._set.note(first, f"installing {' '.join(pool.package_uris)} with pip")
            try:
                prepared = install(
                    pool.package_uris, self._config.storage_root, cache, env, self._stopping,
                    self._set.log_path(first.name), image, _image_cache(image),
                )  # fmt: skip
            except InstallInterrupted:
                return None  # `_run` sees the cancel or the shutdown
            except InstallError as exc:
                field = f"workerPoolSpecs[{pool.index}].pythonPackageSpec.packageUris"
                message = f"The replica {pool.replicas[0]} could not install {field}: {exc}"
                return Outcome(State.JOB_STATE_FAILED, errors.INVALID_ARGUMENT, message)
            if prepared.environment:
                how = "reused, already installed in" if prepared.cached else "installed in"
                wanted = ", ".join(prepared.requirements)
                self._set.note(first, f"requirements {wanted}: {how} {prepared.environment}")
            for name in pool.replicas:
                self._set.replicas[name].python_path = str(prepared.archives or "")
                self._set.replicas[name].sites = tuple(prepared.sites)
        return None

    def _prebuilt_image(self, pool: PoolPlan) -> str:
        """The prebuilt training image a pool of host processes names (its executorImageUri,
        or its containerSpec's), whose packages `install` gives it; "" for any other pool."""
        spec = self._spec.worker_pool_specs[pool.index]
        uri = spec.python_package_spec.executor_image_uri or spec.container_spec.image_uri
        return uri if not pool.image and training_image(uri) else ""

    # -- a fault that strikes once the replica has logged a line -------------------------------

    def _on_line(self, stamp: str) -> None:
        """New log lines (from a log pump's thread, or this one): tell the service, and let an
        armed fault strike at once rather than at the next poll."""
        self._book.logged(self.job_id, stamp)
        if self._armed:
            self._strike()

    def _strike(self) -> None:
        """A FAIL or OOM fault: once the primary replica, running, has logged a line of its own,
        SIGKILL it; `_exits` then reports the fault's status, and Vertex's rules apply to it."""
        with self._strike_lock:
            replica = self._set.replicas[rules.PRIMARY]
            proc = replica.proc
            if not self._armed or proc is None or proc.poll() is not None:
                return
            if not self._logged_own_line():
                return
            self._struck[replica.name], self._armed = self._armed, None
            signal_group(proc.pid, signal.SIGKILL)
        self._wake.set()

    def _logged_own_line(self) -> bool:
        """Whether the primary's log has a complete line of its own (not a service note)."""
        try:
            with open(self._set.log_path(rules.PRIMARY), "rb") as log:
                log.seek(self._own_lines_from)
                data = log.read()
        except OSError:
            return False
        lines = data[: data.rfind(b"\n") + 1].splitlines()
        return any(not line.startswith(b"[vtp local] ") for line in lines)

    def _struck_status(self, replica: Replica, status: int) -> int:
        """The exit status of a reaped replica: the fault's, where a fault made it exit."""
        with self._strike_lock:
            struck = self._struck.pop(replica.name, None)
        if struck is None:
            return status
        fault, status = struck
        how = (
            "killed by SIGKILL, as out of memory"
            if fault == "OOM"
            else f"made to exit with status {status}"
        )
        self._set.note(replica, f"fault: {replica.name} {how}, after its first line (injected)")
        self._book.fault_struck(self.job_id)
        return status

    def _provision(self) -> Outcome | None:
        """A STOCKOUT fault: the job, PENDING, tries to get its machines once a poll interval,
        and the first `attempts` tries find none (0: none ever does). As on Vertex, it then
        fails, RESOURCE_EXHAUSTED, after STOCKOUT_RETRIES retries; a FLEX_START job waits on,
        up to `scheduling.maxWaitDuration` (0: without end)."""
        failing = _stockout_attempts(self._runtime.fault)
        if failing is None:
            return None
        first, message = self._set.replicas[rules.PRIMARY], _stockout_message(self._set.job_name)
        wait = self._max_wait()
        self._book.fault_struck(self.job_id)
        tries = 0
        while not failing or tries < failing:
            tries += 1
            self._set.note(first, f"fault: attempt {tries} to get the machines: {message}")
            waited = time.time() - self._runtime.started_at
            if (wait is None and tries > STOCKOUT_RETRIES) or (wait and waited >= wait):
                return Outcome(State.JOB_STATE_FAILED, errors.RESOURCE_EXHAUSTED, message)
            self._wake.clear()
            self._wake.wait(self._config.poll_interval)
            if self._stopping():
                return None
        self._set.note(first, f"fault: attempt {tries + 1} got the machines, after the stockout")
        return None

    def _max_wait(self) -> float | None:
        """How long a FLEX_START job waits for its machines, in seconds (0: without end); None
        for any other strategy, which retries STOCKOUT_RETRIES times."""
        scheduling = self._spec.scheduling
        if scheduling.strategy != aiplatform_v1.Scheduling.Strategy.FLEX_START:
            return None
        if "max_wait_duration" not in scheduling:
            return MAX_WAIT_DEFAULT
        return cast(timedelta, scheduling.max_wait_duration).total_seconds()

    def _preempt_once(self) -> None:
        """A PREEMPT fault: the primary replica is preempted once, as it starts."""
        replica = self._set.replicas[rules.PRIMARY]
        if replica.proc is not None:
            self._set.preempt(replica, self._config.grace_period)
            self._book.fault_struck(self.job_id)

    # -- commands and ends --------------------------------------------------------------------

    def _stopping(self) -> bool:
        return self._cancel.is_set() or self._shutdown.is_set()

    def _run_commands(self) -> None:
        while not self._commands.empty():
            command = self._commands.get_nowait()
            replica = self._set.replicas[command.replica]
            if replica.proc is None or replica.preempted:
                error = errors.failed_precondition(f"replica {replica.name} is not running now.")
                command.reply.set_exception(error)
                continue
            self._set.preempt(replica, command.grace)
            command.reply.set_result(None)

    def _refuse_commands(self) -> None:
        while not self._commands.empty():
            command = self._commands.get_nowait()
            command.reply.set_exception(errors.failed_precondition("the job is not running."))

    def _interrupted(self) -> Outcome:
        self._stop_replicas(self._set.live())
        if self._cancel.is_set():
            return Outcome(State.JOB_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
        return Outcome(None)

    def _timed_out(self) -> bool:
        seconds = self._timeout_seconds()
        return bool(seconds) and time.time() >= self._runtime.started_at + seconds

    def _timeout_msg(self) -> str:
        seconds = self._timeout_seconds()
        return (
            "The job exceeded its maximum running time "
            f"(scheduling.timeout = {seconds:g}s) and was stopped."
        )

    def _timeout_seconds(self) -> float:
        # proto-plus hands a Duration field out as a timedelta; aiplatform's hints say Duration.
        return cast(timedelta, self._spec.scheduling.timeout).total_seconds()

    def _counts(self) -> str:
        restarts = sum(self._history.worker_restarts.values())
        retries = self._history.job_retries
        return f"job retries {retries}/{rules.MAX_JOB_RETRIES}, worker restarts {restarts}"


def _armed_fault(fault: str) -> tuple[str, int] | None:
    """The runtime's `FAIL:<status>` or `OOM` as (fault, status); None for others and none."""
    if fault == "OOM":
        return "OOM", rules.OOM_STATUS
    if fault.startswith("FAIL"):
        return "FAIL", int(fault.partition(":")[2] or 1)
    return None


def _stockout_attempts(fault: str) -> int | None:
    """The failing attempts of the runtime's `STOCKOUT:<attempts>` (0: all); None for others."""
    if not fault.startswith("STOCKOUT"):
        return None
    return int(fault.partition(":")[2] or 0)


def _stockout_message(job_name: str) -> str:
    """Vertex's words for a stockout, in the job's region."""
    region = job_name.split("/")[3] if job_name.count("/") >= 5 else "us-central1"
    return (
        f"Resources are insufficient in region: {region}. Please try a different region. "
        "If you use K80, please consider using P100 or V100 instead."
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _image_cache(image: str) -> Path | None:
    """Where prebuilt images' layers are kept: this user's cache, shared by their services (a
    layer is keyed by the image, its packages and the service's environment); None without an
    image. InstallError where another user could plant or replace what is in it."""
    if not image:
        return None
    try:
        return user_cache(os.environ, "images")
    except (private_files.UnsafePath, OSError) as exc:
        raise InstallError(f"cannot keep {image}'s packages in this user's cache: {exc}") from None
