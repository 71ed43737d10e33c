"""From a CustomJobSpec to the host processes that run it, validated before anything starts.

How each pool runs on one machine (docs/architecture.md, "One code path, two backends"):

- `pythonPackageSpec`: the package URIs are installed into an isolated directory (`packages.py`)
  and `python -m <pythonModule> <args>` runs with it on PYTHONPATH. `executorImageUri` is not
  pulled: the service's own Python stands in for it.
- `containerSpec` with this project's image (a name with a path component `vtp` or
  `vertex-torch-pipelines`, or a prefix from `VTP_PROJECT_IMAGE` / `--project-image`): its
  `command` (default `python -m trainer`) and `args` run as a host process.
- `containerSpec` with any other image and an explicit `command`: the command runs on the host.
- Any other image without a command cannot run here: the create request is refused with a
  message that says so (no Docker engine is used).

In every command, a leading `python`/`python3` is the service's interpreter (`sys.executable`).
"""

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from google.cloud import aiplatform_v1

from vtp.local.base import errors
from vtp.local.base.config import PROJECT_IMAGE_NAMES
from vtp.local.runtime.cluster import replica_name

MAX_POOLS = 4
TRAINER_COMMAND = ("python", "-m", "trainer")
"""What the project's image runs when a pool gives no command (`components/images.py` agrees)."""


@dataclass(frozen=True)
class PoolPlan:
    """How one non-empty worker pool runs."""

    index: int
    replica_count: int
    accelerator_count: int
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    package_uris: tuple[str, ...] = ()

    @property
    def replicas(self) -> list[str]:
        """Names of this pool's replicas."""
        return [replica_name(self.index, i) for i in range(self.replica_count)]


@dataclass(frozen=True)
class JobPlan:
    """Every pool of a job, in pool order; skipped pools are absent."""

    pools: tuple[PoolPlan, ...]

    def pool_sizes(self) -> tuple[int, ...]:
        """Replica count per pool index (0 for a skipped pool)."""
        sizes = [0] * (max(p.index for p in self.pools) + 1)
        for pool in self.pools:
            sizes[pool.index] = pool.replica_count
        return tuple(sizes)


MAX_REPLICAS_PER_POOL = 32
MAX_REPLICAS_PER_JOB = 64
"""Caps checked before anything is built: every replica is a process on this machine."""


def plan_job(spec: aiplatform_v1.CustomJobSpec, project_images: tuple[str, ...] = ()) -> JobPlan:
    """The plan for `spec`; raise ApiError naming the field when it is invalid or cannot run."""
    pools = list(spec.worker_pool_specs)
    if not pools:
        raise errors.invalid_argument("customJob.jobSpec.workerPoolSpecs must not be empty.")
    if len(pools) > MAX_POOLS:
        raise errors.invalid_argument(
            f"customJob.jobSpec.workerPoolSpecs has {len(pools)} pools; at most {MAX_POOLS} "
            "(primary, workers, parameter servers, evaluators)."
        )
    plans = [_plan_pool(i, p, project_images) for i, p in enumerate(pools) if not _empty(p)]
    if not plans or plans[0].index != 0:
        raise errors.invalid_argument(
            "customJob.jobSpec.workerPoolSpecs[0] (the primary replica) must not be empty."
        )
    if plans[0].replica_count != 1:
        raise errors.invalid_argument(
            "customJob.jobSpec.workerPoolSpecs[0].replicaCount must be 1 (the primary replica), "
            f"got {plans[0].replica_count}."
        )
    total = sum(plan.replica_count for plan in plans)
    if total > MAX_REPLICAS_PER_JOB:
        raise errors.invalid_argument(
            f"customJob.jobSpec.workerPoolSpecs ask for {total} replicas; this machine runs at "
            f"most {MAX_REPLICAS_PER_JOB} per job."
        )
    return JobPlan(tuple(plans))


