"""The local Vertex service's settings: one frozen dataclass, built from flags or defaults."""

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vtp import private_files

POLL_INTERVAL_ENV = "VTP_LOCAL_POLL_INTERVAL"
"""Seconds between the supervisor's checks of replica processes (tests set it small)."""

GRACE_PERIOD_ENV = "VTP_LOCAL_GRACE_PERIOD"
"""Seconds between SIGTERM and SIGKILL when a replica is stopped, cancelled or preempted."""

PROJECT_IMAGE_ENV = "VTP_PROJECT_IMAGE"
"""Comma-separated image prefixes that count as this project's image (run as host processes)."""

CONTAINER_ENGINE_ENV = "VTP_CONTAINER_ENGINE"
"""The container engine's command line (`podman`, `docker`, with flags): set, replicas of images
other than this project's run in their images (`runtime/containers.py`)."""

PROJECT_IMAGE_NAMES = ("vtp", "vertex-torch-pipelines")
"""An image whose name has one of these as a path component is this project's image."""


def not_resumed_message(kind: str) -> str:
    """Why a service that does not resume (`resume_unfinished=False`) cancelled a `kind` an
    earlier service left unfinished: the error message the resource ends with."""
    return (
        f"The local service stopped before this {kind} ended, and the service that started "
        "next (`vtp run`'s) starts nothing an earlier one left unfinished; create it again "
        "(`vtp local serve` is the service that resumes unfinished work)."
    )


