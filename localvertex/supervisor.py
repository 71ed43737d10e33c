"""Runs one job: starts its replicas, watches them, and applies Vertex's rules (`rules.py`).

One `JobRun` thread per job that has left the queue. It is the only code that touches the job's
processes; the API talks to it through `cancel()`, `preempt()` and `shutdown()`, which the thread
acts on at its next tick (the poll interval, or at once: they wake it).
"""

import logging
import os
import queue
import signal
import socket
import subprocess
import threading
import time
import traceback
import uuid
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from google.cloud import aiplatform_v1

from localvertex import errors, rules
from localvertex.cluster import OWNED_NAMES, OWNED_PREFIXES, Cluster, replica_environment
from localvertex.config import ServiceConfig
from localvertex.launch import JobPlan, PoolPlan
from localvertex.logs import index_lines
from localvertex.packages import InstallError, install
from localvertex.process import TOKEN_ENV, kill_leftovers, signal_group, spawn
from localvertex.store import ProcessRecord, Runtime
from storage import GCS_ROOT_ENV

State = aiplatform_v1.JobState
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Outcome:
    """How a job ended. `state` None means the service shut down: the job goes back to the queue."""

    state: State | None
    error_code: int = 0
    message: str = ""


class JobBook(Protocol):
    """What a JobRun needs from the service: record state changes and live processes."""

    def set_state(self, job_id: str, state: State) -> None: ...
    def save_history(self, job_id: str, history: rules.History) -> None: ...
    def add_process(self, process: ProcessRecord) -> None: ...
    def remove_process(self, job_id: str, replica: str) -> None: ...
    def finish(self, job_id: str, outcome: Outcome) -> None: ...


