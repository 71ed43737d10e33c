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

The engine's client runs as any replica does (under the shim, in a group of its own): a SIGTERM
reaches the container through the client, the container's processes carry the replica's token
(the watchdog and `kill_leftovers` find them), and the container is removed when the replica is
reaped. An image must exist locally or be pulled before the job starts (`image_problem`).
"""

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from vtp.storage import GCS_ROOT_ENV

MOUNT = "/gcs"
HOST_ONLY = frozenset(
    {"PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONUSERBASE", "TMPDIR", "USER", "LOGNAME"}
)
"""Variables of a host replica's environment that name the host: the image sets its own."""

ENGINE_PREFIXES = ("CONTAINERS_", "CONTAINER_", "DOCKER_", "XDG_", "REGISTRY_AUTH_FILE")
"""The service's variables the engine's client reads (its configuration, socket, storage)."""

PULL_TIMEOUT_SECONDS = 600.0


def image_problem(engine: Sequence[str], image: str, environ: Mapping[str, str]) -> str:
    """Why `image` cannot run ("" when it is present, or pulled now); one line naming it."""
    if _engine(engine, ["image", "inspect", "--format", "{{.Id}}", image], environ, 60).returncode:
        pulled = _engine(engine, ["pull", "--quiet", image], environ, PULL_TIMEOUT_SECONDS)
        if pulled.returncode:
            said = (pulled.stderr.strip().splitlines() or ["no output"])[-1]
            return f"image {image!r} is not on this machine and could not be pulled ({said})"
    return ""


def run_command(
    engine: Sequence[str],
    name: str,
    image: str,
    command: Sequence[str],
    args: Sequence[str],
    env_names: Sequence[str],
    storage_root: Path,
) -> list[str]:
    """The engine command line that runs one replica as container `name`."""
    argv = [*engine, "run", "--rm", "--name", name, "--network", "host"]
    argv += ["--volume", f"{storage_root.resolve()}:{MOUNT}"]
    for variable in env_names:
        argv += ["--env", variable]
    if command:
        argv += ["--entrypoint", command[0]]
    return [*argv, image, *command[1:], *args]


def container_environment(replica: Mapping[str, str]) -> dict[str, str]:
    """What the container gets of a host replica's environment (`HOST_ONLY` left out; the
    storage root is /gcs inside)."""
    env = {k: v for k, v in replica.items() if k not in HOST_ONLY and not k.startswith("LC_")}
    env[GCS_ROOT_ENV] = MOUNT
    return env


def client_environment(container: Mapping[str, str], service: Mapping[str, str]) -> dict[str, str]:
    """The engine client's environment: the container's variables (which `--env NAME` takes from
    it), then the service's PATH, HOME and engine settings, which the client needs itself."""
    own = {
        k: v for k, v in service.items() if k in ("PATH", "HOME") or k.startswith(ENGINE_PREFIXES)
    }
    return {**container, **own}


def remove(engine: Sequence[str], name: str, environ: Mapping[str, str]) -> None:
    """Remove container `name` if it is still there (its client was killed before `--rm`)."""
    _engine(engine, ["rm", "--force", name], environ, 60)


def _engine(
    engine: Sequence[str], args: list[str], environ: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*engine, *args], env=dict(environ), capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess([*engine, *args], 1, "", str(exc))
