"""The service's hold on its state directory: an exclusive lock, then a fresh token.

Two services on one state directory would each recover the other's jobs and kill its replicas,
so the lock is the first thing a service takes, before it reads any state, binds a port or writes
its TLS files; the token is written only once the lock is held.

The state is the user's alone, as `~/.ssh` is: replicas hold the token, so their logs may too.
Taking the directory sets the process's umask to 0o077, so every file and folder the service
(and every process it starts) creates from then on is 0600/0700, whatever the shell's umask;
what an earlier service left with wider modes is narrowed once the lock is held (`private`).

Before any of that, the directory, the runtime directory where the service publishes itself and
the pipeline cache (`$VTP_PIPELINE_CACHE_DIR`, when set) must be the user's alone
(`vtp.private_files`): a directory another user owns or could replace (a folder above it
writable by others without the sticky bit) is refused in one line, naming it, before the service
writes anything, since whoever owns it would own the token written there. An entry in the state
directory owned by another user (one planted while the directory was open) is refused too, and
so is a storage root (`--gcs-root`) that holds the state directory: replicas and containers see
the storage root at /gcs, and storage clients read it through the API.

What jobs leave is another matter (issue #49): a replica running as root, or a container running
as another uid, writes files of any owner, and trees of any depth, into its working folder, its
run's workspace and the storage root. Those never stop a start: the walk that narrows modes is
iterative and bounded (`vtp.engine.tree_walk`), skips another user's entries there with one log
line, and does not walk the storage root at all (`private`).
"""

import contextlib
import fcntl
import logging
import os
import stat
from pathlib import Path
from typing import IO

from vtp import private_files
from vtp.engine import tree_walk
from vtp.engine.cache import CACHE_DIR_ENV
from vtp.vertex import local_auth

_log = logging.getLogger(__name__)


class StateDirInUse(RuntimeError):
    """Another running service holds the state directory (it would kill that one's replicas)."""


class StateDir:
    """A state directory held by this process until `release()`."""

    def __init__(self, path: Path, storage_root: Path | None = None) -> None:
        """Take `path`; UnsafePath when another user could plant or replace it, or when
        `storage_root` (what replicas see at /gcs, and the storage API serves) holds it."""
        os.umask(0o077)
        if storage_root is not None and path.resolve().is_relative_to(storage_root.resolve()):
            raise private_files.UnsafePath(
                f"refusing to start: the storage root {storage_root} holds the state directory "
                f"{path}, so every replica, container and storage client would reach the token "
                "there; choose a --gcs-root outside it"
            )
        try:
            private_files.private_dir(path)
            private_files.private_dir(local_auth.runtime_dir())
            if os.environ.get(CACHE_DIR_ENV):
                private_files.private_dir(Path(os.environ[CACHE_DIR_ENV]))
        except private_files.UnsafePath as exc:
            raise private_files.UnsafePath(f"refusing to start: {exc}") from None
        self.path = path
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            descriptor = os.open(path / "service.lock", flags, 0o600)
        except OSError as exc:
            raise private_files.UnsafePath(
                f"refusing to start: {path / 'service.lock'}: {exc.strerror}"
            ) from None
        self._lock: IO[bytes] | None = os.fdopen(descriptor, "wb")
        try:
            if os.fstat(descriptor).st_uid != os.geteuid():
                raise private_files.UnsafePath(
                    f"refusing to start: {path / 'service.lock'} belongs to another user"
                )
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            self._lock = None
            raise StateDirInUse(
                f"another local Vertex service uses the state directory {path}"
            ) from None
        except BaseException:
            self.release()
            raise
        try:
            private(path, storage_root)
        except BaseException:
            self.release()
            raise
        self.token = local_auth.new_token(path)
        """The bearer token every API request must carry (also in `<state-dir>/token`)."""

    def release(self) -> None:
        """Let another service take the directory (closing the file releases the flock)."""
        if self._lock:
            self._lock.close()
            self._lock = None


MAX_DEPTH = 64
"""Folders deep the start narrows modes in; deeper ones (a job's own tree) are left as they are."""
MAX_ENTRIES = 1_000_000
"""Entries the start looks at, at most, in the service's own folders and again in the folders
jobs write: past that the rest is left as it is, with one log line, and the service starts."""
JOB_WRITTEN = (("jobs", "work"), ("pipelines", "workspace"))
"""(top folder, folder) of `<state>/TOP/<id>/FOLDER`, the trees a job's replicas (their working
folders) and a run's tasks (its workspace, mounted in their containers) write as they like."""


def private(root: Path, storage_root: Path | None = None) -> None:
    """Take group and other permissions off `root` and everything under it (links aside):
    folders 0700, files 0600, or 0700 where the owner may execute them.

    What the service keeps itself is walked first: an entry there that another user (not root)
    owns was planted while the directory was open, and is refused (UnsafePath). Then the trees
    jobs write (`JOB_WRITTEN`), where a replica running as root, or a container running as
    another uid, leaves files of any owner: those are skipped, with one log line. The storage
    root, when it is inside (the default `<state>/gcs`), is narrowed itself but not walked: its
    buckets are what replicas, containers and storage clients write, this 0700 directory keeps
    them from other users already, and a start must not walk a whole data set. Every walk is
    iterative and bounded (`MAX_DEPTH`, `MAX_ENTRIES`): what a job left past the bounds is left
    as it is, with one log line, and never stops the start."""
    storage = _inside(root, storage_root)
    own = _Narrowing(str(root), storage, own=True)
    own.narrow(str(root), os.lstat(root))
    own.walk(str(root))
    own.report("the state directory's own folders")
    jobs = _Narrowing(str(root), storage, own=False)
    for folder in own.handed_on:
        jobs.top(folder, enter=folder != storage)
    jobs.report("the folders jobs write in the state directory")


