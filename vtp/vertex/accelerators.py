"""Which machine types can carry which accelerators, and in what numbers.

Vertex accepts any `acceleratorType` from `aiplatform_v1.AcceleratorType` in a request, and then
fails the job minutes later when the machine type cannot carry it (an A100 on an n1 VM, an L4 on
an a2). These tables let us say so before anything is submitted. They follow Compute Engine's
accelerator-optimized families: A2 carries A100s, A3 carries H100s/H200s, G2 carries L4s, and the
N1 general-purpose family is the only one that takes the older T4/V100/P4/P100 cards.
"""

import re
from dataclasses import dataclass

from google.cloud.aiplatform_v1 import AcceleratorType


@dataclass(frozen=True)
class Carrier:
    """The machine types that carry one accelerator type, and the counts they allow."""

    family: str
    """Compute Engine machine family, as users name it (`a2`, `n1`, ...)."""
    prefixes: tuple[str, ...]
    """Machine-type prefixes in that family that carry this accelerator."""
    counts: tuple[int, ...] = ()
    """Counts allowed on machine types whose name does not fix the count (empty: any)."""


_N1_GPU_COUNTS = (1, 2, 4, 8)

CARRIERS: dict[str, Carrier] = {
    "NVIDIA_TESLA_K80": Carrier("n1", ("n1-",), _N1_GPU_COUNTS),
    "NVIDIA_TESLA_P4": Carrier("n1", ("n1-",), (1, 2, 4)),
    "NVIDIA_TESLA_P100": Carrier("n1", ("n1-",), (1, 2, 4)),
    "NVIDIA_TESLA_T4": Carrier("n1", ("n1-",), (1, 2, 4)),
    "NVIDIA_TESLA_V100": Carrier("n1", ("n1-",), _N1_GPU_COUNTS),
    "NVIDIA_TESLA_A100": Carrier("a2", ("a2-highgpu-", "a2-megagpu-")),
    "NVIDIA_A100_80GB": Carrier("a2", ("a2-ultragpu-",)),
    "NVIDIA_L4": Carrier("g2", ("g2-standard-",)),
    "NVIDIA_H100_80GB": Carrier("a3", ("a3-highgpu-",)),
    "NVIDIA_H100_MEGA_80GB": Carrier("a3", ("a3-megagpu-",)),
    "NVIDIA_H200_141GB": Carrier("a3", ("a3-ultragpu-",)),
    "NVIDIA_B200": Carrier("a4", ("a4-highgpu-",)),
    "NVIDIA_GB200": Carrier("a4x", ("a4x-highgpu-",)),
    "NVIDIA_RTX_PRO_6000": Carrier("g4", ("g4-standard-",)),
    "TPU_V2": Carrier("cloud-tpu", ("cloud-tpu",)),
    "TPU_V3": Carrier("cloud-tpu", ("cloud-tpu",)),
    "TPU_V4_POD": Carrier("ct4p", ("ct4p-hightpu-",)),
    "TPU_V5_LITEPOD": Carrier("ct5lp", ("ct5lp-hightpu-",)),
}
"""Every accelerator type of `aiplatform_v1.AcceleratorType` (a test keeps the two in step)."""

# G2 machine types fix their L4 count by size rather than by a `-<N>g` suffix.
_G2_L4_COUNTS = {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}

_FIXED_COUNT = re.compile(r"-(\d+)[gt]$")  # a2-highgpu-4g: 4 GPUs; ct5lp-hightpu-8t: 8 chips


def valid_accelerator_types() -> list[str]:
    """All accelerator type names Vertex accepts, sorted (the UNSPECIFIED sentinel left out)."""
    # proto.Enum is an IntEnum at run time, but untyped for mypy (no stubs): hence the ignore.
    return sorted(t.name for t in AcceleratorType if t.value != 0)  # type: ignore[attr-defined]


def carrier_for_machine(machine_type: str) -> str | None:
    """The accelerator type an accelerator-optimized machine type is built around, else None."""
    for accelerator, carrier in CARRIERS.items():
        if carrier.family != "n1" and machine_type.startswith(carrier.prefixes):
            return accelerator
    return None


def fixed_count(machine_type: str) -> int | None:
    """The accelerator count a machine type's name fixes (a2-highgpu-4g: 4), else None."""
    if machine_type.startswith("g2-standard-"):
        size = machine_type.removeprefix("g2-standard-")
        return _G2_L4_COUNTS.get(int(size)) if size.isdigit() else None
    match = _FIXED_COUNT.search(machine_type)
    return int(match.group(1)) if match else None


def accelerator_problem(machine_type: str, accelerator: str | None, count: int) -> str | None:
    """Why `machine_type` cannot carry `count` x `accelerator` (None when it can).

    `accelerator` must already be a valid type name; None means no accelerator was asked for.
    The message ends with the fix.
    """
    if accelerator is None:
        return _missing_accelerator(machine_type)
    carrier = CARRIERS[accelerator]
    if not machine_type.startswith(carrier.prefixes):
        shapes = ", ".join(f"{p}*" if p.endswith("-") else p for p in carrier.prefixes)
        return (
            f"{accelerator} runs on {carrier.family} machine types ({shapes}), not "
            f"{machine_type!r}; {_alternatives(machine_type)}"
        )
    return _count_problem(machine_type, accelerator, carrier, count)


def _alternatives(machine_type: str) -> str:
    fitting = [a for a, c in CARRIERS.items() if machine_type.startswith(c.prefixes)]
    if not fitting:
        return "change the machine type, or drop the accelerator"
    return f"change the machine type, or use an accelerator it carries: {', '.join(fitting)}"


def _missing_accelerator(machine_type: str) -> str | None:
    built_for = carrier_for_machine(machine_type)
    if built_for is None:
        return None
    count = fixed_count(machine_type)
    count_hint = f" and accelerator count {count}" if count else ""
    return (
        f"machine type {machine_type!r} comes with {built_for} accelerators; "
        f"set accelerator type {built_for}{count_hint}"
    )


def _count_problem(machine_type: str, accelerator: str, carrier: Carrier, count: int) -> str | None:
    expected = fixed_count(machine_type) if carrier.family != "n1" else None
    if expected is not None and count != expected:
        return (
            f"machine type {machine_type!r} carries exactly {expected} {accelerator}, "
            f"not {count}; set the accelerator count to {expected}"
        )
    if carrier.counts and count not in carrier.counts:
        allowed = ", ".join(str(c) for c in carrier.counts)
        return f"{accelerator} comes in counts of {allowed} per VM, not {count}; use one of those"
    return None
