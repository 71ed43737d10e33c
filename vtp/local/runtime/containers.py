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

from collections.abc import Mapping
from pathlib import Path

from vtp.containers import client_environment as client_environment
from vtp.containers import image_problem as image_problem
from vtp.containers import remove as remove
from vtp.containers import run_argv as run_argv
from vtp.storage import GCS_ROOT_ENV

MOUNT = "/gcs"
HOST_ONLY = frozenset(
    {"PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONUSERBASE", "TMPDIR", "USER", "LOGNAME"}
)
"""Variables of a host replica's environment that name the host: the image sets its own."""


def storage_volumes(storage_root: Path) -> list[tuple[str, str]]:
    """The storage root, mounted at /gcs as Cloud Storage FUSE is on Vertex (`run_argv`'s
    volumes)."""
    return [(str(storage_root.resolve()), MOUNT)]


def container_environment(replica: Mapping[str, str]) -> dict[str, str]:
    """What the container gets of a host replica's environment (`HOST_ONLY` left out; the
    storage root is /gcs inside)."""
    env = {k: v for k, v in replica.items() if k not in HOST_ONLY and not k.startswith("LC_")}
    env[GCS_ROOT_ENV] = MOUNT
    return env
