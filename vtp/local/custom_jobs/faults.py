"""Faults a test asks for (`customJobs:injectFault`), the jobs they go to, and whether they struck.

    faults = Faults()
    faults.arm(parent, parse_fault(body))           # FAIL, OOM, PREEMPT or STOCKOUT
    fault = faults.claim(parent, "JOB", name)       # at a job's creation: its fault, or None
    runtime.fault = fault.runtime                   # what the job's supervisor applies

A fault goes to the `nth` job of its kind created after it (1: the next), counting every one;
a job an earlier fault already took passes to the next. Not thread-safe: the custom jobs
service calls it under its lock.
"""

from dataclasses import dataclass

from vtp.local.base import errors
from vtp.local.runtime import rules

MAX_NTH = MAX_ATTEMPTS = 1000

FAULTS = ("FAIL", "OOM", "PREEMPT", "STOCKOUT")
"""What a fault makes of its job, as Vertex has it happen: its primary replica runs its code and,
once it has logged a line of its own, is made to exit with a status (FAIL, 1 unless told) or is
killed by SIGKILL as out of memory (OOM, status 137), Vertex's rules applying to that exit as to
any; it is preempted once as it starts (PREEMPT); or its machines are out of stock (STOCKOUT): the
job stays PENDING while attempts to get them fail, and either gets them after `attempts` failed
ones or fails with Vertex's RESOURCE_EXHAUSTED (`supervisor.py`)."""
FAULT_TARGETS = ("JOB", "TRIAL")
"""Which job a fault goes to: a listed custom job (a pipeline task's too), or a tuning trial's."""


@dataclass
class Fault:
    """One fault a test asked for, and what became of it (`customJobs:faults`)."""

    fault: str
    exit_code: int = 0
    """The status a FAIL fault's replica exits with (OOM: 137, PREEMPT and STOCKOUT: 0)."""
    target: str = "JOB"
    nth: int = 1
    """Which job of its kind created after it the fault goes to (1: the next)."""
    attempts: int = 0
    """STOCKOUT: attempts that find no machines before one gets them; 0: the stockout lasts."""
    job: str = ""
    """The job it went to; empty while no job was created for it."""
    struck: bool = False
    """Whether it happened to that job (a FAIL or OOM needs the replica to log a line first)."""
    seen: int = 0
    """Jobs of its kind created since it was armed."""

    @property
    def runtime(self) -> str:
        """How the job's runtime keeps it: `FAIL:<status>`, `OOM`, `PREEMPT` or
        `STOCKOUT:<attempts>`."""
        if self.fault == "FAIL":
            return f"FAIL:{self.exit_code}"
        if self.fault == "STOCKOUT":
            return f"STOCKOUT:{self.attempts}"
        return self.fault

    def to_json(self) -> dict:
        """The REST form: fault, exitCode, target, nth, attempts, job, struck."""
        return {"fault": self.fault, "exitCode": self.exit_code, "target": self.target,
                "nth": self.nth, "attempts": self.attempts, "job": self.job,
                "struck": self.struck}  # fmt: skip


def parse_fault(body: dict) -> Fault:
    """The fault an `injectFault` body asks for; INVALID_ARGUMENT naming the field at fault."""
    fault, target = body.get("fault"), body.get("target", "JOB")
    if fault not in FAULTS:
        raise _invalid("fault", f"one of {', '.join(FAULTS)}", fault)
    if target not in FAULT_TARGETS:
        raise _invalid("target", f"one of {', '.join(FAULT_TARGETS)}", target)
    exit_code = _integer(body, "exitCode", 1, 1, 255)
    nth = _integer(body, "nth", 1, 1, MAX_NTH)
    if "attempts" in body and fault != "STOCKOUT":
        raise errors.invalid_argument('injectFault: "attempts" is for a STOCKOUT fault only.')
    attempts = _integer(body, "attempts", 0, 1, MAX_ATTEMPTS) if "attempts" in body else 0
    code = {"FAIL": exit_code, "OOM": rules.OOM_STATUS}.get(fault, 0)
    return Fault(fault, code, target, nth, attempts)


class Faults:
    """Every fault asked for, by parent (a project and location), oldest first."""

    def __init__(self) -> None:
        self._by_parent: dict[str, list[Fault]] = {}

    def arm(self, parent: str, fault: Fault) -> None:
        """Keep `fault` for the jobs to come under `parent`."""
        if "/-/" in f"{parent}/":
            raise errors.invalid_argument("injectFault: name one project and one location.")
        self._by_parent.setdefault(parent, []).append(fault)

    def claim(self, parent: str, target: str, job: str, listed: bool = True) -> Fault | None:
        """`job` (a resource name), of `target`'s kind, is created under `parent`: the fault
        it gets, or None. A JOB fault goes to listed jobs only (a trial's job is not)."""
        if target == "JOB" and not listed:
            return None
        taken: Fault | None = None
        for fault in self._by_parent.get(parent, []):
            if fault.job or fault.target != target:
                continue
            fault.seen += 1
            if taken is None and fault.seen >= fault.nth:
                taken = fault
        if taken:
            taken.job = job
        return taken

    def struck(self, job: str) -> None:
        """The fault given to `job` (a resource name) happened to it."""
        for fault in (f for faults in self._by_parent.values() for f in faults):
            if fault.job == job:
                fault.struck = True

    def listed(self, parent: str) -> list[Fault]:
        """Copies of the faults asked for under `parent`, oldest first."""
        return [Fault(**vars(f)) for f in self._by_parent.get(parent, [])]


def _integer(body: dict, field: str, default: int, low: int, high: int) -> int:
    value = body.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _invalid(field, f"an integer from {low} to {high}", value)
    return value


def _invalid(field: str, expected: str, value: object) -> errors.ApiError:
    shown = value[:40] if isinstance(value, str) else value
    return errors.invalid_argument(f'injectFault: "{field}" must be {expected}, got {shown!r}.')
