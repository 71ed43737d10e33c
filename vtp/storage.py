"""Cloud Storage URIs as local paths: the one place that maps `gs://bucket/path` to a file path.

On Vertex, Cloud Storage is mounted with Cloud Storage FUSE at `/gcs/<bucket>/<path>`. Locally the
same URIs resolve under a root directory named by `VTP_GCS_ROOT` (the local Vertex service and
`vtp run` set it). The trainer, the components and the local service all go through here, so a
job spec written for Vertex runs unchanged on one machine.
"""

import os
from pathlib import Path

GCS_ROOT_ENV = "VTP_GCS_ROOT"
"""Environment variable naming the local directory that stands in for `/gcs` (Cloud Storage)."""

FUSE_ROOT = "/gcs"
"""Where Vertex mounts Cloud Storage inside every replica."""

_SCHEME = "gs://"


def gcs_root() -> Path:
    """The directory that holds buckets: `$VTP_GCS_ROOT` when set, else Vertex's `/gcs` mount."""
    return Path(os.environ.get(GCS_ROOT_ENV) or FUSE_ROOT)


def is_gcs_uri(uri: str) -> bool:
    """True for `gs://bucket[/path]` URIs."""
    return uri.startswith(_SCHEME)


def split_gcs_uri(uri: str) -> tuple[str, str]:
    """Split `gs://bucket/a/b` into `("bucket", "a/b")`; raise ValueError for anything else,
    and for URIs that could not stay under a root as files (`..` segments, NUL, `\\`)."""
    if not is_gcs_uri(uri):
        raise ValueError(f"not a Cloud Storage URI (expected gs://bucket/path): {uri!r}")
    bucket, _, blob = uri[len(_SCHEME) :].partition("/")
    if not bucket:
        raise ValueError(f"Cloud Storage URI has no bucket: {uri!r}")
    if bucket in (".", "..") or ".." in blob.split("/") or "\0" in uri or "\\" in uri:
        raise ValueError(f"Cloud Storage URI {uri!r} has a '..' segment or a forbidden character")
    return bucket, blob


NAME_MAX = 255
"""Bytes in one path segment (a bucket, or one part of an object name between `/`s) that the
file systems the storage root lives on (ext4, xfs, btrfs, APFS, tmpfs) hold."""

PATH_MAX = 4096
"""Bytes in a whole path, its terminating NUL included, that the kernel takes (Linux)."""


def path_under(root: Path, uri: str) -> Path:
    """`gs://bucket/a/b` as the path `<root>/bucket/a/b`, which is inside `root` with every
    symbolic link resolved; ValueError for anything else (other schemes, plain paths, `..`, a
    link on the way that leads out of the root, a name too long for the file system).

    The check is on the real path because the root is shared with replicas, which can plant
    links in it: lexically `<root>/b/link/x` is inside, but the file it names need not be. A
    link inside the root that points inside the root is followed. The path returned is the
    lexical one (what messages and `gcs_uri` show)."""
    bucket, blob = split_gcs_uri(uri)
    path = Path(os.path.normpath(root / bucket / blob))
    if not path.is_relative_to(os.path.normpath(root)):  # belt and braces: normpath is lexical
        raise ValueError(f"Cloud Storage URI {uri!r} leaves the storage root")
    problem = too_long(path.relative_to(os.path.normpath(root)).parts, path)
    if problem:
        raise ValueError(f"Cloud Storage URI {uri!r} {problem}")
    if not is_inside(root, path):
        raise ValueError(
            f"Cloud Storage URI {uri!r} leads out of the storage root through a symbolic link"
        )
    return path


def too_long(segments: tuple[str, ...] | list[str], path: Path) -> str:
    """Why the file system could not hold `path` whose segments below the root are `segments`
    ("" when it can): the kernel answers ENAMETOOLONG, which must be the caller's 400, not a
    500 halfway through a write."""
    for segment in segments:
        size = len(os.fsencode(segment))
        if size > NAME_MAX:
            return (
                f"has a path segment of {size} bytes, over the {NAME_MAX} bytes a file name "
                "may have on the local storage root's file system"
            )
    size = len(os.fsencode(os.path.abspath(path)))
    if size >= PATH_MAX:
        return (
            f"makes a local path of {size} bytes, over the {PATH_MAX - 1} bytes the local "
            "storage root's file system takes"
        )
    return ""


def is_inside(root: Path, path: Path) -> bool:
    """Whether `path`, every symbolic link in it resolved (those that do not exist yet count as
    plain names), is `root` itself or under it, `root`'s own links resolved too."""
    return real_is_inside(os.path.realpath(root), os.path.realpath(path))


def real_is_inside(real_root: str, real_path: str) -> bool:
    """`is_inside` for paths already resolved (`os.path.realpath`, or what an open file
    descriptor names): a plain string comparison on whole segments."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def local_path(uri: str | os.PathLike[str]) -> Path:
    """The local file path for a `gs://` URI (under `gcs_root()`); other paths pass through."""
    text = os.fspath(uri)
    if not is_gcs_uri(text):
        return Path(text)
    return path_under(gcs_root(), text)


def gcs_uri(path: str | os.PathLike[str]) -> str:
    """The `gs://` URI for a path under `gcs_root()`; raise ValueError for paths outside it."""
    relative = Path(path).resolve().relative_to(gcs_root().resolve())
    if not relative.parts:
        raise ValueError(f"{path} is the Cloud Storage root itself, not a bucket or object")
    return _SCHEME + relative.as_posix()
