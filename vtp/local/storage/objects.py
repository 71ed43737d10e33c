"""Buckets and objects as plain directories and files under the storage root.

    gs://bucket/a/b.txt  <->  <root>/bucket/a/b.txt

An object is exactly the file a replica reads through `vtp.storage` (and a replica's file is an
object at once): no metadata files beside it. What Cloud Storage keeps per object is derived:

- `generation`: the file's modification time in nanoseconds (every write changes it);
- `size`, `md5Hash`, `crc32c` (base64, as the JSON API writes them): known from a write through
  the API, else found lazily within a bound, or left out (`vtp.local.storage.checksums`);
- `contentType`: from the name (`mimetypes`), else application/octet-stream.

Writes go to a temporary file in `<root>/.vtp-uploads` (no bucket can have that name) and are
renamed into place, so a reader never sees half an object. Every path goes through
`vtp.storage.path_under`, and names with empty, `.` or `..` segments are refused, so nothing
leaves the root lexically.

Replicas share the root and can plant symbolic links in it, so every path is also checked with
its links resolved (`path_under` does): a link that leads out of the root makes a request on it
a 400 naming the object, and listings leave it out. Where this module itself opens, renames or
removes a file, it checks what it actually got (the open file's or folder's real path, by its
descriptor), so swapping a folder for a link between the check and the use gains nothing. Its
own folder `.vtp-uploads` must be a real folder: a link planted there is removed and the folder
made again.
"""

import contextlib
import hashlib
import mimetypes
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Protocol

import google_crc32c

from vtp import storage
from vtp.engine import tree_walk
from vtp.local.base import buckets, errors
from vtp.local.base.buckets import BUCKET_NAME, ensure_bucket, missing_bucket
from vtp.local.storage.checksums import EMPTY, Budget, Checksums, encode
from vtp.storage import path_under

UPLOADS_DIR = ".vtp-uploads"


class Readable(Protocol):
    """Where an object's data comes from: a file, or a request body of known length."""

    def read(self, size: int = -1, /) -> bytes: ...


MAX_NAME_BYTES = buckets.MAX_NAME_BYTES
"""Cloud Storage's limit on an object name, in bytes of UTF-8."""

_CHUNK = 1 << 20


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
    md5: str | None
    crc32c: str | None
    """The hashes, base64; None while not known (a file written on disk, not hashed yet)."""
    inode: int = 0

    @property
    def version(self) -> list[int]:
        """What identifies this version of the file, for its metadata record."""
        return [self.inode, self.size, self.generation]

    @property
    def content_type(self) -> str:
        """The media type by the name's extension."""
        return mimetypes.guess_type(self.name)[0] or "application/octet-stream"


