"""From a CustomJobSpec to the host processes that run it, validated before anything starts.

How each pool runs on one machine (docs/architecture.md, "One code path, two backends"):

- `pythonPackageSpec`: the package URIs are installed with what they require (`packages.py`)
  and `python -m <pythonModule> <args>` runs with them ahead of the service's packages.
  `executorImageUri` is not pulled: the service's own Python stands in for it.
- `containerSpec` with this project's image (a name with a path component `vtp` or
  `vertex-torch-pipelines`, or a prefix from `VTP_PROJECT_IMAGE` / `--project-image`): its
  `command` (default `python -m vtp.trainer`) and `args` run as a host process.
- `containerSpec` with any other image and an explicit `command`: the command runs on the host.
- Any other image without a command cannot run here: the create request is refused with a
  message that says so.
- With a container engine (`ServiceConfig.container_engine`), any image but this project's runs
  in that image instead (`containers.py`): `command` as its entrypoint, `args` as its arguments.

Vertex's own pool rules (roles by position, replicas, what each pool must name) are
`vtp.vertex.pool_rules`, the ones the CLI and components check before they submit; this module
adds what this machine cannot run.

In every command, a leading `python`/`python3` is the service's interpreter (`sys.executable`).
"""

import sys
from collections.abc import Sequence
from dataclasses import dataclass

from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp.local.base import errors
from vtp.local.base.config import CONTAINER_ENGINE_ENV, PROJECT_IMAGE_NAMES
from vtp.local.runtime.cluster import replica_name
from vtp.vertex import pool_rules
from vtp.vertex.protodict import SpecError
from vtp.vertex.validation import problem_of

POOLS_FIELD = "customJob.jobSpec.workerPoolSpecs"
TRAINER_COMMAND = ("python", "-m", "vtp.trainer")
"""What the project's image runs when a pool gives no command (`vtp/images.py` names the image)."""


@dataclass(frozen=True)
class PoolPlan:
    """How one non-empty worker pool runs."""

    index: int
    replica_count: int
    accelerator_count: int
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    package_uris: tuple[str, ...] = ()
    image: str = ""
    """The image its replicas run in through the container engine; empty: host processes."""
    command: tuple[str, ...] = ()
    """In an image: `containerSpec.command`, which replaces the image's entrypoint when given
    (`argv` is then `command` + `args`, else `args` alone)."""

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


def plan_job(
    spec: aiplatform_v1.CustomJobSpec,
    project_images: tuple[str, ...] = (),
    in_containers: bool = False,
) -> JobPlan:
    """The plan for `spec`; raise ApiError naming the field when it is invalid or cannot run.
    `in_containers`: images other than this project's run in their images."""
    pools = list(spec.worker_pool_specs)
    check_vertex_rules(pools)
    plans = [
        _plan_pool(i, p, project_images, in_containers)
        for i, p in enumerate(pools)
        if not _empty(p)
    ]
    total = sum(plan.replica_count for plan in plans)
    if total > MAX_REPLICAS_PER_JOB:
        raise errors.invalid_argument(
            f"{POOLS_FIELD} ask for {total} replicas; this machine runs at most "
            f"{MAX_REPLICAS_PER_JOB} per job."
        )
    return JobPlan(tuple(plans))


def check_vertex_rules(pools: Sequence[aiplatform_v1.WorkerPoolSpec]) -> None:
    """INVALID_ARGUMENT, naming the field, where `pools` break Vertex's rules (`pool_rules`)."""
    rest = [json_format.MessageToDict(aiplatform_v1.WorkerPoolSpec.pb(p)) for p in pools]
    try:
        pool_rules.check_pools(rest, POOLS_FIELD)
    except SpecError as exc:
        raise errors.invalid_argument(f"{exc.path} {problem_of(exc)}.") from None


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
    index: int,
    pool: aiplatform_v1.WorkerPoolSpec,
    project_images: tuple[str, ...],
    in_containers: bool,
) -> PoolPlan:
    where = f"{POOLS_FIELD}[{index}]"
    # replicaCount is optional: proto3 cannot tell it unset from 0, and unset means one replica
    # (what gcloud sends without replica-count, and what our spec library assumes).
    replicas = pool.replica_count or 1
    if replicas > MAX_REPLICAS_PER_POOL:
        raise errors.invalid_argument(
            f"{where}.replicaCount is {replicas}; this machine runs at most "
            f"{MAX_REPLICAS_PER_POOL} replicas per pool (each is a process)."
        )
    count = pool.machine_spec.accelerator_count if pool.machine_spec.accelerator_type else 0
    spec: aiplatform_v1.ContainerSpec | aiplatform_v1.PythonPackageSpec
    if "container_spec" in pool:
        spec = pool.container_spec
        env = tuple((e.name, e.value) for e in spec.env)
        if in_containers and not is_project_image(spec.image_uri, project_images):
            command, args = tuple(spec.command), tuple(spec.args)
            return PoolPlan(
                index, replicas, count, command + args, env, (), spec.image_uri, command
            )
        argv = container_command(
            f"{where}.containerSpec", spec.image_uri, spec.command, spec.args, TRAINER_COMMAND,
            project_images,
        )  # fmt: skip
        uris: tuple[str, ...] = ()
    else:
        spec = pool.python_package_spec
        argv = (sys.executable, "-m", spec.python_module, *spec.args)
        uris = tuple(spec.package_uris)
    env = tuple((e.name, e.value) for e in spec.env)
    return PoolPlan(index, replicas, count, argv, env, uris)


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
            "without a container engine the local service runs containers as host processes, "
            f"so it needs containerSpec.command. Set {CONTAINER_ENGINE_ENV}=podman (or docker) "
            "where the service starts to run the image itself, or add the image with "
            "--project-image / VTP_PROJECT_IMAGE if it is built from this project."
        )
    return host_command(chosen + list(args))
