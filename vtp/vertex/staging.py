"""Put archives at their Cloud Storage URIs: through the local mapping when it exists, else upload.

A URI is written through `storage.local_path` when Cloud Storage is a directory here: under
`$VTP_GCS_ROOT` (the local service, `vtp run`), or the bucket's Cloud Storage FUSE mount at
`/gcs/<bucket>` (inside Vertex AI). Anywhere else it is uploaded with google-cloud-storage and
the caller's Application Default Credentials. The URIs are content-addressed, so an object that
already exists holds these bytes and is left alone: staging twice writes once.
"""

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vtp.storage import GCS_ROOT_ENV, local_path, split_gcs_uri


class StagingError(Exception):
    """An archive could not be staged; the message says where and why."""


def stage(files: Sequence[tuple[str, bytes]]) -> list[str]:
    """Write each `(uri, data)` whose object does not exist yet; return the URIs written."""
    written = []
    for uri, data in files:
        if _write_local(local_path(uri), data) if _mounted(uri) else _upload(uri, data):
            written.append(uri)
    return written


def _mounted(uri: str) -> bool:
    """Whether to write the file itself: its bucket is there, or storage is a local folder no
    service answers for. A bucket the local service would create on first use is uploaded
    through it instead, so that it logs the bucket's creation as for any client."""
    bucket, _ = split_gcs_uri(uri)
    if local_path(f"gs://{bucket}").is_dir():
        return True
    return bool(os.environ.get(GCS_ROOT_ENV)) and not os.environ.get("STORAGE_EMULATOR_HOST")


def _write_local(path: Path, data: bytes) -> bool:
    if path.is_file():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    # Write then rename, so a reader (or a crash) never sees half an archive.
    fd, temporary = tempfile.mkstemp(prefix=".staging-", dir=path.parent)
    with os.fdopen(fd, "wb") as stream:
        stream.write(data)
    os.replace(temporary, path)
    return True


def _upload(uri: str, data: bytes) -> bool:
    try:
        from google.api_core import exceptions
        from google.cloud import storage as gcs
    except ImportError:
        raise StagingError(
            f"cannot stage {uri}: Cloud Storage is not mounted here and google-cloud-storage "
            f"is not installed (pip install google-cloud-storage, or set {GCS_ROOT_ENV} to a "
            "local directory standing in for Cloud Storage)"
        ) from None
    bucket, name = split_gcs_uri(uri)
    try:
        blob = gcs.Client().bucket(bucket).blob(name)
        if blob.exists():
            return False
        blob.upload_from_string(data, if_generation_match=0)
    except exceptions.PreconditionFailed:
        return False  # staged meanwhile by someone else: same URI, same bytes
    except Exception as exc:  # auth, permissions, a missing bucket: say which and stop
        raise StagingError(f"cannot upload {uri}: {exc}") from None
    return True
