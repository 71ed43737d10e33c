"""Accelerator types and the machine families that carry them."""

import pytest
from google.cloud.aiplatform_v1 import AcceleratorType

from vtp.vertex import accelerators


def test_every_vertex_accelerator_type_has_a_carrier() -> None:
    assert set(accelerators.CARRIERS) == set(accelerators.valid_accelerator_types())
    assert len(accelerators.CARRIERS) == len(AcceleratorType) - 1  # all but UNSPECIFIED


@pytest.mark.parametrize(
    ("machine", "accelerator", "count"),
    [
        ("n1-standard-32", "NVIDIA_TESLA_V100", 8),
        ("n1-highmem-16", "NVIDIA_TESLA_T4", 4),
        ("a2-highgpu-8g", "NVIDIA_TESLA_A100", 8),
        ("a2-megagpu-16g", "NVIDIA_TESLA_A100", 16),
        ("a2-ultragpu-1g", "NVIDIA_A100_80GB", 1),
        ("a3-highgpu-8g", "NVIDIA_H100_80GB", 8),
        ("a3-megagpu-8g", "NVIDIA_H100_MEGA_80GB", 8),
        ("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8),
        ("a4-highgpu-8g", "NVIDIA_B200", 8),
        ("g2-standard-24", "NVIDIA_L4", 2),
        ("g2-standard-8", "NVIDIA_L4", 1),
        ("cloud-tpu", "TPU_V3", 8),
        ("ct5lp-hightpu-4t", "TPU_V5_LITEPOD", 4),
        ("e2-standard-4", None, 0),
        ("n1-standard-4", None, 0),
    ],
)
def test_machines_that_carry_their_accelerators(machine, accelerator, count) -> None:
    assert accelerators.accelerator_problem(machine, accelerator, count) is None


@pytest.mark.parametrize(
    ("machine", "accelerator", "count", "expected"),
    [
        ("n1-standard-8", "NVIDIA_TESLA_A100", 1, "a2 machine types"),
        ("a2-highgpu-1g", "NVIDIA_H100_80GB", 1, "a3 machine types (a3-highgpu-*)"),
        ("a2-highgpu-1g", "NVIDIA_A100_80GB", 1, "a2-ultragpu-*"),
        ("n1-standard-8", "NVIDIA_L4", 1, "g2 machine types"),
        ("g2-standard-8", "NVIDIA_TESLA_T4", 1, "use an accelerator it carries: NVIDIA_L4"),
        ("a3-highgpu-8g", "NVIDIA_H100_80GB", 4, "exactly 8"),
        ("g2-standard-48", "NVIDIA_L4", 2, "exactly 4"),
        ("n1-standard-8", "NVIDIA_TESLA_T4", 8, "counts of 1, 2, 4"),
        (
            "a2-highgpu-2g",
            None,
            0,
            "set accelerator type NVIDIA_TESLA_A100 and accelerator count 2",
        ),
    ],
)
def test_mismatches_say_what_fits(machine, accelerator, count, expected) -> None:
    assert expected in accelerators.accelerator_problem(machine, accelerator, count)
