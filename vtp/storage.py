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


def path_under(root: Path, uri: str) -> Path:
    """`gs://bucket/a/b` as the path `<root>/bucket/a/b`, which is always inside `root`;
    ValueError for anything else (other schemes, plain paths, `..`)."""
    bucket, blob = split_gcs_uri(uri)
    path = Path(os.path.normpath(root / bucket / blob))
    if not path.is_relative_to(os.path.normpath(root)):  # belt and braces: normpath is lexical
        raise ValueError(f"Cloud Storage URI {uri!r} leaves the storage root")
    return path


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
