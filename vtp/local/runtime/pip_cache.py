"""pip into cached folders, as a job's installs run it: each folder built once and marked ready.

A folder is built by one caller at a time, of this process and of any other (a thread lock and a
file lock beside it: several services of one user share `user_cache`), and marked `READY` when
its build succeeded; a build that fails or is interrupted leaves nothing, and a folder without
its mark (a service stopped mid-install) is built again. `content_hash` names such folders by
what goes in.

pip runs as any process of the service does (`process.start`: under the shim, in a group of its
own) with the environment the caller gives (a replica's, never the service's own), its output
appended to the log the caller names (the pool's first replica's), its temporary files in a
folder of its own beside the one it builds, and `interrupted` asked while it runs: a cancelled
job kills it at once. A failure raises InstallError with pip's last lines.
"""

import contextlib
import errno
import fcntl
import hashlib
import importlib.metadata
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from packaging.requirements import Requirement

from vtp import private_files
from vtp.engine import tree_walk
from vtp.local.base import stored_files
from vtp.local.runtime import isolation
from vtp.local.runtime.process import signal_group, start

_POLL = 0.05
"""Seconds between looks at `interrupted` while pip runs or another job installs the same set."""


READY = ".vtp-ready"
"""The mark a cached folder gets once pip has succeeded in it."""


MAX_ARCHIVE_BYTES = 4 << 30
"""The largest package archive (packageUris) hashed and installed."""


TAIL_LINES = 15
"""How many of pip's last lines a failure's message carries."""


PIP_INSTALL = [
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "--no-input",
    "--progress-bar=off",
]


NOTE = "[vtp local] "
"""How a line of the service's own starts in a replica's log (`ReplicaSet.note`)."""


_locks: dict[Path, threading.Lock] = {}


_locks_guard = threading.Lock()


Interrupted = Callable[[], bool]


class InstallError(Exception):
    """The package URIs could not be installed; the message says why (pip's output included)."""


class InstallInterrupted(Exception):
    """`interrupted` said so while installing: pip was killed, nothing was cached."""


def content_hash(paths: Sequence[Path], *extra: str, root: Path | None = None) -> str:
    """SHA-256 over the archives' names and bytes, in order, then `extra`: a cache key.
    StoredFileError for an archive that is not a regular file inside `root` (the storage root;
    its own folder by default) of at most MAX_ARCHIVE_BYTES, read to that many bytes at most."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        with stored_files.opened(root or path.parent, path, MAX_ARCHIVE_BYTES, path.name) as file:
            left = MAX_ARCHIVE_BYTES
            while left > 0 and (chunk := file.read(min(1 << 20, left))):
                digest.update(chunk)
                left -= len(chunk)
    for text in extra:
        digest.update(b"\0" + text.encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Pip:
    """pip as a job's install runs it."""

    env: Mapping[str, str]
    interrupted: Interrupted
    log: Path | None

    def install_archives(self, archives: list[Path], target: Path) -> None:
        """The archives alone into `target`, from their files."""
        command = [sys.executable, *PIP_INSTALL, "--no-deps", "--no-build-isolation", "--no-index"]
        self.run([*command, "--target", str(target), *map(str, archives)], target)

    def install_requirements(
        self, requirements: list[str], root: Path, pins: list[str], sites: Sequence[str]
    ) -> None:
        """`requirements` into a layer at `root` over `sites` (the image's layer, if any, and
        the service's site-packages), `pins` held."""
        layer = isolation.create(root, list(sites))
        constraints = root / "pins.txt"
        constraints.write_text("".join(f"{pin}\n" for pin in pins))
        command = [str(layer.python), *PIP_INSTALL, "--constraint", str(constraints), *requirements]
        # The user's own site (~/.local) stays out of what pip sees, as it does for replicas.
        self.run(command, root, {"PYTHONUSERBASE": str(layer.user_base)})

    def run(self, command: list[str], cwd: Path, extra: Mapping[str, str] | None = None) -> None:
        """Run pip; InstallInterrupted or InstallError (with its last lines) when it stops."""
        code, text = self.execute(command, cwd, extra)
        if code != 0:
            tail = "\n".join(text.strip().splitlines()[-TAIL_LINES:])
            raise InstallError(f"pip install failed with status {code}:\n{tail}")

    def execute(
        self, command: list[str], cwd: Path, extra: Mapping[str, str] | None = None
    ) -> tuple[int, str]:
        """Run `command` (pip, or the layer's python), its output appended to the log: its exit
        status and output; InstallInterrupted when interrupted. Its temporary files (unpacked
        archives, builds) go to a folder of its own beside `cwd`, removed however it ends: a
        job's pip never fills the machine's shared /tmp."""
        cwd.parent.mkdir(parents=True, exist_ok=True)
        scratch = tempfile.mkdtemp(prefix=f".{cwd.name}.pip-tmp-", dir=cwd.parent)
        own = {"TMPDIR": scratch, "TEMP": scratch, "TMP": scratch}
        try:
            with _output(self.log) as output:
                offset = output.tell()
                process = start(command, {**self.env, **(extra or {}), **own}, cwd, output)
                code = _wait(process, self.interrupted)
                output.seek(offset)
                text = output.read().decode(errors="replace")
        finally:
            tree_walk.remove_tree(scratch, ignore_errors=True)
        if code is None:
            raise InstallInterrupted()
        return code, text

    def note(self, text: str) -> None:
        """A line of the service's own in the log."""
        with _output(self.log) as output:
            output.write(f"{NOTE}{text}\n".encode())


