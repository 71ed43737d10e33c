"""The machine's capacity for replicas: GPUs handed out through CUDA_VISIBLE_DEVICES and a cap
on replica processes. A job whose resources are not free waits in JOB_STATE_QUEUED (as with
quota on Vertex); a job that could never fit is refused at creation.

A job whose pools ask for more accelerators than the machine has GPUs runs on CPU instead (its
replicas get an empty CUDA_VISIBLE_DEVICES, so the trainer and torchrun-style launches pick CPU
and gloo), with one warning line in its log (`cpu_warning`); a service started with
`--strict-accelerators` refuses it at creation, as before.

The cap is `--max-replicas` when given; otherwise it comes from the machine (`default_cap`:
two replicas per core, at most one per GiB of memory, at least two). Under that default a job
larger than the cap is not refused (its size is capped per job already, `launch.py`): it runs
once nothing else does.
"""

import os
import shutil
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from google.cloud import aiplatform_v1

from vtp.local.runtime.launch import JobPlan


def detect_gpus() -> tuple[str, ...]:
    """Indices of the machine's NVIDIA GPUs (none when nvidia-smi is absent or fails)."""
    if shutil.which("nvidia-smi") is None:
        return ()
    result = subprocess.run(
        ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    if result.returncode != 0:
        return ()
    return tuple(line.strip() for line in result.stdout.splitlines() if line.strip())


def default_cap() -> int:
    """Replica processes at once when `--max-replicas` is not given: two per core this process
    may use, at most one per GiB of memory, and at least two."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**30
    except (ValueError, OSError):
        memory_gib = 2 * cores
    return max(2, min(2 * cores, memory_gib))


@dataclass(frozen=True)
class Needs:
    """What a job asks for: GPUs per replica, by replica name."""

    gpus: Mapping[str, int]

    @classmethod
    def of(cls, plan: JobPlan, on_cpu: bool = False) -> "Needs":
        """The needs of every replica in `plan` (no GPUs when the job runs `on_cpu`)."""
        count = {p.index: 0 if on_cpu else p.accelerator_count for p in plan.pools}
        return cls({name: count[p.index] for p in plan.pools for name in p.replicas})


def cpu_warning(spec: aiplatform_v1.CustomJobSpec, machine_gpus: int) -> str:
    """The line a job that runs on CPU instead of its accelerators gets in its log: each pool
    that asked for some, and what it asked for."""
    asked = []
    for index, pool in enumerate(spec.worker_pool_specs):
        machine = pool.machine_spec
        if not (machine.accelerator_type and machine.accelerator_count):
            continue
        kind = aiplatform_v1.AcceleratorType(machine.accelerator_type).name
        replicas = pool.replica_count or 1
        each = " each" if replicas > 1 else ""
        asked.append(
            f"workerPoolSpecs[{index}] asks for {machine.accelerator_count} x {kind}{each} "
            f"({replicas} replica{'s' if replicas > 1 else ''})"
        )
    has = f"{machine_gpus} GPU(s) for them all" if machine_gpus else "no GPU"
    return (
        f"WARNING: {'; '.join(asked)}, but this machine has {has}: the job runs on CPU "
        "(CUDA_VISIBLE_DEVICES is empty; `vtp local serve --strict-accelerators` refuses such "
        "jobs instead)."
    )


class Capacity:
    """Thread-safe allocation of replica slots and GPUs."""

    def __init__(self, gpus: tuple[str, ...], max_replicas: int = 0) -> None:
        """`max_replicas` 0: the machine's default cap (`default_cap`)."""
        self._gpus = gpus
        self._free = list(gpus)
        self._max_replicas = max_replicas
        self.cap = max_replicas or default_cap()
        """Replica processes at once, above which jobs wait in the queue."""
        self._running = 0
        self._lock = threading.Lock()

    @property
    def gpu_count(self) -> int:
        """The GPUs this machine hands out."""
        return len(self._gpus)

    def lacks_gpus(self, needs: Needs) -> bool:
        """Whether `needs` asks for more GPUs than this machine has (it can never run on them)."""
        return sum(needs.gpus.values()) > len(self._gpus)

    def never_fits(self, needs: Needs) -> str:
        """Why `needs` can never be met on this machine, or empty when it can."""
        gpus = sum(needs.gpus.values())
        if gpus > len(self._gpus):
            return (
                f"the job asks for {gpus} accelerator(s) in all but this machine has "
                f"{len(self._gpus)} GPU(s), and the service was started with "
                "--strict-accelerators (without it, such a job runs on CPU)"
            )
        if self._max_replicas and len(needs.gpus) > self._max_replicas:
            return (
                f"the job has {len(needs.gpus)} replicas but the service runs at most "
                f"{self._max_replicas} at once (--max-replicas)"
            )
        return ""

    def allocate(self, needs: Needs) -> dict[str, tuple[str, ...]] | None:
        """GPU indices per replica, or None when the resources are not free now."""
        with self._lock:
            total = sum(needs.gpus.values())
            slots_ok = self._running + len(needs.gpus) <= self.cap or (
                not self._max_replicas and self._running == 0  # a job above the default, alone
            )
            if total > len(self._free) or not slots_ok:
                return None
            allocation = {}
            for name, count in needs.gpus.items():
                allocation[name] = tuple(self._free[:count])
                del self._free[:count]
            self._running += len(needs.gpus)
            return allocation

    def release(self, allocation: Mapping[str, tuple[str, ...]]) -> None:
        """Give back what `allocate` handed out."""
        with self._lock:
            for devices in allocation.values():
                self._free.extend(devices)
            self._free.sort(key=self._gpus.index)
            self._running -= len(allocation)
