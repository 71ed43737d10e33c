"""What a CustomJob asks of a persistent resource's pools, and whether the pools have it.

A job names a resource (`jobSpec.persistentResourceId`); each of its worker pools runs on the
resource pool with the same machine spec (machine type, accelerator type and count). A pool of
the resource has `replicaCount` replicas, or up to `autoscalingSpec.maxReplicaCount` when it
scales. A job that asks for more than that, or for a machine no pool has, could never run there:
it is refused at creation, naming the field. A job that fits waits while other jobs hold the
replicas it needs.
"""

from collections.abc import Mapping, Sequence

from google.cloud.aiplatform_v1 import CustomJobSpec, MachineSpec, ResourcePool

from vtp.local.base import errors

FIELD = "customJob.jobSpec.persistentResourceId"


def capacity(pool: ResourcePool) -> int:
    """The most replicas the pool may have: its autoscaling maximum, else its replica count."""
    scaling = pool.autoscaling_spec
    if "autoscaling_spec" in pool and scaling.max_replica_count:
        return int(scaling.max_replica_count)
    return int(pool.replica_count)


def describe(machine: MachineSpec) -> str:
    """`n1-standard-4` or `a2-highgpu-1g with 1 NVIDIA_TESLA_A100`."""
    if machine.accelerator_count:
        accelerator = machine.accelerator_type.name
        return f"{machine.machine_type} with {machine.accelerator_count} {accelerator}"
    return machine.machine_type


def _same(a: MachineSpec, b: MachineSpec) -> bool:
    return (a.machine_type, a.accelerator_type, a.accelerator_count) == (
        b.machine_type,
        b.accelerator_type,
        b.accelerator_count,
    )


def asked(spec: CustomJobSpec, name: str, pools: Sequence[ResourcePool]) -> dict[str, int]:
    """Replicas the job asks of each pool of the resource `name` (pool ID -> count);
    INVALID_ARGUMENT naming the field when a worker pool matches no pool of the resource or
    asks for more replicas than its pool can ever have."""
    wanted: dict[str, int] = {}
    for index, worker in enumerate(spec.worker_pool_specs):
        if not worker.replica_count:
            continue  # an empty pool (Vertex's placeholder for "no chief")
        match = next((p for p in pools if _same(p.machine_spec, worker.machine_spec)), None)
        if match is None:
            have = ", ".join(describe(p.machine_spec) for p in pools) or "none"
            raise errors.invalid_argument(
                f"customJob.jobSpec.workerPoolSpecs[{index}].machineSpec: "
                f"{describe(worker.machine_spec)} is not a machine of persistent resource {name} "
                f"(its pools: {have}) ({FIELD})."
            )
        wanted[match.id] = wanted.get(match.id, 0) + int(worker.replica_count)
    for pool in pools:
        if wanted.get(pool.id, 0) > capacity(pool):
            raise errors.invalid_argument(
                f"customJob.jobSpec.workerPoolSpecs: the job asks for {wanted[pool.id]} "
                f"replica(s) of {describe(pool.machine_spec)} but pool {pool.id!r} of persistent "
                f"resource {name} has at most {capacity(pool)} ({FIELD})."
            )
    return wanted


def free(pools: Sequence[ResourcePool], used: Mapping[str, int], wanted: Mapping[str, int]) -> bool:
    """Whether every pool has `wanted` replicas free besides those `used`."""
    by_id = {pool.id: pool for pool in pools}
    return all(used.get(p, 0) + n <= capacity(by_id[p]) for p, n in wanted.items())
