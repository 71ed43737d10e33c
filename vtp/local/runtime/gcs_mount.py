"""`/gcs/<bucket>/...` in every replica, as Cloud Storage FUSE mounts it on Vertex.

Each replica runs in a private mount namespace of its own where the storage root is bind-mounted
at /gcs, so code that reads and writes `/gcs/<bucket>/x` reaches `<storage root>/<bucket>/x`, and
nothing else on the machine sees the mount. util-linux's `unshare` makes the namespace (as
root, a mount namespace; otherwise a user namespace too, mapping the user to root inside it, as
a container's root) and `mount --bind` mounts; the replica's command is then exec'ed, so its pid
is the one the service started.

The mount point /gcs must exist: the service creates it when it runs as root; otherwise an
administrator creates it once (`sudo mkdir /gcs`). Where neither works, jobs that name /gcs are
refused before they start, saying why (`problem`).
"""

import os
import shutil
import subprocess
from collections.abc import Iterable
from functools import cache
from pathlib import Path

FUSE_ROOT = Path("/gcs")
_SCRIPT = 'mkdir -p "$0" && mount --bind "$0" /gcs && exec "$@"'


@cache
def problem() -> str:
    """Why replicas cannot get /gcs on this machine ("" when they can); checked once."""
    if not (shutil.which("unshare") and shutil.which("mount")) or not Path("/proc").is_dir():
        return "this machine has no util-linux unshare/mount (Linux) to give replicas /gcs"
    if not FUSE_ROOT.is_dir():
        if os.geteuid() != 0:
            return (
                "/gcs does not exist and the service is not root; create it once: sudo mkdir /gcs"
            )
        FUSE_ROOT.mkdir(exist_ok=True)
    probe = subprocess.run([*_unshare(), "true"], capture_output=True, timeout=10)
    if probe.returncode:
        return f"cannot make a private mount namespace: {probe.stderr.decode().strip()}"
    return ""


def wrap(argv: list[str], storage_root: Path) -> list[str]:
    """`argv` run with `storage_root` at /gcs in its own mount namespace (as is, if impossible).

    The mount's source is the root's real path, resolved here: were `storage_root` (or a folder
    above it) a link, swapping it between now and the replica's start would otherwise mount
    whatever folder it pointed to then. Links inside the root are the replica's own business:
    it resolves them in its own view, with its own user's rights, as any file it opens; what the
    service does for a request never follows one out of the root (`vtp.storage.path_under`)."""
    if problem():
        return argv
    return [*_unshare(), "sh", "-c", _SCRIPT, os.path.realpath(storage_root), *argv]


def names_fuse_paths(texts: Iterable[str]) -> bool:
    """Whether any of `texts` (a job's command, args, env values) names a /gcs/ path."""
    return any("/gcs/" in text for text in texts)


def _unshare() -> list[str]:
    namespaces = ["--mount"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--mount"]
    return ["unshare", *namespaces, "--propagation", "private", "--"]
