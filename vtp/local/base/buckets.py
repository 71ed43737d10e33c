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
"""

import logging
import re
from pathlib import Path

from vtp import storage
from vtp.local.base import errors

_log = logging.getLogger(__name__)

BUCKET_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")
"""The bucket names Cloud Storage takes (3-222 characters): the only ones the JSON API serves."""


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
