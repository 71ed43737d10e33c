"""An object's md5 and crc32c: known from its write, or found later within a bound.

Cloud Storage's JSON API reports `md5Hash` and `crc32c` for each object, but they are optional
fields: the python client checks a download against `X-Goog-Hash` when it is there and skips the
check when it is not, and `gcloud storage cp` warns "Found no hashes to validate" and copies. So
the service never makes a request wait on hashing an object a client did not send it:

- an object written through the API is hashed as its bytes arrive (`remember`);
- a file written on disk (replicas write through `/gcs`) is hashed by the request that first
  needs it only while the request's `Budget` lasts (HASH_BUDGET_BYTES of real bytes); past it,
  the file is queued for one background thread and the answer leaves the hashes out until then;
- a file with holes (sparse: its size is not the bytes it stores) is never hashed: its hashes
  would cost its apparent size, which anyone who can write the root sets at will.

Hashes are cached by (device, inode, size, modification time): a rename keeps them, any write
drops them. Hashing opens the file without following a link or waiting on a FIFO, checks it is
the regular file that was looked at, reads no more than its size, and keeps nothing when the file
changed meanwhile (a file still growing is hashed again once it has settled).
"""

import base64
import contextlib
import hashlib
import logging
import os
import queue
import stat as stat_module
import threading
from pathlib import Path

import google_crc32c

HASH_BUDGET_BYTES = 64 << 20
"""Bytes of objects not hashed yet that one request may hash before it answers."""

MAX_CACHED = 100_000
"""Hashes kept; the cache starts over past it."""

_CHUNK = 1 << 20
_QUEUED = 10_000
"""Files waiting for the background thread at most; more are left for a later request."""

Key = tuple[int, int, int, int]
Hashes = tuple[str, str]
EMPTY: Hashes = ("1B2M2Y8AsgTpgAmY7PhCfg==", "AAAAAA==")
"""md5 and crc32c of no bytes, base64."""

_log = logging.getLogger(__name__)


def key_of(status: os.stat_result) -> Key:
    """What identifies one version of a file: device, inode, size, modification time."""
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def encode(md5: "hashlib._Hash", crc: google_crc32c.Checksum) -> Hashes:
    """(md5, crc32c) base64, as the JSON API writes them."""
    return base64.b64encode(md5.digest()).decode(), base64.b64encode(crc.digest()).decode()


class Budget:
    """The bytes one request may still hash."""

    def __init__(self, left: int | None = None) -> None:
        self.left = HASH_BUDGET_BYTES if left is None else left


class Checksums:
    """The hashes of the storage root's files, by version."""

    def __init__(self) -> None:
        self._known: dict[Key, Hashes] = {}
        self._lock = threading.Lock()
        self._queue: queue.Queue[Path] = queue.Queue(_QUEUED)
        self._worker: threading.Thread | None = None
        self.hashed_bytes = 0
        """Bytes read to hash, all requests and the background thread together."""

    def remember(self, status: os.stat_result, hashes: Hashes) -> None:
        """Keep the hashes of the file version `status` describes (computed as it was written)."""
        with self._lock:
            if len(self._known) >= MAX_CACHED:
                self._known.clear()
            self._known[key_of(status)] = hashes

    def known(self, status: os.stat_result) -> Hashes | None:
        """The cached hashes of this file version, if any."""
        with self._lock:
            return self._known.get(key_of(status))

    def of(self, path: Path, status: os.stat_result, budget: Budget) -> Hashes | None:
        """The hashes of `path` (as `status` saw it): cached, or hashed now within `budget`, or
        None (queued for the background thread when the budget is spent)."""
        found = self.known(status)
        if found is not None or status.st_size == 0:
            return found or EMPTY
        if status.st_size > budget.left:
            self._later(path)
            return None
        budget.left -= status.st_size
        return self.hash(path, status)

    def hash(self, path: Path, status: os.stat_result) -> Hashes | None:
        """Hash the file version `status` describes and cache it; None when `path` is not that
        regular file any more, has holes, or changed while being read."""
        try:
            descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None
        with open(descriptor, "rb", buffering=0) as file:
            opened = os.fstat(descriptor)
            if not stat_module.S_ISREG(opened.st_mode) or key_of(opened) != key_of(status):
                return None
            if _has_holes(descriptor, opened.st_size):
                return None
            md5, crc = hashlib.md5(usedforsecurity=False), google_crc32c.Checksum()
            left = opened.st_size
            while left and (chunk := file.read(min(_CHUNK, left))):
                md5.update(chunk)
                crc.update(chunk)
                left -= len(chunk)
            with self._lock:
                self.hashed_bytes += opened.st_size - left
            if left or key_of(os.fstat(descriptor)) != key_of(opened):
                return None  # it shrank or changed as it was read: nothing to keep
        hashes = encode(md5, crc)
        self.remember(opened, hashes)
        return hashes

    def _later(self, path: Path) -> None:
        with contextlib.suppress(queue.Full):
            self._queue.put_nowait(path)
        with self._lock:
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._work, name="storage-checksums", daemon=True
                )
                self._worker.start()

    def _work(self) -> None:
        """Hash queued files one at a time, for as long as the service runs."""
        while True:
            path = self._queue.get()
            try:
                status = os.stat(path, follow_symlinks=False)
                if self.known(status) is None:
                    self.hash(path, status)
            except OSError:
                continue
            except Exception:  # a bug must not end the thread every later request relies on
                _log.exception("hashing %s failed", path)


def _has_holes(descriptor: int, size: int) -> bool:
    """Whether the open file stores fewer bytes than its size says (a hole before its end)."""
    try:
        return os.lseek(descriptor, 0, os.SEEK_HOLE) < size
    except OSError:  # a file system that cannot say: count it whole
        return False
    finally:
        os.lseek(descriptor, 0, os.SEEK_SET)
