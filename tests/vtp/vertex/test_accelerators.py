"""Accelerator types and the machine families that carry them."""

import pytest
from google.cloud.aiplatform_v1 import AcceleratorType

from vtp.vertex import accelerators


def test_every_vertex_accelerator_type_has_a_carrier() -> None:
    assert set(accelerators.CARRIERS) == set(accelerators.valid_accelerator_types())
    assert len(accelerators.CARRIERS) == len(AcceleratorType) - 1  # all but UNSPECIFIED


CARRIERS = {
    "NVIDIA_TESLA_V100": [("n1-standard-32", 8)],
    "NVIDIA_TESLA_T4": [("n1-highmem-16", 4)],
    "NVIDIA_TESLA_A100": [("a2-highgpu-8g", 8), ("a2-megagpu-16g", 16)],
    "NVIDIA_A100_80GB": [("a2-ultragpu-1g", 1)],
    "NVIDIA_H100_80GB": [("a3-highgpu-8g", 8)],
    "NVIDIA_H100_MEGA_80GB": [("a3-megagpu-8g", 8)],
    "NVIDIA_H200_141GB": [("a3-ultragpu-8g", 8)],
    "NVIDIA_B200": [("a4-highgpu-8g", 8)],
    "NVIDIA_L4": [("g2-standard-24", 2), ("g2-standard-8", 1)],
    "TPU_V3": [("cloud-tpu", 8)],
    "TPU_V5_LITEPOD": [("ct5lp-hightpu-4t", 4)],
    None: [("e2-standard-4", 0), ("n1-standard-4", 0)],
}
"""Per accelerator type (None: none), machines that carry it and a count they take."""


@pytest.mark.parametrize(
    ("machine", "accelerator", "count"),
    [
        (machine, accelerator, count)
        for accelerator, machines in CARRIERS.items()
        for machine, count in machines
    ],
)
def test_machines_that_carry_their_accelerators(machine, accelerator, count) -> None:
    assert accelerators.accelerator_problem(machine, accelerator, count) is None


NOT_CARRIED = [
    ("n1-standard-8", "NVIDIA_TESLA_A100", "a2 machine types"),
    ("a2-highgpu-1g", "NVIDIA_H100_80GB", "a3 machine types (a3-highgpu-*)"),
    ("a2-highgpu-1g", "NVIDIA_A100_80GB", "a2-ultragpu-*"),
    ("n1-standard-8", "NVIDIA_L4", "g2 machine types"),
    ("g2-standard-8", "NVIDIA_TESLA_T4", "use an accelerator it carries: NVIDIA_L4"),
]
"""(machine, accelerator, what fits): one accelerator on a machine that does not carry it."""

WRONG_COUNTS = [
    ("a3-highgpu-8g", "NVIDIA_H100_80GB", 4, "exactly 8"),
    ("g2-standard-48", "NVIDIA_L4", 2, "exactly 4"),
    ("n1-standard-8", "NVIDIA_TESLA_T4", 8, "counts of 1, 2, 4"),
    ("a2-highgpu-2g", None, 0, "set accelerator type NVIDIA_TESLA_A100 and accelerator count 2"),
]
"""(machine, accelerator, count, what fits): a count the machine does not take."""


@pytest.mark.parametrize(
    ("machine", "accelerator", "count", "expected"),
    [(machine, accelerator, 1, expected) for machine, accelerator, expected in NOT_CARRIED]
    + WRONG_COUNTS,
)
def test_mismatches_say_what_fits(machine, accelerator, count, expected) -> None:
    assert expected in accelerators.accelerator_problem(machine, accelerator, count)
