"""GPUs for replicas in containers (docs/containers.md): the engine's command line gives a
container the GPUs the service gave its replica, numbered from 0 inside as the engine shows
them; where the engine cannot, one line says why. Pure functions of the engine's command line
and this machine's files, tested without an engine or a GPU."""

import os
from pathlib import Path

import pytest

from vtp.local.runtime.containers import (
    container_environment,
    gpu_devices,
    gpu_flags,
    gpu_problem,
    replica_argv,
)

PODMAN = ("podman", "--runtime", "runc")
REPLICA = {"CUDA_VISIBLE_DEVICES": "2,3", "RANK": "0", "PATH": "/usr/bin", "HOME": "/root"}


def test_podman_gets_a_cdi_device_per_gpu_and_docker_one_gpus_flag():
    assert gpu_flags(PODMAN, ["2", "3"]) == [
        "--device", "nvidia.com/gpu=2", "--device", "nvidia.com/gpu=3",
    ]  # fmt: skip
    assert gpu_flags(("/usr/bin/docker",), ["2", "3"]) == ["--gpus", '"device=2,3"']
    assert gpu_flags(PODMAN, []) == [] and gpu_flags(("docker",), []) == []


def test_a_replicas_command_line_carries_its_gpus_before_the_image(tmp_path):
    argv = replica_argv(
        PODMAN, "vtp-1-workerpool0-0", "localhost/mine:1", ("python",), ["-m", "vtp.trainer"],
        ["CUDA_VISIBLE_DEVICES"], tmp_path, gpu_devices(REPLICA),
    )  # fmt: skip
    image = argv.index("localhost/mine:1")
    assert argv[image:] == ["localhost/mine:1", "-m", "vtp.trainer"]
    flags = argv[:image]
    assert flags[flags.index("--device") :][:4] == [
        "--device", "nvidia.com/gpu=2", "--device", "nvidia.com/gpu=3",
    ]  # fmt: skip
    assert flags[flags.index("--network") :][:2] == ["--network", "host"]
    assert f"{tmp_path.resolve()}:/gcs:nosuid,nodev" in flags  # setuid files work nowhere there
    without = replica_argv(PODMAN, "c", "localhost/mine:1", (), [], [], tmp_path)
    assert "--device" not in without and "--gpus" not in without


def test_inside_the_gpus_are_numbered_from_zero_or_hidden_when_not_given():
    assert gpu_devices(REPLICA) == ["2", "3"]
    assert container_environment(REPLICA)["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert container_environment(REPLICA, gpus=False)["CUDA_VISIBLE_DEVICES"] == ""
    none = {**REPLICA, "CUDA_VISIBLE_DEVICES": ""}
    assert gpu_devices(none) == [] and container_environment(none)["CUDA_VISIBLE_DEVICES"] == ""
    assert "PATH" not in container_environment(REPLICA)


def test_podman_gives_gpus_where_a_cdi_specification_names_them(tmp_path):
    etc, run = tmp_path / "etc-cdi", tmp_path / "run-cdi"
    etc.mkdir()
    run.mkdir()
    (etc / "other.yaml").write_text("cdiVersion: 0.5.0\nkind: vendor.com/device\n")
    problem = gpu_problem(PODMAN, os.environ, (etc, run))
    assert (
        "no CDI specification of nvidia.com/gpu" in problem and "nvidia-ctk cdi generate" in problem
    )
    assert problem.count("\n") == 0
    (run / "nvidia.yaml").write_text("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices: []\n")
    assert gpu_problem(PODMAN, os.environ, (etc, run)) == ""


def test_docker_gives_gpus_where_the_nvidia_container_toolkit_is(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    problem = gpu_problem(("docker",), {"PATH": str(bin_dir)})
    assert problem == "docker's --gpus needs the NVIDIA Container Toolkit, which this machine lacks"
    hook = bin_dir / "nvidia-container-runtime-hook"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(0o755)
    assert gpu_problem(("docker",), {"PATH": str(bin_dir)}) == ""


@pytest.mark.parametrize("engine", [("nerdctl",), ()])
def test_another_engine_says_in_one_line_that_it_gives_no_gpus(engine, tmp_path: Path):
    problem = gpu_problem(engine, {"PATH": str(tmp_path)})
    assert "not one this service gives GPUs through (podman or docker)" in problem