class Buckets:
    """The storage root seen as Cloud Storage."""

    def __init__(self, root: Path, strict: bool = False) -> None:
        """`strict`: a write to a bucket that does not exist is Cloud Storage's 404 instead of
        making it (`vtp.local.base.buckets`, `--strict-buckets`)."""
        self.root = root
        self.strict = strict
        self.checksums = Checksums()

    # -- buckets ---------------------------------------------------------------------------

    def bucket_dir(self, bucket: str) -> Path:
        """The directory of `bucket`; INVALID_ARGUMENT for a name Cloud Storage refuses."""
        if not BUCKET_NAME.fullmatch(bucket) or ".." in bucket:
            raise errors.invalid_argument(
                f"Invalid bucket name {bucket!r}: 3-222 characters of a-z, 0-9, '-', '_' and "
                "'.', starting and ending with a letter or digit."
            )
        try:
            return path_under(self.root, f"gs://{bucket}")
        except ValueError as exc:
            raise errors.invalid_argument(f"Invalid bucket name {bucket!r}: {exc}.") from None

    def existing_bucket(self, bucket: str) -> Path:
        """The directory of an existing bucket; NOT_FOUND otherwise."""
        folder = self.bucket_dir(bucket)
        if not folder.is_dir():
            raise missing_bucket(bucket)
        return folder

    def bucket_to_write(self, bucket: str, why: str) -> Path:
        """The directory of `bucket`, which a write names: made on first use, unless strict
        (then NOT_FOUND, as Cloud Storage answers)."""
        return ensure_bucket(self.bucket_dir(bucket), bucket, self.strict, why)

    def bucket_names(self) -> list[str]:
        """Every bucket, sorted."""
        if not self.root.is_dir():
            return []
        found = (p for p in self.root.iterdir() if BUCKET_NAME.fullmatch(p.name) and p.is_dir())
        return sorted(p.name for p in found if storage.is_inside(self.root, p))

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
        try:
            holds_objects = any(self._files(folder, ""))
        except tree_walk.TooManyEntries:
            raise _cannot_remove(bucket) from None
        if holds_objects:
            raise errors.ApiError(
                9, f"The bucket {bucket} you tried to delete is not empty.", http_status=409
            )
        if folder.is_symlink():  # a link to a folder inside the root: the link is the bucket
            folder.unlink()
            return
        _remove_empty_bucket(folder, bucket)

    # -- objects ---------------------------------------------------------------------------

    def object_path(self, bucket: str, name: str) -> Path:
        """The file of object `name`; INVALID_ARGUMENT, naming the object, for names that cannot
        be files here: bad segments or characters, too long for Cloud Storage or for the file
        system, or leading out of the root through a symbolic link."""
        self.bucket_dir(bucket)
        problem = name_problem(name, whole=True)
        if problem:
            raise errors.invalid_argument(f"Invalid object name {name!r}: {problem}.")
        try:
            return path_under(self.root, f"gs://{bucket}/{name}")
        except ValueError as exc:
            raise errors.invalid_argument(f"Invalid object name {name!r}: {exc}.") from None

    def info(
        self, bucket: str, name: str, generation: str = "", budget: Budget | None = None
    ) -> ObjectInfo:
        """The object's metadata; NOT_FOUND when there is no such file (or generation). Hashes
        not known yet are found within `budget` (a fresh one by default), else left out."""
        self.existing_bucket(bucket)
        path = self.object_path(bucket, name)
        try:
            stat = path.stat()
        except OSError:
            stat = None
        wrong_generation = stat and generation and generation != str(stat.st_mtime_ns)
        if stat is None or not path.is_file() or wrong_generation:
            raise errors.not_found(f"No such object: {bucket}/{name}")
        real = Path(os.path.realpath(path))  # what hashing opens: no link left to follow
        hashes = self.checksums.of(real, stat, budget or Budget())
        md5, crc = hashes or (None, None)
        return ObjectInfo(
            bucket=bucket,
            name=name,
            size=stat.st_size,
            generation=stat.st_mtime_ns,
            updated=datetime.fromtimestamp(stat.st_mtime_ns / 1e9, UTC),
            md5=md5,
            crc32c=crc,
            inode=stat.st_ino,
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

    def write(
        self, bucket: str, name: str, source: Readable, declared: Sequence[dict] = ()
    ) -> ObjectInfo:
        """Store `source` (read to its end) as the object, atomically; its new metadata. The
        bucket is made on first use (`bucket_to_write`). `declared`: each md5Hash / crc32c pair
        the client sent (the object resource's, a last chunk's `X-Goog-Hash`), each checked on
        its own; a 400 naming the field, and nothing stored, when the data differs."""
        path = self.object_path(bucket, name)
        self.bucket_to_write(bucket, f"object {name} written")
        if name.endswith("/"):  # a folder placeholder, as consoles create: a directory here
            if source.read(1):
                raise errors.invalid_argument(
                    f"Invalid object name {name!r}: a name ending in '/' is a folder here; "
                    "it cannot hold data."
                )
            path.mkdir(parents=True, exist_ok=True)
            mtime = path.stat().st_mtime_ns
            updated = datetime.fromtimestamp(mtime / 1e9, UTC)
            return ObjectInfo(bucket, name, 0, mtime, updated, *EMPTY, inode=path.stat().st_ino)
        with self.temporary() as temporary:
            md5, crc = hashlib.md5(usedforsecurity=False), google_crc32c.Checksum()
            with open(temporary, "wb", opener=open_no_follow) as file:
                while chunk := source.read(_CHUNK):
                    file.write(chunk)
                    md5.update(chunk)
                    crc.update(chunk)
            for given in declared:
                _check_declared(given, encode(md5, crc), name)
            self._place(temporary, path, name)
        self.checksums.remember(path.stat(), encode(md5, crc))
        return self.info(bucket, name)

    def delete(self, bucket: str, name: str) -> None:
        """Remove the object; NOT_FOUND when it is not there."""
        self.info(bucket, name)
        path = self.object_path(bucket, name)
        with self._folder_of(path, name) as folder:
            os.unlink(path.name, dir_fd=folder)  # the name itself: a link is removed, not followed
        self._prune(path.parent, self.bucket_dir(bucket))

    def list(
        self, bucket: str, prefix: str = "", delimiter: str = "", start_after: str = ""
    ) -> Iterator[tuple[str, bool]]:
        """(name, is_prefix) in name order after `start_after`: objects, and with a delimiter
        the distinct prefixes that end at it (as the JSON API's `items` and `prefixes`).

        A bucket never made lists as empty unless strict: an upload client asks first what is
        there (`gcloud storage cp` lists the destination), and the upload then makes it."""
        folder = self.bucket_dir(bucket)
        check_list_argument("prefix", prefix, directory=True)
        check_list_argument("delimiter", delimiter)
        check_list_argument("pageToken", start_after)
        if not folder.is_dir() and not self.strict:
            return
        folder = self.existing_bucket(bucket)
        last_prefix = ""
        for name in self._sorted_files(folder, prefix):
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
        """The file to send for a media download (after `info` said it exists): its real path,
        links resolved, so the sender opens what was checked, not a link to follow again."""
        return Path(os.path.realpath(self.object_path(bucket, name)))

    @contextlib.contextmanager
    def reading(self, bucket: str, name: str) -> Iterator[BinaryIO]:
        """The object's file open for reading, checked by what was opened: a link swapped in
        after `object_path` looked cannot make this read a file outside the root."""
        path = self.object_path(bucket, name)
        try:
            file = open(path, "rb")  # noqa: SIM115 (closed below)
        except OSError:
            raise errors.not_found(f"No such object: {bucket}/{name}") from None
        with file:
            if not storage.real_is_inside(self._real_root(), _real_path(file.fileno(), path)):
                raise _outside(name)
            yield file

    def temporary(self) -> "_Temporary":
        """A temporary file on the root's file system, removed unless renamed into place."""
        return _Temporary(self.uploads_dir())

    def uploads_dir(self) -> Path:
        """`<root>/.vtp-uploads`, made a real folder of the service's own: a link a replica
        planted there (it shares the root) is removed, so temporaries and upload sessions never
        land in, and stale-file clean-up never removes from, a folder outside the root."""
        folder = self.root / UPLOADS_DIR
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            folder.unlink()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return folder

    # -- internals -------------------------------------------------------------------------

    def _place(self, temporary: Path, path: Path, name: str) -> None:
        """Rename `temporary` to `path`, into the folder checked by its descriptor."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                raise NotADirectoryError
            with self._folder_of(path, name) as folder:
                os.replace(temporary, path.name, dst_dir_fd=folder)
        except (NotADirectoryError, FileExistsError, IsADirectoryError):
            raise errors.ApiError(
                9,
                f"Object {name!r} cannot be stored: the local storage root keeps objects as "
                "files, and one of its folders is already an object (or it is a folder).",
                http_status=409,
            ) from None
        except OSError as exc:  # a link loop, a folder removed meanwhile: the name is at fault
            raise errors.invalid_argument(
                f"Object {name!r} cannot be stored under the local storage root: {exc.strerror}."
            ) from None

    @contextlib.contextmanager
    def _folder_of(self, path: Path, name: str) -> Iterator[int]:
        """A descriptor of `path`'s folder, once its real path is known to be inside the root:
        renames and removals relative to it cannot be redirected by a link swapped in later."""
        try:
            folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            raise errors.not_found(f"No such object: {name}") from None
        try:
            if not storage.real_is_inside(self._real_root(), _real_path(folder, path.parent)):
                raise _outside(name)
            yield folder
        finally:
            os.close(folder)

    def _real_root(self) -> str:
        return os.path.realpath(self.root)

    def _sorted_files(self, folder: Path, prefix: str) -> Sequence[str]:
        """`_files`, sorted; a 400 naming the limit past `buckets.MAX_WALKED` entries."""
        try:
            return sorted(self._files(folder, prefix))
        except tree_walk.TooManyEntries:
            start = prefix.rpartition("/")[0]
            where = f"gs://{folder.name}/{start + '/' if start else ''}"
            raise errors.invalid_argument(
                f"Listing {where} would walk more than {buckets.MAX_WALKED} files and folders, "
                "the most one listing of the local storage root walks; list a longer prefix."
            ) from None

    def _files(self, folder: Path, prefix: str) -> Iterator[str]:
        """Names of the files under `folder`, walking only the folders `prefix` can match
        (`prefix` checked by `check_list_argument`), within `buckets.object_files`' bounds: a
        tree deeper than a name can go yields what in it could be an object, and one past
        `buckets.MAX_WALKED` entries raises `tree_walk.TooManyEntries`. Links leading out of the
        root are left out: the walk does not descend into linked folders, and a linked file is
        named only when it resolves inside the root."""
        start = prefix.rpartition("/")[0]
        real_root = self._real_root()
        top = folder / start if start else folder
        if not top.is_dir() or not storage.real_is_inside(real_root, os.path.realpath(top)):
            return
        for name, entry in buckets.object_files(folder, start):
            if os.path.islink(entry.path) and not _linked_file_inside(real_root, entry.path):
                continue
            yield name

    @staticmethod
    def _prune(folder: Path, stop: Path) -> None:
        """Remove folders emptied by a delete, up to (not including) the bucket."""
        while folder != stop and folder.is_relative_to(stop):
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent


_REMOVABLE_DEPTH = buckets.MAX_NAME_BYTES // 2
"""Folders deep a bucket may go for `delete_bucket` to remove it: as deep as an object can be.
Deeper is nothing a client of the bucket made, only what a replica left in the storage root: the
409 names it rather than remove it unseen."""


def _cannot_remove(bucket: str) -> errors.ApiError:
    """The 409 for a bucket whose folder is past the bounds of the walk that removes it."""
    return errors.ApiError(
        9,
        f"The bucket {bucket} cannot be deleted here: its folder holds more than "
        f"{buckets.MAX_WALKED} entries or folders {_REMOVABLE_DEPTH} or more deep, past where "
        "any object name reaches; remove them from the local storage root first.",
        http_status=409,
    )


def _remove_empty_bucket(folder: Path, bucket: str) -> None:
    """Remove the folder of a bucket that holds no object; 409 naming the limit when the folders
    a replica left in it go deeper than `_REMOVABLE_DEPTH`, or more than `buckets.MAX_WALKED`
    of them (a walk that never recurses looks first; the removal never recurses either, so one
    made deeper meanwhile still goes)."""
    too_deep = _cannot_remove(bucket)
    walk = tree_walk.Walk(folder, _REMOVABLE_DEPTH, buckets.MAX_WALKED)
    try:
        for _ in walk:
            pass
    except tree_walk.TooManyEntries:
        raise too_deep from None
    if walk.too_deep:
        raise too_deep
    tree_walk.remove_tree(folder)  # never follows links inside it


def name_problem(name: str, whole: bool) -> str:
    """Why `name` cannot be an object name here ("" when it can). With `whole` false, `name` is
    a list prefix: its last segment may be any start of a name (`dir/.` matches `dir/.env`).

    Names are files under the root, so they take the file system's rules as well as Cloud
    Storage's: no empty, `.` or `..` folder segments, and segments of at most 255 bytes (the
    file system's limit), besides `text_problem`'s rules."""
    if whole and not name:
        return "a name is required"
    problem = text_problem(name)
    if problem:
        return problem
    segments = name.split("/")
    folders = segments[:-1]
    if "" in folders or any(s in (".", "..") for s in (segments if whole else folders)):
        return (
            "the local storage root keeps objects as files, so names may not have empty, "
            "'.' or '..' segments"
        )
    longest = max(len(s.encode()) for s in segments)
    if longest > storage.NAME_MAX:
        return (
            f"a segment of {longest} bytes is over the {storage.NAME_MAX} bytes a file name may "
            "have on the local storage root's file system"
        )
    return ""


def text_problem(value: str) -> str:
    """Why no object name here could hold `value` ("" when one could): not UTF-8 (a lone
    surrogate from JSON), over Cloud Storage's 1024 bytes, or NUL, CR, LF or `\\`, which no
    file name here has (and which would otherwise reach headers and paths)."""
    try:
        size = len(value.encode())
    except UnicodeEncodeError:
        return "it is not Unicode text (it has a lone surrogate), so it has no UTF-8 form"
    if size > MAX_NAME_BYTES:
        return f"it is {size} bytes of UTF-8, over Cloud Storage's limit of {MAX_NAME_BYTES}"
    if any(c in value for c in "\0\r\n\\"):
        return "object names here may not have NUL, CR, LF or '\\'"
    return ""


def check_list_argument(field: str, value: str, directory: bool = False) -> None:
    """Refuse, naming `field`, a list argument no object name could match or start with: a
    `prefix` picks the folder the listing walks (`directory`), so it is checked as a name
    would be; the others are only compared with names, so they need only be text a name holds."""
    problem = name_problem(value, whole=False) if directory else text_problem(value)
    if problem:
        raise errors.invalid_argument(f"Invalid {field} {value!r}: {problem}.")


def _check_declared(declared: dict, hashes: tuple[str, str], name: str) -> None:
    """400 naming the field when a declared md5Hash or crc32c is not the data's."""
    for field, actual in zip(("md5Hash", "crc32c"), hashes, strict=True):
        given = declared.get(field)
        if given and given != actual:
            raise errors.invalid_argument(
                f"Provided {field} {given!r} doesn't match calculated {field} {actual!r} "
                f"for object {name!r}: nothing was stored."
            )


def _linked_file_inside(real_root: str, path: str) -> bool:
    """Whether the link `path` leads to a file (not a folder) inside the root."""
    real = os.path.realpath(path)
    return storage.real_is_inside(real_root, real) and not os.path.isdir(real)


def _real_path(descriptor: int, fallback: Path) -> str:
    """The real path of what `descriptor` has open (Linux: /proc/self/fd), else the real path
    of `fallback` (other systems; checked by name, as `path_under` checks)."""
    try:
        return os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:
        return os.path.realpath(fallback)


def _outside(name: str) -> errors.ApiError:
    return errors.invalid_argument(
        f"Invalid object name {name!r}: it leads out of the storage root through a symbolic link."
    )


def open_no_follow(path: str | os.PathLike[str], flags: int) -> int:
    """`os.open` that refuses a symbolic link as the last segment (ELOOP): for the service's own
    files in `.vtp-uploads`, which a replica could swap for a link to a file outside."""
    return os.open(path, flags | os.O_NOFOLLOW, 0o600)


class _Temporary:
    """`with buckets.temporary() as path:` a fresh path, removed on exit if still there."""

    def __init__(self, folder: Path) -> None:
        descriptor, name = tempfile.mkstemp(dir=folder, prefix="upload-")
        os.fchmod(descriptor, 0o600)  # the user's alone, as everything in the state dir
        os.close(descriptor)
        self.path = Path(name)

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *exc: object) -> None:
        self.path.unlink(missing_ok=True)