class _Narrowing:
    """One pass of `private` over the service's own folders (`own`) or over those jobs write,
    and what it left as it was, for its log lines."""

    def __init__(self, root: str, storage: str, own: bool) -> None:
        self.root, self.storage, self.own = root, storage, own
        self.me = os.geteuid()
        self.handed_on: list[str] = []
        """Folders the pass over the service's own left to the pass over what jobs write."""
        self.foreign: list[tuple[str, int]] = []
        self.too_deep = ""
        self.too_many = False
        self.seen = 0
        self._unentered: set[str] = set()

    def top(self, folder: str, enter: bool) -> None:
        """`folder` itself, then (with `enter`) everything under it."""
        if self.one(folder, depth=0) and enter:
            self.walk(folder)

    def walk(self, top: str) -> None:
        """Everything under `top`, within what is left of `MAX_ENTRIES` for this pass."""
        if self.seen >= MAX_ENTRIES:
            self.too_many = True
            return
        keep_out = self._unentered.__contains__
        walk = tree_walk.Walk(
            top, MAX_DEPTH, MAX_ENTRIES - self.seen, lambda e: not keep_out(e.path)
        )
        try:
            for entry in walk:
                if not self.one(entry.path, entry.depth) and entry.is_dir:
                    self._unentered.add(entry.path)
        except tree_walk.TooManyEntries:
            self.too_many = True
        self.seen += walk.seen
        if walk.too_deep and not self.too_deep:
            self.too_deep = top  # the folder the deep tree is in: its full path may be huge

    def one(self, path: str, depth: int) -> bool:
        """Check and narrow one entry; whether a walk may go into it (a real folder, neither
        handed on nor another user's)."""
        if self.own and (path == self.storage or (depth == 3 and _job_written(self.root, path))):
            self.handed_on.append(path)
            return False
        try:
            info = os.lstat(path)
        except OSError:
            return False
        if info.st_uid not in (self.me, 0):
            if self.own:
                raise private_files.UnsafePath(
                    f"refusing to start: {path} in the state directory belongs to another user "
                    f"(uid {info.st_uid}); remove it, or choose a new --state-dir"
                )
            self.foreign.append((path, info.st_uid))
            return False
        self.narrow(path, info)
        return stat.S_ISDIR(info.st_mode)  # never a link: what it leads to is not the state's

    @staticmethod
    def narrow(path: str, info: os.stat_result) -> None:
        """Folders 0700, files 0600 (0700 when the owner may execute them); links left alone."""
        mode = info.st_mode
        if stat.S_ISLNK(mode) or not mode & 0o077:
            return
        wanted = 0o700 if stat.S_ISDIR(mode) or mode & stat.S_IXUSR else 0o600
        try:
            os.chmod(path, wanted, follow_symlinks=False)
        except NotImplementedError:  # glibc < 2.32: lstat above says it is not a link
            with contextlib.suppress(OSError):
                os.chmod(path, wanted)
        except OSError:
            return

    def report(self, where: str) -> None:
        """One log line for each kind of thing this pass left as it was."""
        if self.foreign:
            path, uid = self.foreign[0]
            more = f" (and {len(self.foreign) - 1} more)" if len(self.foreign) > 1 else ""
            _log.warning(
                "%s belongs to another user (uid %d) and was left as it is%s: a replica running "
                "as root, or a container running as another uid, leaves such files in %s",
                path, uid, more, where,
            )  # fmt: skip
        if self.too_deep:
            _log.warning(
                "%s go more than %d folders deep; what lies that far below %s was left as it is",
                where, MAX_DEPTH, self.too_deep,
            )  # fmt: skip
        if self.too_many:
            _log.warning(
                "%s hold more than %d entries; the rest was left as it is", where, MAX_ENTRIES
            )


def _inside(root: Path, storage_root: Path | None) -> str:
    """`storage_root` as a walk of `root` names it, when it is inside `root` ("" otherwise): the
    walk follows no link, so the path it meets is `root` joined with the real relative path."""
    if storage_root is None:
        return ""
    real_root, real_storage = os.path.realpath(root), os.path.realpath(storage_root)
    if real_storage == real_root or not real_storage.startswith(real_root + os.sep):
        return ""
    return os.path.join(str(root), os.path.relpath(real_storage, real_root))


def _job_written(root: str, path: str) -> bool:
    """Whether `path` is `<root>/TOP/<id>/FOLDER` for a (TOP, FOLDER) of `JOB_WRITTEN`."""
    parts = Path(os.path.relpath(path, root)).parts
    return len(parts) == 3 and (parts[0], parts[2]) in JOB_WRITTEN
