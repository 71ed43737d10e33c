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
"""

import contextlib
import fcntl
import os
import stat
from pathlib import Path
from typing import IO

from vtp import private_files
from vtp.engine.cache import CACHE_DIR_ENV
from vtp.vertex import local_auth


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
            private(path)
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


def private(root: Path) -> None:
    """Take group and other permissions off `root` and everything under it (links aside):
    folders 0700, files 0600, or 0700 where the owner may execute them. UnsafePath for an
    entry another user (not root) owns: it was planted while the directory was open."""
    me = os.geteuid()
    for folder, dirs, files in os.walk(root):
        for name in [folder, *(os.path.join(folder, d) for d in dirs)] + [
            os.path.join(folder, f) for f in files
        ]:
            try:
                info = os.lstat(name)
                mode = info.st_mode
            except OSError:
                continue
            if info.st_uid not in (me, 0):
                raise private_files.UnsafePath(
                    f"refusing to start: {name} in the state directory belongs to another user "
                    f"(uid {info.st_uid}); remove it, or choose a new --state-dir"
                )
            if stat.S_ISLNK(mode) or not mode & 0o077:
                continue
            wanted = 0o700 if stat.S_ISDIR(mode) or mode & stat.S_IXUSR else 0o600
            try:
                os.chmod(name, wanted, follow_symlinks=False)
            except NotImplementedError:  # glibc < 2.32: lstat above says it is not a link
                with contextlib.suppress(OSError):
                    os.chmod(name, wanted)
            except OSError:
                continue
