"""What Cloud Storage keeps besides an object's bytes and a bucket's folder: records under
`<root>/.vtp-meta/` (no bucket can have that name), never beside the files themselves.

- a bucket's record (`buckets/<name>.json`): the fields clients set (labels, lifecycle,
  versioning, storageClass, retentionPolicy, ...) and its metageneration;
- an object's record (`objects/<bucket>/<sha256 of the name>.json`): the fields clients set
  (contentType, metadata, cacheControl, holds, ...), its metageneration, and the version of the
  file it describes (device, inode, size, mtime). A file written on disk (a replica's) is a new
  version, so it meets no record and reads as an object nobody described: metadata derived
  from the file alone, as before records existed.

Record names are fixed or hashes, never the object's name, so no name reaches a path. The
folder is the service's own: a link a replica planted there is removed (as `.vtp-uploads`), and
records are read with `stored_files`' checks (bounded, plain files only); one that is not a
record of the expected shape counts as none. Writes are atomic (temporary file, rename).
"""

import hashlib
import json
import os
import tempfile
from pathlib import Path

from vtp.local.base import errors, stored_files

META_DIR = ".vtp-meta"
MAX_RECORD_BYTES = 1 << 20

OBJECT_FIELDS = frozenset(
    {
        "contentType", "contentEncoding", "contentDisposition", "contentLanguage",
        "cacheControl", "metadata", "customTime", "storageClass", "temporaryHold",
        "eventBasedHold", "retention", "acl", "kmsKeyName", "contexts",
    }
)  # fmt: skip
"""Object fields a client may set (objects.insert, patch, update, rewrite, compose)."""

BUCKET_FIELDS = frozenset(
    {
        "labels", "lifecycle", "versioning", "storageClass", "location", "rpo", "autoclass",
        "retentionPolicy", "defaultEventBasedHold", "iamConfiguration", "billing", "cors",
        "website", "logging", "encryption", "customPlacementConfig", "softDeletePolicy",
        "hierarchicalNamespace", "ipFilter", "acl", "defaultObjectAcl", "objectRetention",
    }
)  # fmt: skip
"""Bucket fields a client may set (buckets.insert, patch, update)."""

Version = list[int]


class Records:
    """The records of one storage root."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def folder(self) -> Path:
        """`<root>/.vtp-meta`, a real folder of the service's own."""
        folder = self.root / META_DIR
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            folder.unlink()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return folder

    def bucket(self, bucket: str) -> dict:
        """The bucket's record: {"metageneration": n, "fields": {...}} ({} when none)."""
        return self._read(self._bucket_path(bucket))

    def put_bucket(self, bucket: str, record: dict) -> None:
        """Replace the bucket's record."""
        self._write(self._bucket_path(bucket), record)

    def drop_bucket(self, bucket: str) -> None:
        """Forget the bucket's record and its objects' records."""
        self._bucket_path(bucket).unlink(missing_ok=True)
        objects = self.folder() / "objects" / _digest(bucket)
        if objects.is_dir() and not objects.is_symlink():
            for path in objects.iterdir():
                path.unlink(missing_ok=True)
            objects.rmdir()

    def object(self, bucket: str, name: str, version: Version) -> dict:
        """The object's record for this file version ({} when none, or for another version)."""
        record = self._read(self._object_path(bucket, name))
        if record.get("name") != name or record.get("version") != version:
            return {}
        return record

    def put_object(self, bucket: str, name: str, version: Version, record: dict) -> None:
        """Keep `record` (metageneration, fields) for this version of the object's file."""
        self._write(self._object_path(bucket, name), {**record, "name": name, "version": version})

    def drop_object(self, bucket: str, name: str) -> None:
        """Forget the object's record."""
        self._object_path(bucket, name).unlink(missing_ok=True)

    def _bucket_path(self, bucket: str) -> Path:
        return self.folder() / "buckets" / f"{_digest(bucket)}.json"

    def _object_path(self, bucket: str, name: str) -> Path:
        return self.folder() / "objects" / _digest(bucket) / f"{_digest(name)}.json"

    def _read(self, path: Path) -> dict:
        try:
            text = stored_files.read_text(self.root, path, MAX_RECORD_BYTES, "a metadata record")
            record = json.loads(text)
        except (ValueError, RecursionError):  # none, or not one of ours: no record
            return {}
        ok = isinstance(record, dict) and isinstance(record.get("fields", {}), dict)
        return record if ok else {}

    def _write(self, path: Path, record: dict) -> None:
        data = json.dumps(record).encode()
        if len(data) > MAX_RECORD_BYTES:
            raise errors.invalid_argument(
                f"Metadata of {len(data)} bytes is over the {MAX_RECORD_BYTES} the local "
                "service keeps per object or bucket."
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".record-")
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, path)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def writable(body: dict, allowed: frozenset[str], what: str) -> dict:
    """The settable fields of a request body; INVALID_ARGUMENT naming a field of the wrong
    JSON type (metadata and labels: objects of strings)."""
    fields = {key: value for key, value in body.items() if key in allowed}
    for key in ("metadata", "labels"):
        value = fields.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or not all(
            isinstance(v, str | int | float | bool) or v is None for v in value.values()
        ):
            raise errors.invalid_argument(
                f"Invalid {what} field {key}: expected a JSON object of strings."
            )
        fields[key] = {
            k: (v if isinstance(v, str) or v is None else str(v)) for k, v in value.items()
        }
    for key in ("temporaryHold", "eventBasedHold", "defaultEventBasedHold"):
        if key in fields and not isinstance(fields[key], bool | None):
            raise errors.invalid_argument(f"Invalid {what} field {key}: expected true or false.")
    for key, value in fields.items():
        if (
            key not in ("metadata", "labels")
            and value is not None
            and not isinstance(value, str | dict | list | bool | int)
        ):
            raise errors.invalid_argument(f"Invalid {what} field {key}.")
    return fields


def patched(current: dict, changes: dict) -> dict:
    """`current` fields with a patch applied: null removes a field; `metadata` and `labels`
    merge key by key (a null value removes that key)."""
    result = dict(current)
    for key, value in changes.items():
        if value is None:
            result.pop(key, None)
        elif key in ("metadata", "labels") and isinstance(value, dict):
            merged = {**(result.get(key) or {}), **value}
            result[key] = {k: v for k, v in merged.items() if v is not None}
        else:
            result[key] = value
    return result
