"""Buckets and objects as plain directories and files under the storage root.

    gs://bucket/a/b.txt  <->  <root>/bucket/a/b.txt

An object is exactly the file a replica reads through `vtp.storage` (and a replica's file is an
object at once): no metadata files beside it. What Cloud Storage keeps per object is derived:

- `generation`: the file's modification time in nanoseconds (every write changes it);
- `size`, `md5Hash`, `crc32c` (base64, as the JSON API writes them; hashes cached per generation);
- `contentType`: from the name (`mimetypes`), else application/octet-stream.

Writes go to a temporary file in `<root>/.vtp-uploads` (no bucket can have that name) and are
renamed into place, so a reader never sees half an object. Every path goes through
`vtp.storage.path_under`, and names with empty, `.` or `..` segments are refused, so nothing
leaves the root.
"""

import base64
import hashlib
import mimetypes
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import google_crc32c

from vtp.local.base import errors
from vtp.storage import path_under

UPLOADS_DIR = ".vtp-uploads"
LOCAL_PROJECT_NUMBER = "100000000001"
"""The project number every local bucket reports (there is one local project)."""


class Readable(Protocol):
    """Where an object's data comes from: a file, or a request body of known length."""

    def read(self, size: int = -1, /) -> bytes: ...


_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")
_CHUNK = 1 << 20
_EMPTY = ("1B2M2Y8AsgTpgAmY7PhCfg==", "AAAAAA==")
"""md5 and crc32c of no bytes, base64."""


def precondition_failed(message: str) -> errors.ApiError:
    """412: an ifGenerationMatch-style condition does not hold."""
    return errors.ApiError(errors.FAILED_PRECONDITION, message, http_status=412)


@dataclass(frozen=True)
class ObjectInfo:
    """What the JSON API reports about one object."""

    bucket: str
    name: str
    size: int
    generation: int
    updated: datetime
    md5: str
    crc32c: str

    @property
    def content_type(self) -> str:
        """The media type by the name's extension."""
        return mimetypes.guess_type(self.name)[0] or "application/octet-stream"


