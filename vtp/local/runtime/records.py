"""What the runtime keeps about a job and its processes beyond the public CustomJob resource.

The custom jobs store persists both; the supervisor and the replica set read and update them.
"""

from dataclasses import dataclass, field


@dataclass
class Runtime:
    """What the service keeps about a job beyond the public CustomJob resource."""

    trial_id: str = ""
    """The tuning trial this job runs (CLOUD_ML_TRIAL_ID), or empty."""
    extra_env: dict[str, str] = field(default_factory=dict)
    """Variables added to every replica's environment (the tuner's metric file, ...)."""
    listed: bool = True
    """False hides the job from `customJobs.list` (tuning trials, as on Vertex)."""
    job_retries: int = 0
    worker_restarts: dict[str, int] = field(default_factory=dict)
    internal_restarts: int = 0
    """Attempts restarted because the service itself stopped while the job ran."""
    started_at: float = 0.0
    """Wall-clock time the job first left the queue; `scheduling.timeout` counts from here."""
    replica_starts: dict[str, int] = field(default_factory=dict)
    """How often each replica's process was started (all attempts)."""
    exit_statuses: dict[str, int] = field(default_factory=dict)
    """Each ended replica's last exit status, as a container reports it (128 + N: signal N)."""
    fault: str = ""
    """A fault a test asked for (`customJobs:injectFault`): `FAIL:<exit code>`, `OOM` or
    `PREEMPT`, or empty."""
    creator: str = ""
    """The workload whose credential created the job (`base/callers.py`); empty: the owner."""


@dataclass(frozen=True)
class ProcessRecord:
    """A replica process group that may be alive: its leader's pid and the token in its env."""

    job_id: str
    replica: str
    pid: int
    token: str
