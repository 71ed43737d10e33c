"""Folders and files of this user's alone, which no other local user can read, plant or replace.

The service keeps its token, TLS key, runtime files and caches in folders the user may have
named anywhere (`--state-dir /tmp/...`, a shared project folder). Another user who can create
such a folder first, or rename it away and put their own in its place, owns what the service then
writes there. So a private folder is refused (`UnsafePath`, one line naming it and why) unless:

- it, every folder above it and every symbolic link on the way (followed the same way) belongs
  to this user or to root;
- no folder above it is writable by group or others without the sticky bit (in a sticky folder
  such as /tmp only an entry's owner can rename or remove it);
- it is a folder of this user's, and ends at mode 0700 (a looser one is narrowed, or refused when
  that fails).

Once that holds nobody else can change any of it, so later opens by path stay safe. A private
file is written as a new file `mkstemp` makes in its checked folder (O_EXCL|O_NOFOLLOW, a random
name no one could have planted), checked to be this user's, then renamed over the old one; a
private file is read only when it is a regular file of this user's (`read_private`).
"""

import errno
import os
import stat
import tempfile
from pathlib import Path

_MAX_LINKS = 40
"""Symbolic links followed on one path before giving up (the kernel's limit)."""


class UnsafePath(Exception):
    """A private folder or file another local user could read, plant or replace (not an
    OSError: nothing that skips a file it cannot read may skip this silently by accident)."""


def check_chain(path: Path) -> None:
    """Refuse `path` when any part of it that exists belongs to another user, or any folder
    above it is writable by others without the sticky bit (they could replace what is below).
    Symbolic links are checked and followed."""
    _check_chain(Path(os.path.abspath(path)), exempt_last=True, links=0, asked=path)


def check_trusted_dir(path: Path) -> None:
    """Refuse `path` as a folder whose modules this user's processes may import: it and every
    folder above it must be this user's or root's, no folder above it writable by others without
    the sticky bit, and `path` itself writable by no one else (in /tmp, or a folder others may
    write, another user could plant `usercustomize.py` or a module named like a dependency)."""
    check_chain(path)
    info = os.stat(path)
    if info.st_uid not in (os.geteuid(), 0):
        raise UnsafePath(f"{path} belongs to another user (uid {info.st_uid})")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise UnsafePath(
            f"{path} is writable by other users, who could plant a module there that every job "
            "would import; start in a folder only you can write"
        )


def private_dir(path: Path) -> Path:
    """Create `path` (and missing folders above it) or reuse it, as a folder of this user's
    alone at mode 0700; UnsafePath when another user could read, plant or replace it."""
    check_chain(path)
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
    except FileExistsError:
        raise UnsafePath(f"{path} is not a folder") from None
    check_chain(path)  # what mkdir made, and what may have appeared meanwhile
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePath(f"{path} is not a folder")
    if info.st_uid != os.geteuid():
        raise UnsafePath(
            f"{path} belongs to another user (uid {info.st_uid}), who could read or replace "
            "what is written there; choose a folder of your own"
        )
    if info.st_mode & 0o077:
        try:
            os.chmod(path, 0o700)
        except OSError as exc:
            raise UnsafePath(
                f"{path} is open to other users and cannot be made 0700: {exc.strerror}"
            ) from None
        if os.stat(path).st_mode & 0o077:
            raise UnsafePath(f"{path} is open to other users and stays so after chmod 0700")
    return path


def check_private_dir(path: Path) -> Path:
    """Refuse `path` unless it is already a folder of this user's alone (0700, chain checked):
    for folders made elsewhere, such as `tempfile.mkdtemp`'s."""
    check_chain(path)
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise UnsafePath(f"{path} is not a folder of this user's alone (mode 0700)")
    return path


def write_private(path: Path, data: str | bytes, mode: int = 0o600) -> None:
    """Replace `path` with `data`, whole, as a file of this user's at `mode` (group and other
    bits dropped), in a private folder (`private_dir`)."""
    folder = private_dir(path.parent)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(descriptor, "wb") as out:
            if os.fstat(out.fileno()).st_uid != os.geteuid():
                raise UnsafePath(f"{temporary} was not created by this user")
            os.fchmod(out.fileno(), mode & 0o700)
            out.write(data.encode() if isinstance(data, str) else data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_private(path: Path, limit: int = 1 << 20) -> bytes:
    """The first `limit` bytes of `path`, a regular file of this user's (not through a link,
    never blocking on a FIFO); UnsafePath otherwise, OSError when it cannot be read."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the last part is a symbolic link
            raise UnsafePath(f"{path} is a symbolic link, not a file of this user's") from None
        raise
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise UnsafePath(f"{path} is not a regular file of this user's")
        return file.read(limit)


def _check_chain(absolute: Path, exempt_last: bool, links: int, asked: Path) -> None:
    parts = absolute.parts
    me = os.geteuid()
    for index in range(1, len(parts) + 1):
        current = Path(*parts[:index])
        last = index == len(parts)
        named = str(current) if current == Path(os.path.abspath(asked)) else f"{asked}: {current}"
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return  # the rest does not exist yet: we create it, in a folder checked above
        if info.st_uid not in (me, 0):
            raise UnsafePath(
                f"{named} belongs to another user (uid {info.st_uid}), who could "
                "read or replace what is written there; choose a folder of your own"
            )
        if stat.S_ISLNK(info.st_mode):
            if links >= _MAX_LINKS:
                raise UnsafePath(f"{named}: too many symbolic links")
            target = Path(os.path.abspath(current.parent / os.readlink(current)))
            _check_chain(target, exempt_last and last, links + 1, asked)
            continue
        shared = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if (
            stat.S_ISDIR(info.st_mode)
            and shared
            and not info.st_mode & stat.S_ISVTX
            and not (last and exempt_last)
        ):
            raise UnsafePath(
                f"{named} is writable by other users without the sticky bit, so "
                "they could replace what is in it; choose a folder only you can write"
            )
