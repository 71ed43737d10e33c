"""Install a pythonPackageSpec's packages into an isolated directory, cached by content hash.

On Vertex the executor image pip-installs the package URIs before running the module. Here the
archives are read through the local Cloud Storage root and installed with `pip install --target`
into `<state>/packages/<sha256>`, once per distinct set of archives. Dependencies are not
installed (`--no-deps`, nothing downloaded): the service's environment stands in for the
executor image, so it must already hold them (it does for this project's trainer).

pip runs as any process of the service does (`process.start`: under the shim, in a group of
its own) with the environment the caller gives (a replica's container environment, never the
service's own), and `interrupted` is asked while it runs: a cancelled job kills it at once.
"""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from vtp.local.runtime.process import signal_group, start
from vtp.storage import is_gcs_uri, path_under

_POLL = 0.05
"""Seconds between looks at `interrupted` while pip runs or another job installs the same set."""

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class InstallError(Exception):
    """The package URIs could not be installed; the message says why (pip's output included)."""


class InstallInterrupted(Exception):
    """`interrupted` said so while installing: pip was killed, nothing was cached."""


def archive_path(uri: str, gcs_root: Path) -> Path:
    """The local file behind a package URI: gs:// only, as on Vertex, always under `gcs_root`;
    ValueError for anything else."""
    if not is_gcs_uri(uri):
        raise ValueError(f"{uri!r} is not a Cloud Storage URI: packageUris take gs:// URIs")
    return path_under(gcs_root, uri)


def missing_archives(uris: Sequence[str], gcs_root: Path) -> list[str]:
    """The URIs whose archives do not exist locally."""
    return [uri for uri in uris if not archive_path(uri, gcs_root).is_file()]


def content_hash(paths: Sequence[Path]) -> str:
    """SHA-256 over the archives' names and bytes, in order: the cache key."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def install(
    uris: Sequence[str],
    gcs_root: Path,
    cache_dir: Path,
    env: Mapping[str, str] | None = None,
    interrupted: Callable[[], bool] = lambda: False,
) -> Path:
    """The directory holding the installed packages (installed now unless cached); pip runs
    with `env` (PATH and HOME of this one when None). InstallInterrupted once `interrupted()`."""
    missing = missing_archives(uris, gcs_root)
    if missing:
        raise InstallError(f"package archive not found: {', '.join(missing)}")
    archives = [archive_path(uri, gcs_root) for uri in uris]
    key = content_hash(archives)
    target = cache_dir / key
    lock = _lock_for(key)
    while not lock.acquire(timeout=_POLL):
        if interrupted():
            raise InstallInterrupted()
    try:
        if not target.is_dir():
            _pip_install(archives, target, env, interrupted)
    finally:
        lock.release()
    return target


def _pip_install(
    archives: list[Path],
    target: Path,
    env: Mapping[str, str] | None,
    interrupted: Callable[[], bool],
) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".install-", dir=target.parent))
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    command += ["--no-deps", "--no-build-isolation", "--no-index", "--target", str(staging)]
    if env is None:
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(Path.home())}
    with tempfile.TemporaryFile() as output:
        process = start(command + [str(a) for a in archives], env, staging.parent, output)
        while True:
            try:
                code = process.wait(timeout=_POLL)
                break
            except subprocess.TimeoutExpired:
                if interrupted():
                    signal_group(process.pid, signal.SIGKILL)  # pip and all it started
                    process.wait()
                    shutil.rmtree(staging, ignore_errors=True)
                    raise InstallInterrupted() from None
        output.seek(0)
        text = output.read().decode(errors="replace")
    if code != 0:
        shutil.rmtree(staging, ignore_errors=True)
        raise InstallError(f"pip install failed with status {code}:\n{text.strip()[-2000:]}")
    staging.rename(target)  # atomic: a crash never leaves a half-installed cache entry


def _lock_for(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())
