"""Replicas in their own images, through a Docker-compatible engine (Podman or Docker).

With `ServiceConfig.container_engine` set (`VTP_CONTAINER_ENGINE="podman"`, flags allowed), a
pool whose image is not this project's runs each replica as `ENGINE run` of that image, as
Vertex runs it:

- `containerSpec.command` replaces the image's entrypoint (its first word `--entrypoint`, the
  rest ahead of `args`, so Docker and Podman read it alike); `args` replace its CMD.
- The Vertex environment (CLUSTER_SPEC, MASTER_*, AIP_*, the pool's `env`) is passed by name
  (`--env NAME`: values stay out of argv), without what names host paths (PATH, HOME,
  PYTHONPATH, ...): the image's own apply.
- The storage root is mounted at /gcs, as Cloud Storage FUSE is on Vertex; the host network is
  shared, so the cluster's 127.0.0.1 ports and the service answer as for host replicas.

- GPUs: a replica the service gave GPUs (its CUDA_VISIBLE_DEVICES, as a host replica gets them)
  has those GPUs in its container (`gpu_flags`: Podman's CDI devices `nvidia.com/gpu=N`,
  Docker's `--gpus "device=N,..."`), numbered from 0 inside as the engine shows them. Where the
  engine cannot (`gpu_problem`: no CDI specification, no NVIDIA Container Toolkit, another
  engine), the replica runs without GPUs and one line in its log says why.

The engine's client runs as any replica does (under the shim, in a group of its own): a SIGTERM
reaches the container through the client (both engines pass signals on to its first process).
A SIGKILL kills the client; under Podman the container's processes are below the shim and die
with it, under Docker they are the daemon's and live on: they carry the replica's token and the
service's id, so `kill_leftovers` (at reaping) and the watchdog (if the service dies) kill them
wherever they are, and the container is removed when the replica is reaped (`remove`). An image
must exist locally or be pulled before the job starts (`image_problem`).
"""

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

from vtp.containers import client_environment as client_environment
from vtp.containers import engine_name as engine_name
from vtp.containers import image_problem as image_problem
from vtp.containers import remove as remove
from vtp.containers import run_argv as run_argv
from vtp.storage import GCS_ROOT_ENV

MOUNT = "/gcs"
HOST_ONLY = frozenset(
    {"PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONUSERBASE", "TMPDIR", "USER", "LOGNAME"}
)
"""Variables of a host replica's environment that name the host: the image sets its own."""
GPUS_VARIABLE = "CUDA_VISIBLE_DEVICES"
"""How the service gives a replica its GPUs (host indices, comma-separated; empty: none)."""
CDI_DIRECTORIES = (Path("/etc/cdi"), Path("/var/run/cdi"))
"""Where Podman reads Container Device Interface specifications (its defaults)."""
TOOLKIT = ("nvidia-container-runtime-hook", "nvidia-container-cli", "nvidia-ctk")
"""The NVIDIA Container Toolkit's commands, one of which Docker's `--gpus` needs."""


def storage_volumes(storage_root: Path) -> list[tuple[str, str]]:
    """The storage root, mounted at /gcs as Cloud Storage FUSE is on Vertex (`run_argv`'s
    volumes)."""
    return [(str(storage_root.resolve()), MOUNT)]


def container_environment(replica: Mapping[str, str], gpus: bool = True) -> dict[str, str]:
    """What the container gets of a host replica's environment (`HOST_ONLY` left out; the
    storage root is /gcs inside). Its GPUs are numbered 0, 1, ... inside, as the engine shows
    the ones it was given; with `gpus` False (the engine cannot give them) it sees none."""
    env = {k: v for k, v in replica.items() if k not in HOST_ONLY and not k.startswith("LC_")}
    env[GCS_ROOT_ENV] = MOUNT
    if GPUS_VARIABLE in env:
        count = len(gpu_devices(replica)) if gpus else 0
        env[GPUS_VARIABLE] = ",".join(str(index) for index in range(count))
    return env


def replica_argv(
    engine: Sequence[str],
    name: str,
    image: str,
    command: Sequence[str],
    args: Sequence[str],
    env_names: Sequence[str],
    storage_root: Path,
    devices: Sequence[str] = (),
) -> list[str]:
    """`ENGINE run` of a replica's container (`run_argv`): the storage root at /gcs, the host
    network, and the host GPUs `devices` (`gpu_flags`)."""
    flags = ("--network", "host", *gpu_flags(engine, devices))
    volumes = storage_volumes(storage_root)
    return run_argv(engine, name, image, command, args, env_names, volumes, network=flags)


def gpu_devices(replica: Mapping[str, str]) -> list[str]:
    """The host GPUs the service gave a replica (its CUDA_VISIBLE_DEVICES)."""
    listed = replica.get(GPUS_VARIABLE, "").split(",")
    return [device.strip() for device in listed if device.strip()]


def gpu_flags(engine: Sequence[str], devices: Sequence[str]) -> list[str]:
    """The flags of `ENGINE run` that give a container the host GPUs `devices` (indices);
    [] for none. Podman: a CDI device per GPU; Docker: `--gpus` naming them."""
    if not devices:
        return []
    if engine_name(engine) == "docker":
        return ["--gpus", f'"device={",".join(devices)}"']  # quoted: the list has commas
    return [flag for device in devices for flag in ("--device", f"nvidia.com/gpu={device}")]


def gpu_problem(
    engine: Sequence[str],
    environ: Mapping[str, str],
    cdi_directories: Sequence[Path] = CDI_DIRECTORIES,
) -> str:
    """Why `engine` cannot give containers NVIDIA GPUs on this machine, in one line; "" when
    it can (Podman with a CDI specification of nvidia.com/gpu, Docker with the NVIDIA Container
    Toolkit)."""
    name = engine_name(engine)
    if name == "podman":
        for directory in cdi_directories:
            specs = sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.json"))
            if any("nvidia.com/gpu" in _text(spec) for spec in specs):
                return ""
        where = " or ".join(str(d) for d in cdi_directories)
        return (
            f"podman has no CDI specification of nvidia.com/gpu in {where} (make one with "
            "`nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`)"
        )
    if name == "docker":
        if any(shutil.which(command, path=environ.get("PATH")) for command in TOOLKIT):
            return ""
        return "docker's --gpus needs the NVIDIA Container Toolkit, which this machine lacks"
    return f"{name or 'the engine'} is not one this service gives GPUs through (podman or docker)"


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