@dataclass(frozen=True)
class ServiceConfig:
    """Everything the local service needs to know; `from_env` fills what flags leave out."""

    state_dir: Path
    """Holds the SQLite database, replica logs, working directories and installed packages."""

    port: int = 8765
    """TCP port on 127.0.0.1 (0 picks a free one)."""

    tls_port: int | None = None
    """TCP port of the TLS Vertex endpoint, gRPC and REST (default: `port` + 1; 0 when `port`
    is 0)."""

    gcs_root: Path | None = None
    """Stands in for Cloud Storage: `gs://b/p` is `<gcs_root>/b/p`; default `<state_dir>/gcs`."""

    poll_interval: float = 0.5
    """Seconds between checks of replica processes and of the queue."""

    grace_period: float = 10.0
    """Seconds a replica gets between SIGTERM and SIGKILL (cancel, preemption, shutdown)."""

    max_replicas: int = 0
    """Replica processes that may run at once over all jobs (0: the machine's default cap,
    `capacity.default_cap`); the rest queue."""

    gpus: tuple[str, ...] = ()
    """GPU indices replicas may be given through CUDA_VISIBLE_DEVICES."""

    strict_accelerators: bool = False
    """Refuse a job that asks for more GPUs than `gpus` holds (`--strict-accelerators`). By
    default such a job runs on CPU, with one warning line in its log naming the pools and what
    they asked for."""

    strict_buckets: bool = False
    """Keep Cloud Storage's 404 for a write to a bucket that was never made
    (`--strict-buckets`). By default a bucket a request names for writing is made on first use,
    with one line in the service's log (`vtp.local.base.buckets`)."""

    project_images: tuple[str, ...] = field(default_factory=tuple)
    """Extra image prefixes that count as this project's image, besides PROJECT_IMAGE_NAMES."""

    project_dir: Path | None = None
    """The user's project (default: the directory the service starts in): on every replica's
    import path, as the user's code is in the image on Vertex, so `--task=my_task` imports."""

    import_dir: Path | None = field(init=False, default=None)
    """`project_dir` where replicas, tasks and model servers may import from it (it and the
    folders above it are the user's, and no one else may write it:
    `vtp.private_files.check_trusted_dir`); None otherwise, `untrusted_reason` saying why."""

    untrusted_reason: str = field(init=False, default="")
    """Why `project_dir` is left off the import paths, in one line ("" when it is on them)."""

    pass_env: tuple[str, ...] = ()
    """Variables of the service's environment that replicas also get (`--pass-env NAME`); by
    default they get only what a container on Vertex would have."""

    container_engine: tuple[str, ...] = ()
    """The command line of a Docker-compatible engine (`("podman",)`, `("docker",)`, with its
    flags): replicas of images other than this project's run in those images through it. Empty
    (the default): every replica is a host process (docs/containers.md)."""

    warm_replicas: bool = True
    """Fork host replicas that run PyTorch from one interpreter per service that has imported
    it (`runtime/warm.py`), instead of each importing it again; False: every replica is a
    fresh interpreter."""
    resume_unfinished: bool = True
    """Start again, when the service starts, what a previous service in this state directory
    left unfinished: queued and interrupted custom jobs, queued pipeline jobs, the servers of
    deployed models (`vtp local serve`, which logs one line per resource it restores). False
    (`vtp run`'s own service) starts none of it: those jobs end CANCELLED with a message saying
    why, and deployed models stay recorded but unserved until a service that resumes starts."""

    prepare_runs: bool = False
    """Keep a pipeline run's worker ready, its imports done (`pipeline_jobs/standby.py`): from
    the start, and again after each run ends (`vtp local serve --prepare-runs`). Other services
    start a worker per run, or take the one their caller spawned (`vtp run`'s)."""

    def __post_init__(self) -> None:
        # Replicas run in their own working directories: every path they get must be absolute.
        object.__setattr__(self, "state_dir", Path(self.state_dir).resolve())
        if self.gcs_root is not None:
            object.__setattr__(self, "gcs_root", Path(self.gcs_root).resolve())
        project = Path(self.project_dir or Path.cwd()).resolve()
        object.__setattr__(self, "project_dir", project)
        try:
            private_files.check_trusted_dir(project)
            object.__setattr__(self, "import_dir", project)
        except (private_files.UnsafePath, OSError) as exc:
            reason = f"{project} is left off the import path of replicas, tasks and model"
            object.__setattr__(self, "untrusted_reason", f"{reason} servers: {exc}")
        if self.poll_interval <= 0:
            raise ValueError(f"poll_interval must be > 0 seconds, got {self.poll_interval}")
        if self.grace_period < 0:
            raise ValueError(f"grace_period must be >= 0 seconds, got {self.grace_period}")
        if self.max_replicas < 0:
            raise ValueError(f"max_replicas must be >= 0 (0: default cap), got {self.max_replicas}")
        if not 0 <= self.port < 65536:
            raise ValueError(f"port must be in 0..65535, got {self.port}")
        tls_port = self.tls_port
        if tls_port is None:
            tls_port = self.port + 1 if 0 < self.port < 65535 else 0
            object.__setattr__(self, "tls_port", tls_port)
        if not 0 <= tls_port < 65536:
            raise ValueError(f"tls_port must be in 0..65535, got {tls_port}")

    @property
    def ignore_accelerators(self) -> bool:
        """Whether accelerator pools the machine's GPUs cannot hold run on CPU (the default;
        the old `--ignore-accelerators` flag's meaning): not `strict_accelerators`."""
        return not self.strict_accelerators

    @property
    def storage_root(self) -> Path:
        """The directory that stands in for Cloud Storage."""
        return self.gcs_root or self.state_dir / "gcs"

    @classmethod
    def from_env(cls, state_dir: Path, **overrides: Any) -> "ServiceConfig":
        """Defaults from the environment (poll interval, grace period, container engine); image
        prefixes add up.
        `overrides` are field values by name (None keeps the default)."""
        values: dict[str, Any] = {"state_dir": Path(state_dir)}
        if os.environ.get(POLL_INTERVAL_ENV):
            values["poll_interval"] = float(os.environ[POLL_INTERVAL_ENV])
        if os.environ.get(GRACE_PERIOD_ENV):
            values["grace_period"] = float(os.environ[GRACE_PERIOD_ENV])
        prefixes = os.environ.get(PROJECT_IMAGE_ENV, "")
        from_env = tuple(p.strip() for p in prefixes.split(",") if p.strip())
        values["project_images"] = from_env + tuple(overrides.pop("project_images", None) or ())
        if os.environ.get(CONTAINER_ENGINE_ENV, "").strip():
            values["container_engine"] = tuple(shlex.split(os.environ[CONTAINER_ENGINE_ENV]))
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
