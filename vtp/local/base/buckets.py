"""The one bucket rule, for every client and every resource: a bucket a request writes to is
made on first use.

On Vertex a team's buckets exist before its code runs; locally nobody made them, so an unchanged
script (`aiplatform.init(staging_bucket="gs://my-bucket")`, a pipeline root, a job's
`baseOutputDirectory`, `gcloud storage cp`) would meet Cloud Storage's 404. By default a bucket
that a request names for writing is created then, with one line in the service's log naming it.
Reading from a bucket that was never written stays a 404. `vtp local serve --strict-buckets`
(`ServiceConfig.strict_buckets`) keeps Cloud Storage's 404 for writes too.

The storage JSON API (`vtp.local.storage`) and every Vertex resource that takes a `gs://` path
to write under (custom jobs, pipeline jobs, batch prediction) call `ensure_bucket` or
`ensure_bucket_of`, so REST, gRPC, gcloud and the SDK meet the same rule.

A bucket's objects are the files under its folder, which replicas write as they like, so every
walk over them (listings, wildcard inputs) is `object_files`: iterative and bounded
(`vtp.engine.tree_walk`). It goes no deeper than an object name can (1,024 bytes), so a tree a
replica made thousands of folders deep lists as what in it can be an object; past `MAX_WALKED`
entries it raises `tree_walk.TooManyEntries`, which the caller turns into its 4xx naming it.
"""

import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path

from vtp import storage
from vtp.engine import tree_walk
from vtp.local.base import errors

_log = logging.getLogger(__name__)

BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")
"""The bucket names Cloud Storage takes (3-222 characters): the only ones the JSON API serves."""

MAX_NAME_BYTES = 1024
"""Cloud Storage's limit on an object name, in bytes of UTF-8."""

MAX_WALKED = 1_000_000
"""Files and folders one walk over a bucket (a listing's page, a wildcard's match) meets at
most: past it the caller refuses, naming the limit, rather than walk on without end."""

_MAX_DEPTH = MAX_NAME_BYTES // 2
"""Folders deep an object can be: each folder of a name costs a byte and a `/`."""


def missing_bucket(bucket: str) -> errors.ApiError:
    """Cloud Storage's 404 for a bucket that does not exist."""
    return errors.not_found(f"The specified bucket does not exist: {bucket}")


def ensure_bucket(folder: Path, bucket: str, strict: bool, why: str) -> Path:
    """The bucket's `folder` (under the storage root), made now when it is not there: one log
    line names it and `why` (what named it). With `strict`, NOT_FOUND instead."""
    if folder.is_dir():
        return folder
    if strict:
        raise missing_bucket(bucket)
    try:
        folder.mkdir(parents=True)
    except FileExistsError:  # another request made it meanwhile (or a file is there)
        if not folder.is_dir():
            raise
        return folder
    _log.info("bucket gs://%s created on first use (%s)", bucket, why)
    return folder


def ensure_bucket_of(root: Path, uri: str, strict: bool, why: str) -> None:
    """`ensure_bucket` for the bucket of `gs://` URI `uri` under storage `root`; ValueError for a
    URI that is not one (or leaves the root), which callers turn into a 400 naming the field.

    The bucket's name is not checked against Cloud Storage's rules here: a replica writing under
    such a path makes the folder all the same, so refusing it would only break what worked."""
    bucket, _ = storage.split_gcs_uri(uri)
    ensure_bucket(storage.path_under(root, f"gs://{bucket}"), bucket, strict, why)


def object_files(
    bucket_dir: Path, start: str = "", levels: int | None = None
) -> Iterator[tuple[str, tree_walk.Entry]]:
    """(object name, entry) of every file and link under `bucket_dir`, from its folder `start`
    (a name's leading folders, "" for all) down, in no particular order; none when `start` is not
    a folder. Folders are never entered through a link, nor below the depth where a name would
    pass `MAX_NAME_BYTES`: nothing there can be an object. `levels`: names at most that many
    levels below `start` (a wildcard whose parts cannot reach further need not walk there).
    TooManyEntries past `MAX_WALKED`."""
    base = str(bucket_dir)
    top = os.path.join(base, start) if start else base
    if not os.path.isdir(top):
        return
    cut = len(base) + 1

    def could_hold_an_object(entry: tree_walk.Entry) -> bool:
        return len(os.fsencode(entry.path[cut:])) + 2 <= MAX_NAME_BYTES  # "/" and one byte more

    depth = _MAX_DEPTH - (start.count("/") + 1 if start else 0)
    if levels is not None:
        depth = min(depth, levels)
    for entry in tree_walk.Walk(top, max(depth, 0), MAX_WALKED, could_hold_an_object):
        if not entry.is_dir:
            yield entry.path[cut:], entry