def is_project_image(image_uri: str, extra_prefixes: tuple[str, ...] = ()) -> bool:
    """True when `image_uri` is this project's image (see the module docstring)."""
    if any(image_uri.startswith(prefix) for prefix in extra_prefixes):
        return True
    name = image_uri.split("@", 1)[0]
    if name.rfind(":") > name.rfind("/"):
        name = name[: name.rfind(":")]  # drop the tag, keep a registry's host:port
    return any(part in PROJECT_IMAGE_NAMES for part in name.split("/"))


def host_command(argv: list[str]) -> tuple[str, ...]:
    """`argv` with a leading `python`/`python3` replaced by the service's interpreter."""
    if argv and argv[0] in ("python", "python3"):
        return (sys.executable, *argv[1:])
    return tuple(argv)


def _empty(pool: aiplatform_v1.WorkerPoolSpec) -> bool:
    return aiplatform_v1.WorkerPoolSpec.pb(pool).ByteSize() == 0


def _plan_pool(
    index: int, pool: aiplatform_v1.WorkerPoolSpec, project_images: tuple[str, ...]
) -> PoolPlan:
    where = f"customJob.jobSpec.workerPoolSpecs[{index}]"
    if pool.replica_count < 0:
        raise errors.invalid_argument(f"{where}.replicaCount must be at least 1.")
    # replicaCount is optional: proto3 cannot tell it unset from 0, and unset means one replica
    # (what gcloud sends without replica-count, and what our spec library assumes).
    replicas = pool.replica_count or 1
    if replicas > MAX_REPLICAS_PER_POOL:
        raise errors.invalid_argument(
            f"{where}.replicaCount is {replicas}; this machine runs at most "
            f"{MAX_REPLICAS_PER_POOL} replicas per pool (each is a process)."
        )
    if not pool.machine_spec.machine_type:
        raise errors.invalid_argument(f"{where}.machineSpec.machineType is required.")
    has_container = "container_spec" in pool
    if has_container == ("python_package_spec" in pool):
        raise errors.invalid_argument(
            f"{where} must set exactly one of containerSpec and pythonPackageSpec."
        )
    if has_container:
        spec = pool.container_spec
        argv, uris = _container(where, spec, project_images), ()
    else:
        spec = pool.python_package_spec
        argv, uris = _python_package(where, spec)
    env = tuple((e.name, e.value) for e in spec.env)
    count = pool.machine_spec.accelerator_count if pool.machine_spec.accelerator_type else 0
    return PoolPlan(index, replicas, count, argv, env, uris)


def _container(
    where: str, spec: aiplatform_v1.ContainerSpec, project_images: tuple[str, ...]
) -> tuple[str, ...]:
    if not spec.image_uri:
        raise errors.invalid_argument(f"{where}.containerSpec.imageUri is required.")
    return container_command(
        f"{where}.containerSpec", spec.image_uri, spec.command, spec.args, TRAINER_COMMAND,
        project_images,
    )  # fmt: skip


def container_command(
    where: str,
    image_uri: str,
    command: Sequence[str],
    args: Sequence[str],
    project_command: Sequence[str],
    project_images: tuple[str, ...],
) -> tuple[str, ...]:
    """The host command of a container: its own `command` + `args`, or `project_command` for
    this project's image; FAILED_PRECONDITION (naming `where`) for another image without one."""
    chosen = list(command)
    if not chosen and is_project_image(image_uri, project_images):
        chosen = list(project_command)
    if not chosen:
        raise errors.failed_precondition(
            f"{where}: image {image_uri!r} is not this project's image and no command is given; "
            "the local service runs containers as host processes, so it needs "
            "containerSpec.command (or add the image with --project-image / VTP_PROJECT_IMAGE "
            "if it is built from this project)."
        )
    return host_command(chosen + list(args))


def _python_package(
    where: str, spec: aiplatform_v1.PythonPackageSpec
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    for key, value in (
        ("executorImageUri", spec.executor_image_uri),
        ("packageUris", spec.package_uris),
        ("pythonModule", spec.python_module),
    ):
        if not value:
            raise errors.invalid_argument(f"{where}.pythonPackageSpec.{key} is required.")
    argv = (sys.executable, "-m", spec.python_module, *spec.args)
    return argv, tuple(spec.package_uris)