@dataclass
class Replica:
    """One replica and its current process (None before start and after exit)."""

    name: str
    pool: PoolPlan
    index: int
    proc: subprocess.Popen | None = None
    token: str = ""
    preempted: bool = False
    kill_at: float = 0.0
    python_path: str = ""
    finished: bool = False


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
        self._spec = job.job_spec
        self._runtime = runtime
        self.gpus = gpus
        self._config = config
        self._book = book
        self._policy = rules.Policy(
            job.job_spec.scheduling.restart_job_on_worker_restart,
            job.job_spec.scheduling.disable_retries,
        )
        self._history = rules.History(runtime.job_retries, dict(runtime.worker_restarts))
        self._replicas = {n: Replica(n, p, i) for p in plan.pools for i, n in enumerate(p.replicas)}
        self._plan = plan
        self._cluster = self._new_cluster()
        self._cancel = threading.Event()
        self._shutdown = threading.Event()
        self._wake = threading.Event()
        self._commands: queue.Queue[_Preempt] = queue.Queue()
        self._early_exits: list[rules.ReplicaExit] = []

    # -- what other threads call ------------------------------------------------------------

    def cancel(self) -> None:
        """Stop every replica (SIGTERM, grace, SIGKILL); the job ends CANCELLED."""
        self._cancel.set()
        self._wake.set()

    def shutdown(self) -> None:
        """Stop every replica because the service stops; the job goes back to the queue."""
        self._shutdown.set()
        self._wake.set()

    def preempt(self, replica: str, grace: float, timeout: float = 30.0) -> None:
        """Stop `replica` as a maintenance event would; raise ApiError if it is not running."""
        if replica not in self._replicas:
            known = ", ".join(self._replicas)
            raise errors.invalid_argument(f"replica {replica!r} is not in this job ({known}).")
        command = _Preempt(replica, grace)
        self._commands.put(command)
        self._wake.set()
        command.reply.result(timeout=timeout)

    def log_path(self, replica: str) -> Path:
        """The replica's log file."""
        return self._config.state_dir / "jobs" / self.job_id / "logs" / f"{replica}.log"

    # -- the thread ---------------------------------------------------------------------------

    def run(self) -> None:
        try:
            outcome = self._run()
        except Exception:
            _log.error("job %s: internal error\n%s", self.job_id, traceback.format_exc())
            outcome = Outcome(State.JOB_STATE_FAILED, errors.INTERNAL, rules.INTERNAL_ERROR_MESSAGE)
        self._stop_replicas(self._live())
        self._answer_commands()
        self._book.finish(self.job_id, outcome)

    def _run(self) -> Outcome:
        self._book.set_state(self.job_id, State.JOB_STATE_PENDING)
        failure = self._install_packages()
        if failure:
            return failure
        if self._cancel.is_set() or self._shutdown.is_set():
            return self._interrupted()
        for replica in self._replicas.values():
            self._start(replica)
        self._book.set_state(self.job_id, State.JOB_STATE_RUNNING)
        return self._supervise()

    def _supervise(self) -> Outcome:
        while True:
            self._wake.clear()
            if self._cancel.is_set() or self._shutdown.is_set():
                return self._interrupted()
            if self._timed_out():
                self._stop_replicas(self._live())
                return Outcome(
                    State.JOB_STATE_FAILED, errors.DEADLINE_EXCEEDED, self._timeout_msg()
                )
            self._run_commands()
            self._escalate()
            for replica in self._live():
                index_lines(self.log_path(replica.name))
            outcome = self._handle_exits()
            if outcome:
                return outcome
            self._wake.wait(self._config.poll_interval)

    def _handle_exits(self) -> Outcome | None:
        for event in self._exits():
            decision = rules.decide(event, self._history, self._policy)
            outcome = self._apply(decision, event)
            if outcome or decision.action in (rules.Action.RESTART_ALL, rules.Action.RETRY_JOB):
                return outcome  # after a restart of everything the rest of the batch is moot
        return None

    def _apply(self, decision: rules.Decision, event: rules.ReplicaExit) -> Outcome | None:
        action, replica = decision.action, self._replicas[decision.replica]
        if action is rules.Action.CONTINUE:
            replica.finished = True
            return None
        if action is rules.Action.SUCCEED:
            self._stop_replicas(self._live())
            return Outcome(State.JOB_STATE_SUCCEEDED)
        if action is rules.Action.FAIL:
            self._stop_replicas(self._live())
            log = self.log_path(replica.name)
            hint = f" To find out more about why your job exited please check the logs: {log}"
            return Outcome(State.JOB_STATE_FAILED, decision.error_code, decision.message + hint)
        self._history = rules.after(decision, self._history)
        self._book.save_history(self.job_id, self._history)
        self._note(replica, f"{action.value} after exit status {event.status} ({self._counts()})")
        if action is rules.Action.RESTART_WORKER:
            self._start(replica)
            return None
        self._stop_replicas(self._live())
        if action is rules.Action.RETRY_JOB:
            self._cluster = self._new_cluster()  # a new attempt gets fresh ports
        for each in self._replicas.values():
            self._start(each)
        return None

    # -- processes ----------------------------------------------------------------------------

    def _start(self, replica: Replica) -> None:
        replica.token, replica.preempted, replica.kill_at, replica.finished = (
            uuid.uuid4().hex,
            False,
            0.0,
            False,
        )
        self._note(replica, f"starting {replica.name}: {' '.join(replica.pool.argv)}")
        work = self._config.state_dir / "jobs" / self.job_id / "work" / replica.name
        try:
            proc = spawn(
                replica.pool.argv, self._environment(replica), work, self.log_path(replica.name)
            )
        except OSError as exc:
            self._note(replica, f"cannot start {replica.name}: {exc}")
            self._early_exits.append(rules.ReplicaExit(replica.name, 127))
            return
        replica.proc = proc
        self._book.add_process(ProcessRecord(self.job_id, replica.name, proc.pid, replica.token))
        # Wake the loop the moment the process ends, instead of at the next poll.
        threading.Thread(target=self._wake_on_exit, args=(proc,), daemon=True).start()

    def _wake_on_exit(self, proc: subprocess.Popen) -> None:
        proc.wait()
        self._wake.set()

    def _exits(self) -> list[rules.ReplicaExit]:
        exits, self._early_exits = self._early_exits, []
        together = self._policy.restart_job_on_worker_restart and not self._policy.disable_retries
        # With restartJobOnWorkerRestart, peers that crash because a preempted worker vanished are
        # part of that restart, not user errors: hold their exits until the preemption resolves.
        hold = together and any(r.preempted for r in self._live())
        for replica in self._live():
            if hold and not replica.preempted:
                continue
            code = replica.proc.poll()
            if code is not None:
                self._reap(replica)
                exits.append(
                    rules.ReplicaExit(replica.name, rules.exit_status(code), replica.preempted)
                )
        return sorted(exits, key=lambda e: (not e.preempted, e.replica))

    def _stop_replicas(self, replicas: list[Replica], grace: float | None = None) -> None:
        """SIGTERM each replica's group, SIGKILL what is left after the grace period, reap."""
        deadline = time.monotonic() + (self._config.grace_period if grace is None else grace)
        for replica in replicas:
            signal_group(replica.proc.pid, signal.SIGTERM)
        pending = list(replicas)
        while pending:
            pending = [r for r in pending if r.proc.poll() is None]
            if pending and time.monotonic() >= deadline:
                for replica in pending:
                    signal_group(replica.proc.pid, signal.SIGKILL)
                    replica.proc.wait()
            elif pending:
                time.sleep(min(self._config.poll_interval, 0.05))
        for replica in replicas:
            self._reap(replica)

    def _reap(self, replica: Replica) -> None:
        kill_leftovers(replica.proc.pid, replica.token)  # children it left behind
        index_lines(self.log_path(replica.name), final=True)
        self._book.remove_process(self.job_id, replica.name)
        replica.proc = None

    def _escalate(self) -> None:
        for replica in self._live():
            if replica.kill_at and time.monotonic() >= replica.kill_at:
                signal_group(replica.proc.pid, signal.SIGKILL)
                replica.kill_at = 0.0

    def _live(self) -> list[Replica]:
        return [r for r in self._replicas.values() if r.proc is not None]

    # -- commands -----------------------------------------------------------------------------

    def _run_commands(self) -> None:
        while not self._commands.empty():
            command = self._commands.get_nowait()
            replica = self._replicas[command.replica]
            if replica.proc is None or replica.preempted:
                command.reply.set_exception(
                    errors.failed_precondition(f"replica {replica.name} is not running now.")
                )
                continue
            self._note(
                replica, f"preempting {replica.name}: SIGTERM, SIGKILL in {command.grace:g}s"
            )
            replica.preempted = True
            replica.kill_at = time.monotonic() + command.grace
            signal_group(replica.proc.pid, signal.SIGTERM)
            command.reply.set_result(None)

    def _answer_commands(self) -> None:
        while not self._commands.empty():
            command = self._commands.get_nowait()
            command.reply.set_exception(errors.failed_precondition("the job is not running."))

    # -- helpers ------------------------------------------------------------------------------

    def _interrupted(self) -> Outcome:
        self._stop_replicas(self._live())
        if self._cancel.is_set():
            return Outcome(State.JOB_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
        return Outcome(None)

    def _install_packages(self) -> Outcome | None:
        for pool in self._plan.pools:
            if not pool.package_uris:
                continue
            try:
                path = install(
                    pool.package_uris,
                    self._config.storage_root,
                    self._config.state_dir / "packages",
                )
            except InstallError as exc:
                field = f"workerPoolSpecs[{pool.index}].pythonPackageSpec.packageUris"
                message = f"The replica {pool.replicas[0]} could not install {field}: {exc}"
                return Outcome(State.JOB_STATE_FAILED, errors.INVALID_ARGUMENT, message)
            for name in pool.replicas:
                self._replicas[name].python_path = str(path)
        return None

    def _environment(self, replica: Replica) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in OWNED_NAMES and not k.startswith(OWNED_PREFIXES)
        }
        env.update(replica_environment(self._cluster, replica.pool.index, replica.index))
        env[GCS_ROOT_ENV] = str(self._config.storage_root)
        env["PYTHONUNBUFFERED"] = "1"
        env["CUDA_VISIBLE_DEVICES"] = ",".join(self.gpus.get(replica.name, ()))
        if replica.python_path:
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [replica.python_path, env.get("PYTHONPATH")])
            )
        env.update(self._runtime.extra_env)
        env.update(dict(replica.pool.env))
        env[TOKEN_ENV] = replica.token
        return env

    def _new_cluster(self) -> Cluster:
        sizes = self._plan.pool_sizes()
        pools = tuple(tuple(f"127.0.0.1:{_free_port()}" for _ in range(n)) for n in sizes)
        spec_json = aiplatform_v1.CustomJobSpec.to_json(self._spec, indent=None)
        base = self._spec.base_output_directory.output_uri_prefix
        return Cluster(self.job_id, pools, spec_json, base, self._runtime.trial_id)

    def _timed_out(self) -> bool:
        timeout = self._spec.scheduling.timeout
        seconds = timeout.total_seconds() if timeout else 0
        return bool(seconds) and time.time() >= self._runtime.started_at + seconds

    def _timeout_msg(self) -> str:
        seconds = self._spec.scheduling.timeout.total_seconds()
        return (
            "The job exceeded its maximum running time "
            f"(scheduling.timeout = {seconds:g}s) and was stopped."
        )

    def _counts(self) -> str:
        restarts = sum(self._history.worker_restarts.values())
        retries = self._history.job_retries
        return f"job retries {retries}/{rules.MAX_JOB_RETRIES}, worker restarts {restarts}"

    def _note(self, replica: Replica, text: str) -> None:
        path = self.log_path(replica.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"[vtp local] {text}\n")
        _log.info("job %s: %s", self.job_id, text)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
