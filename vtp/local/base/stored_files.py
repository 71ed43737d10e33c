"""Reading a file that someone else wrote into the storage root (or a job's folder), safely.

Replicas, tasks and the user write the storage root as files, so a file the service reads there
may be anything: a FIFO (opening it for reading waits for a writer, forever), a device, a link
leading out of the root, a sparse file whose size claims terabytes it does not store, or a file
still growing. Every reader of such a file goes through here:

- the file is opened without waiting (`O_NONBLOCK`) and without following a last link
  (`O_NOFOLLOW`, on its real path), then checked by what was opened: a regular file, inside
  `root`;
- its size is at most the reader's `limit`, and no more than `limit` bytes are ever read (a file
  that grows past it while being read is refused the same way);
- what cannot be read is a `StoredFileError` whose message names the file and the limit, which
  the caller turns into its 4xx (or a failed operation) naming its field.
"""

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from vtp import storage


class StoredFileError(ValueError):
    """A stored file that cannot be read as asked; `missing` when there is none at all."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


@contextlib.contextmanager
def opened(root: Path, path: Path, limit: int, what: str) -> Iterator[BinaryIO]:
    """`path` open for reading in binary, checked: a regular file inside `root` of at most
    `limit` bytes. `what` names it in messages (`gs://b/x.jsonl`). Reading past `limit` is the
    reader's to refuse (`read_bytes` does; line readers pass a size to `readline`)."""
    real = os.path.realpath(path)
    try:
        descriptor = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        raise StoredFileError(f"{what} does not exist", missing=True) from None
    except OSError as exc:
        raise StoredFileError(f"{what} cannot be read: {exc.strerror}") from None
    try:
        _check(root, descriptor, limit, what)
    except BaseException:
        os.close(descriptor)
        raise
    os.set_blocking(descriptor, True)
    with open(descriptor, "rb") as file:
        yield file


def read_bytes(root: Path, path: Path, limit: int, what: str) -> bytes:
    """The whole of `path`, checked as `opened` does; never more than `limit` bytes read."""
    with opened(root, path, limit, what) as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise StoredFileError(_too_big(what, len(data), limit, "grew to more than"))
    return data


def read_text(root: Path, path: Path, limit: int, what: str, encoding: str = "utf-8") -> str:
    """`read_bytes` decoded; StoredFileError when it is not text in `encoding`."""
    try:
        return read_bytes(root, path, limit, what).decode(encoding)
    except UnicodeDecodeError as exc:
        raise StoredFileError(f"{what} is not {encoding} text: {exc.reason}") from None


def _check(root: Path, descriptor: int, limit: int, what: str) -> None:
    status = os.fstat(descriptor)
    if stat.S_ISDIR(status.st_mode):
        raise StoredFileError(f"{what} is a folder, not a file", missing=True)
    if not stat.S_ISREG(status.st_mode):
        raise StoredFileError(f"{what} is not a regular file (a FIFO, socket or device)")
    real = os.readlink(f"/proc/self/fd/{descriptor}")
    if not storage.real_is_inside(os.path.realpath(root), real):
        raise StoredFileError(f"{what} leads out of its folder through a symbolic link")
    if status.st_size > limit:
        raise StoredFileError(_too_big(what, status.st_size, limit, "is"))


def _too_big(what: str, size: int, limit: int, verb: str) -> str:
    return f"{what} {verb} {size} bytes, over the limit of {limit} bytes this reader takes"