class Buckets:
    """The storage root seen as Cloud Storage."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._hashes: dict[tuple[str, int, int], tuple[str, str]] = {}
        self._lock = threading.Lock()

    # -- buckets ---------------------------------------------------------------------------

    def bucket_dir(self, bucket: str) -> Path:
        """The directory of `bucket`; INVALID_ARGUMENT for a name Cloud Storage refuses."""
        if not _BUCKET.fullmatch(bucket) or ".." in bucket:
            raise errors.invalid_argument(
                f"Invalid bucket name {bucket!r}: 3-222 characters of a-z, 0-9, '-', '_' and "
                "'.', starting and ending with a letter or digit."
            )
        return path_under(self.root, f"gs://{bucket}")

    def existing_bucket(self, bucket: str) -> Path:
        """The directory of an existing bucket; NOT_FOUND otherwise."""
        folder = self.bucket_dir(bucket)
        if not folder.is_dir():
            raise errors.not_found(f"The specified bucket does not exist: {bucket}")
        return folder

    def bucket_names(self) -> list[str]:
        """Every bucket, sorted."""
        if not self.root.is_dir():
            return []
        found = (p.name for p in self.root.iterdir() if p.is_dir())
        return sorted(name for name in found if _BUCKET.fullmatch(name))

    def create_bucket(self, bucket: str) -> Path:
        """Make `bucket`; ALREADY_EXISTS (409) when it is there."""
        folder = self.bucket_dir(bucket)
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            raise errors.ApiError(
                6, f"The bucket {bucket} already exists (the local storage root has it)."
            ) from None
        return folder

    def delete_bucket(self, bucket: str) -> None:
        """Remove an empty bucket; 409 when it still holds objects."""
        folder = self.existing_bucket(bucket)
        if any(self._files(folder, "")):
            raise errors.ApiError(
                9, f"The bucket {bucket} you tried to delete is not empty.", http_status=409
            )
        shutil.rmtree(folder)

    # -- objects ---------------------------------------------------------------------------

    def object_path(self, bucket: str, name: str) -> Path:
        """The file of object `name`; INVALID_ARGUMENT for names that cannot be files here."""
        self.bucket_dir(bucket)
        segments = name.split("/")
        if (
            not name
            or len(name.encode()) > 1024
            or any(s in (".", "..") for s in segments)
            or "" in segments[:-1]
            or "\0" in name
            or "\\" in name
            or "\r" in name
            or "\n" in name
        ):
            raise errors.invalid_argument(
                f"Invalid object name {name!r}: the local storage root keeps objects as files, "
                "so names may not have empty, '.' or '..' segments, NUL, CR, LF or '\\'."
            )
        return path_under(self.root, f"gs://{bucket}/{name}")

    def info(self, bucket: str, name: str, generation: str = "") -> ObjectInfo:
        """The object's metadata; NOT_FOUND when there is no such file (or generation)."""
        self.existing_bucket(bucket)
        path = self.object_path(bucket, name)
        try:
            stat = path.stat()
        except OSError:
            stat = None
        wrong_generation = stat and generation and generation != str(stat.st_mtime_ns)
        if stat is None or not path.is_file() or wrong_generation:
            raise errors.not_found(f"No such object: {bucket}/{name}")
        md5, crc = self._checksums(path, stat.st_size, stat.st_mtime_ns)
        return ObjectInfo(
            bucket=bucket,
            name=name,
            size=stat.st_size,
            generation=stat.st_mtime_ns,
            updated=datetime.fromtimestamp(stat.st_mtime_ns / 1e9, UTC),
            md5=md5,
            crc32c=crc,
        )

    def check_generation(self, bucket: str, name: str, query: dict[str, list[str]]) -> None:
        """Apply ifGenerationMatch / ifGenerationNotMatch (412 when they do not hold)."""
        match = query.get("ifGenerationMatch", [""])[0]
        not_match = query.get("ifGenerationNotMatch", [""])[0]
        if not (match or not_match):
            return
        try:
            current = str(self.info(bucket, name).generation)
        except errors.ApiError:
            current = "0"
        if match and match != current:
            raise precondition_failed(
                f"At least one of the pre-conditions you specified did not hold: "
                f"ifGenerationMatch={match}, the object's generation is {current}."
            )
        if not_match and not_match == current:
            raise precondition_failed(
                f"At least one of the pre-conditions you specified did not hold: "
                f"ifGenerationNotMatch={not_match}."
            )

    def write(self, bucket: str, name: str, source: Readable) -> ObjectInfo:
        """Store `source` (read to its end) as the object, atomically; its new metadata."""
        self.existing_bucket(bucket)
        path = self.object_path(bucket, name)
        if name.endswith("/"):  # a folder placeholder, as consoles create: a directory here
            if source.read(1):
                raise errors.invalid_argument(
                    f"Invalid object name {name!r}: a name ending in '/' is a folder here; "
                    "it cannot hold data."
                )
            path.mkdir(parents=True, exist_ok=True)
            mtime = path.stat().st_mtime_ns
            return ObjectInfo(
                bucket, name, 0, mtime, datetime.fromtimestamp(mtime / 1e9, UTC), *_EMPTY
            )
        with self.temporary() as temporary:
            md5, crc = hashlib.md5(usedforsecurity=False), google_crc32c.Checksum()
            with open(temporary, "wb") as file:
                while chunk := source.read(_CHUNK):
                    file.write(chunk)
                    md5.update(chunk)
                    crc.update(chunk)
            self._place(temporary, path, name)
        stat = path.stat()
        with self._lock:
            self._hashes[(str(path), stat.st_size, stat.st_mtime_ns)] = (
                base64.b64encode(md5.digest()).decode(),
                base64.b64encode(crc.digest()).decode(),
            )
        return self.info(bucket, name)

    def delete(self, bucket: str, name: str) -> None:
        """Remove the object; NOT_FOUND when it is not there."""
        self.info(bucket, name)
        self.object_path(bucket, name).unlink()
        self._prune(self.object_path(bucket, name).parent, self.bucket_dir(bucket))

    def list(
        self, bucket: str, prefix: str = "", delimiter: str = "", start_after: str = ""
    ) -> Iterator[tuple[str, bool]]:
        """(name, is_prefix) in name order after `start_after`: objects, and with a delimiter
        the distinct prefixes that end at it (as the JSON API's `items` and `prefixes`)."""
        folder = self.existing_bucket(bucket)
        last_prefix = ""
        for name in sorted(self._files(folder, prefix)):
            if not name.startswith(prefix):
                continue
            cut = name.find(delimiter, len(prefix)) if delimiter else -1
            if cut >= 0:
                common = name[: cut + len(delimiter)]
                if common != last_prefix and common > start_after:
                    yield common, True
                last_prefix = common
            elif name > start_after:
                yield name, False

    def open(self, bucket: str, name: str) -> Path:
        """The file to send for a media download (after `info` said it exists)."""
        return self.object_path(bucket, name)

    def temporary(self) -> "_Temporary":
        """A temporary file on the root's file system, removed unless renamed into place."""
        folder = self.root / UPLOADS_DIR
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return _Temporary(folder)

    # -- internals -------------------------------------------------------------------------

    def _place(self, temporary: Path, path: Path, name: str) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                raise NotADirectoryError
            os.replace(temporary, path)
        except (NotADirectoryError, FileExistsError, IsADirectoryError):
            raise errors.ApiError(
                9,
                f"Object {name!r} cannot be stored: the local storage root keeps objects as "
                "files, and one of its folders is already an object (or it is a folder).",
                http_status=409,
            ) from None

    def _files(self, folder: Path, prefix: str) -> Iterator[str]:
        """Names of the files under `folder`, walking only the folders `prefix` can match."""
        start = folder / prefix.rpartition("/")[0] if "/" in prefix else folder
        if not start.is_dir():
            return
        for directory, folders, files in os.walk(start):
            folders.sort()
            relative = Path(directory).relative_to(folder).as_posix()
            base = "" if relative == "." else relative + "/"
            for file in files:
                yield base + file

    def _checksums(self, path: Path, size: int, generation: int) -> tuple[str, str]:
        key = (str(path), size, generation)
        with self._lock:
            if key in self._hashes:
                return self._hashes[key]
        md5, crc = hashlib.md5(usedforsecurity=False), google_crc32c.Checksum()
        with open(path, "rb") as file:
            while chunk := file.read(_CHUNK):
                md5.update(chunk)
                crc.update(chunk)
        value = (base64.b64encode(md5.digest()).decode(), base64.b64encode(crc.digest()).decode())
        with self._lock:
            if len(self._hashes) > 100_000:
                self._hashes.clear()
            self._hashes[key] = value
        return value

    @staticmethod
    def _prune(folder: Path, stop: Path) -> None:
        """Remove folders emptied by a delete, up to (not including) the bucket."""
        while folder != stop and folder.is_relative_to(stop):
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent


class _Temporary:
    """`with buckets.temporary() as path:` a fresh path, removed on exit if still there."""

    def __init__(self, folder: Path) -> None:
        descriptor, name = tempfile.mkstemp(dir=folder, prefix="upload-")
        os.fchmod(descriptor, 0o644)  # what the object's file will have once in place
        os.close(descriptor)
        self.path = Path(name)

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc: object) -> None:
        self.path.unlink(missing_ok=True)