def once(folder: Path, interrupted: Interrupted, build: Callable[[], None]) -> bool:
    """Run `build` unless `folder` is ready (one build per folder at a time); whether it ran.
    A build that raises leaves nothing behind."""
    lock = _lock_for(folder)
    while not lock.acquire(timeout=_POLL):
        if interrupted():
            raise InstallInterrupted()
    try:
        with _file_lock(folder, interrupted):
            if (folder / READY).is_file():
                return False
            tree_walk.remove_tree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            try:
                build()
            except BaseException:
                tree_walk.remove_tree(folder, ignore_errors=True)
                raise
            (folder / READY).write_text("")
            return True
    finally:
        lock.release()


@contextlib.contextmanager
def _file_lock(folder: Path, interrupted: Interrupted) -> Iterator[None]:
    """Hold `.<folder name>.lock` beside `folder` exclusively (another process of this user
    may build the same folder of a shared cache); InstallInterrupted while waiting for it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(folder.parent / f".{folder.name}.lock", flags, 0o600)
    try:
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                    raise
                if interrupted():
                    raise InstallInterrupted() from None
                threading.Event().wait(_POLL)
        yield
    finally:
        os.close(descriptor)


def user_cache_path(environ: Mapping[str, str], name: str) -> Path:
    """This user's cache folder `name`, shared by all their services: `$XDG_CACHE_HOME/vtp/NAME`
    (default `~/.cache`); not made (`user_cache` makes it)."""
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".cache")
    return Path(base) / "vtp" / name


def user_cache(environ: Mapping[str, str], name: str) -> Path:
    """`user_cache_path`, made private (`private_files.private_dir`: UnsafePath where another
    user could plant or replace what is in it)."""
    return private_files.private_dir(user_cache_path(environ, name))


def satisfied(text: str) -> bool:
    """Whether this interpreter's environment already has what `text` asks (no extras, no URL)."""
    requirement = Requirement(text)
    if requirement.extras or requirement.url:
        return False
    try:
        found = importlib.metadata.version(requirement.name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return requirement.specifier.contains(found, prereleases=True)


@contextlib.contextmanager
def _output(log: Path | None) -> Iterator[IO[bytes]]:
    """`log` opened to append and read back, or a temporary file."""
    if log is None:
        with tempfile.TemporaryFile() as scratch:
            yield scratch
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a+b") as appended:
        yield appended


def _wait(process: subprocess.Popen, interrupted: Interrupted) -> int | None:
    """pip's exit status, or None when `interrupted` (pip and all it started killed)."""
    while True:
        try:
            return process.wait(timeout=_POLL)
        except subprocess.TimeoutExpired:
            if interrupted():
                signal_group(process.pid, signal.SIGKILL)
                process.wait()
                return None


def _lock_for(folder: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(folder, threading.Lock())
