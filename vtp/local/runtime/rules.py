"""Vertex's failure rules as one pure function: a replica's exit and the job's history -> what next.

The rules (docs/vertex.md, "Lifecycle and failures"):

- The primary replica (`workerpool0-0`) exiting 0 ends the job: SUCCEEDED, the others are stopped.
  Any other replica exiting 0 has simply finished; the job waits for the primary.
- A user code exception (non-zero exit) is permanent: the job fails with
  `The replica <name> exited with a non-zero status of <code>. Termination reason: Error.`
  Exit codes that may be transient (SIGABRT: 6 or 134; SIGSEGV: 11 or 139) retry the whole job,
  up to 3 times, before it fails with that message.
- A replica killed by SIGKILL that the service did not send (137) ran out of memory, as far as
  a single machine can tell: permanent, with Vertex's out-of-memory wording.
- A non-permanent failure (maintenance or a SPOT reclaim: what `preempt` injects) restarts that
  worker under the same name, up to 5 restarts per worker; the next one retries the whole job, up to
  3 times; then the job fails. With `restartJobOnWorkerRestart` every restart restarts all workers.
- `disableRetries` turns the job retries off and, as the API reference says, overrides
  `restartJobOnWorkerRestart` to false. Worker restarts (a VM moving) still happen.
"""

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from vtp.local.base import errors

PRIMARY = "workerpool0-0"
MAX_WORKER_RESTARTS = 5
MAX_JOB_RETRIES = 3
MAX_INTERNAL_RESTARTS = 2
TRANSIENT_STATUSES = frozenset({6, 134, 11, 139})
OOM_STATUS = 137

INTERNAL_ERROR_MESSAGE = "Internal error occurred for the current attempt."


class Action(enum.Enum):
    """What the supervisor does after a replica exits."""

    CONTINUE = "continue"  # a worker finished; keep waiting for the primary
    SUCCEED = "succeed"  # stop the other replicas; the job SUCCEEDED
    RESTART_WORKER = "restart_worker"  # start the same replica again, same name
    RESTART_ALL = "restart_all"  # stop every replica and start them all again
    RETRY_JOB = "retry_job"  # a fresh attempt of the whole job
    FAIL = "fail"  # stop the other replicas; the job FAILED with `error`


@dataclass(frozen=True)
class ReplicaExit:
    """One replica process ended."""

    replica: str
    """Replica name, `workerpool<pool>-<index>`."""
    status: int
    """Exit status as a container reports it: the exit code, or 128 + signal number."""
    preempted: bool = False
    """True when the service stopped it for a maintenance event or SPOT reclaim (non-permanent)."""


@dataclass(frozen=True)
class Policy:
    """The job's `scheduling` settings that the rules read."""

    restart_job_on_worker_restart: bool = False
    disable_retries: bool = False


@dataclass(frozen=True)
class History:
    """What already happened to the job: whole-job retries and restarts per worker."""

    job_retries: int = 0
    worker_restarts: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Decision:
    """The outcome of one exit: an action, the replica it concerns, and the error when failing."""

    action: Action
    replica: str
    error_code: int = 0
    message: str = ""


def exit_status(returncode: int) -> int:
    """A Popen return code as a container reports it (killed by signal N -> 128 + N)."""
    return 128 - returncode if returncode < 0 else returncode


def user_error_message(replica: str, status: int, reason: str = "Error") -> str:
    """Vertex's wording for a replica that exited non-zero."""
    return (
        f"The replica {replica} exited with a non-zero status of {status}. "
        f"Termination reason: {reason}."
    )


def oom_message(replica: str, status: int) -> str:
    """Vertex's wording for a replica that ran out of memory."""
    return f"The replica {replica} ran out of memory and exited with a non-zero status of {status}."


def decide(event: ReplicaExit, history: History, policy: Policy) -> Decision:
    """What the job does after `event`, given its `history` and `policy`."""
    replica = event.replica
    if event.status == 0:
        action = Action.SUCCEED if replica == PRIMARY else Action.CONTINUE
        return Decision(action, replica)
    if event.preempted:
        return _non_permanent(event, history, policy)
    if event.status in TRANSIENT_STATUSES and _may_retry_job(history, policy):
        return Decision(Action.RETRY_JOB, replica)
    if event.status == OOM_STATUS:
        return _fail(replica, oom_message(replica, event.status))
    return _fail(replica, user_error_message(replica, event.status))


def _non_permanent(event: ReplicaExit, history: History, policy: Policy) -> Decision:
    replica = event.replica
    if history.worker_restarts.get(replica, 0) < MAX_WORKER_RESTARTS:
        together = policy.restart_job_on_worker_restart and not policy.disable_retries
        return Decision(Action.RESTART_ALL if together else Action.RESTART_WORKER, replica)
    if _may_retry_job(history, policy):
        return Decision(Action.RETRY_JOB, replica)
    return _fail(replica, user_error_message(replica, event.status, reason="Preempted"))


def _may_retry_job(history: History, policy: Policy) -> bool:
    return not policy.disable_retries and history.job_retries < MAX_JOB_RETRIES


def _fail(replica: str, message: str) -> Decision:
    # Vertex reports user code failures with code 3 (INVALID_ARGUMENT) on the job's `error`.
    return Decision(Action.FAIL, replica, errors.INVALID_ARGUMENT, message)


def after(decision: Decision, history: History) -> History:
    """The history once `decision` is carried out (counters the next decision reads)."""
    if decision.action in (Action.RESTART_WORKER, Action.RESTART_ALL):
        restarts = dict(history.worker_restarts)
        restarts[decision.replica] = restarts.get(decision.replica, 0) + 1
        return History(history.job_retries, restarts)
    if decision.action is Action.RETRY_JOB:
        return History(history.job_retries + 1, {})
    return history


def may_restart_after_crash(internal_restarts: int, policy: Policy) -> bool:
    """Whether a job interrupted by the service itself stopping gets another attempt."""
    return not policy.disable_retries and internal_restarts < MAX_INTERNAL_RESTARTS
