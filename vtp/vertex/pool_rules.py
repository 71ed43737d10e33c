"""Vertex's rules for a CustomJobSpec's worker pools, in one place for the client and the service.

`vtp.vertex.validation` (the CLI, the components, tuning's `trialJobSpec`) and the local service
(`vtp.local.runtime.launch`, which answers INVALID_ARGUMENT) both apply these, so they cannot
disagree on what a pool must give. Pools are roles by position: 0 the single primary replica,
1 workers, 2 parameter servers or Reduction Server, 3 evaluators; a later pool may be `{}` to
skip its role.

Pure functions on REST-form (camelCase) dicts: each raises `SpecError` at the first problem,
its path the field and its message what is wrong there and the fix, worded to read both as the
CLI's `path: problem` and as the service's `path problem.` ("... replicaCount must be 1, not 3").
"""

from collections.abc import Mapping, Sequence
from typing import Any

from vtp.vertex.protodict import SpecError, join

MAX_WORKER_POOLS = 4
"""Pools are roles by position: primary, workers, parameter/reduction servers, evaluators."""


def check_pools(pools: Sequence[Mapping[str, Any]] | None, path: str) -> None:
    """Raise SpecError unless `pools` fill Vertex's roles and every non-empty pool can run."""
    if not pools:
        raise SpecError(path, "must not be empty; give at least the primary pool (pool 0)")
    if len(pools) > MAX_WORKER_POOLS:
        raise SpecError(
            path,
            f"has {len(pools)} pools, at most {MAX_WORKER_POOLS}: Vertex has {MAX_WORKER_POOLS} "
            "roles (0 primary, 1 workers, 2 parameter/Reduction Server, 3 evaluators); merge "
            "pools of the same role",
        )
    if not pools[0]:
        raise SpecError(
            join(path, 0),
            "(the primary replica) cannot be empty; only later pools may be {} to skip a role",
        )
    for index, pool in enumerate(pools):
        if pool:
            check_pool(pool, index, join(path, index))


def check_pool(pool: Mapping[str, Any], index: int, path: str) -> None:
    """Raise SpecError unless the non-empty pool at position `index` names what it runs on."""
    _check_replicas(pool.get("replicaCount"), index, join(path, "replicaCount"))
    if not (pool.get("machineSpec") or {}).get("machineType"):
        raise SpecError(
            join(path, "machineSpec.machineType"), "missing; name one, e.g. n1-standard-8"
        )
    _check_task(pool, path)


def _check_replicas(count: Any, index: int, path: str) -> None:
    replicas = 1 if count is None else int(count)  # absent means one replica, as in gcloud
    if replicas < 1:
        raise SpecError(
            path, f"must be at least 1, not {replicas} (an empty pool, {{}}, skips a role)"
        )
    if index == 0 and replicas != 1:
        raise SpecError(
            path,
            f"must be 1, not {replicas}: pool 0 is the single primary replica; put the other "
            f"{replicas - 1} in pool 1",
        )


def _check_task(pool: Mapping[str, Any], path: str) -> None:
    # Both at once is a oneof clash: the field check (or the proto itself) has refused it.
    container, package = pool.get("containerSpec"), pool.get("pythonPackageSpec")
    if not container and not package:
        raise SpecError(
            path,
            "sets neither containerSpec nor pythonPackageSpec; a pool runs exactly one of "
            "containerSpec (a container image) and pythonPackageSpec (a Python package on an "
            "executor image)",
        )
    if container and not container.get("imageUri"):
        raise SpecError(join(path, "containerSpec.imageUri"), "missing; name the image to run")
    if package:
        for key, fix in (
            ("executorImageUri", "name a prebuilt training image"),
            ("pythonModule", "name the module to run, e.g. trainer.task"),
        ):
            if not package.get(key):
                raise SpecError(join(path, f"pythonPackageSpec.{key}"), f"missing; {fix}")
        if not package.get("packageUris"):
            raise SpecError(
                join(path, "pythonPackageSpec.packageUris"),
                "no package to install; give the gs:// URI of your sdist or wheel "
                "(gcloud: --python-package-uris)",
            )
