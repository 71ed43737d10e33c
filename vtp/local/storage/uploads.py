"""The JSON API's three upload protocols, over `objects.Buckets`.

- `uploadType=media`: the body is the object (its name in the query).
- `uploadType=multipart`: a multipart/related body, JSON metadata then the data (parsed with the
  standard library's MIME parser, which keeps binary parts byte for byte).
- `uploadType=resumable`: POST the metadata, get a session URI (`Location`), then PUT the data in
  one or more chunks with `Content-Range`. Sessions live as files beside the upload temporaries
  (`<root>/.vtp-uploads/session-<id>.{json,part}`), so they survive a service restart; a
  session answers 308 with the `Range` it holds until the last byte arrives, then the object.

A session id names files, so every use checks it first (`session_files`), cancelling included:
an id is what `start` makes, nothing else. The session files are opened without following a
link as their last segment, because replicas share the root and could swap one for a link to a
file outside it; the folder itself is `Buckets.uploads_dir`, never a link.
"""

import email.policy
import json
import os
import re
import secrets
import shutil
import time
from dataclasses import dataclass
from email.message import Message
from email.parser import BytesParser
from pathlib import Path

from vtp.local.base import errors, stored_files
from vtp.local.storage.objects import Buckets, ObjectInfo, Readable, open_no_follow

MAX_MULTIPART_BYTES = 64 << 20
"""Largest multipart upload body (clients switch to resumable uploads well below this)."""

_CONTENT_RANGE = re.compile(r"bytes (?:(?P<first>\d+)-(?P<last>\d+)|\*)/(?P<total>\d+|\*)")
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


def metadata_from(body: bytes) -> dict:
    """The JSON object of an upload's metadata; INVALID_ARGUMENT otherwise."""
    try:
        value = json.loads(body or b"{}")
    except (ValueError, RecursionError) as exc:
        raise errors.invalid_argument(f"Invalid JSON object metadata: {exc}") from None
    if not isinstance(value, dict):
        raise errors.invalid_argument("Invalid object metadata: expected a JSON object.")
    return value


def object_name(query: dict[str, list[str]], metadata: dict) -> str:
    """The object name from the `name` query parameter or the metadata's `name`."""
    name = query.get("name", [""])[0] or metadata.get("name") or ""
    if not isinstance(name, str) or not name:
        raise errors.invalid_argument("Required parameter: name (the object's name).")
    return name


def split_multipart(content_type: str, body: bytes) -> tuple[dict, bytes]:
    """(metadata, data) of a multipart/related upload body."""
    if len(body) > MAX_MULTIPART_BYTES:
        raise errors.ApiError(
            errors.INVALID_ARGUMENT,
            f"Multipart upload of {len(body)} bytes is over {MAX_MULTIPART_BYTES}: use a "
            "resumable upload.",
            http_status=413,
        )
    # gcloud (apitools) quotes the boundary in single quotes, which MIME does not know.
    content_type = re.sub(r"boundary='([^']*)'", r'boundary="\1"', content_type)
    header = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = BytesParser(policy=email.policy.HTTP).parsebytes(header + body)
    parts = list(message.iter_parts()) if message.is_multipart() else []
    if len(parts) != 2:
        raise errors.invalid_argument(
            "Invalid multipart upload: expected a multipart/related body of two parts, "
            "the JSON metadata and the object's data."
        )
    metadata = metadata_from(_data(parts[0]))
    if not metadata.get("contentType") and parts[1].get("Content-Type"):
        metadata["contentType"] = parts[1].get_content_type()  # the media part's, as GCS takes
    return metadata, _data(parts[1])


def goog_hash(header: str) -> dict[str, str]:
    """`X-Goog-Hash: crc32c=...,md5=...` as the resource's crc32c / md5Hash fields."""
    fields = {"crc32c": "crc32c", "md5": "md5Hash"}
    found = (item.strip().partition("=") for item in header.split(",") if "=" in item)
    return {fields[key]: value for key, _, value in found if key in fields and value}


def _data(part: Message) -> bytes:
    """A MIME part's decoded bytes (b"" for a part that is itself multipart)."""
    payload = part.get_payload(decode=True)
    return payload if isinstance(payload, bytes) else b""


@dataclass(frozen=True)
class Chunk:
    """One PUT to a resumable session: the bytes [first, last] of `total` (None: unknown)."""

    first: int | None
    last: int | None
    total: int | None

    @classmethod
    def parse(cls, header: str, length: int) -> "Chunk":
        """From `Content-Range` (absent: the whole object in this one request)."""
        if not header:
            return cls(0, length - 1, length) if length else cls(None, None, 0)
        match = _CONTENT_RANGE.fullmatch(header.strip())
        if not match:
            raise errors.invalid_argument(
                f"Invalid Content-Range {header!r}: expected 'bytes FIRST-LAST/TOTAL', "
                "'bytes FIRST-LAST/*' or 'bytes */TOTAL'."
            )
        total = None if match["total"] == "*" else int(match["total"])
        if match["first"] is None:
            return cls(None, None, total)
        first, last = int(match["first"]), int(match["last"])
        if last < first or last - first + 1 != length:
            raise errors.invalid_argument(
                f"Invalid Content-Range {header!r}: it names {last - first + 1} bytes, the "
                f"request carries {length}."
            )
        return cls(first, last, total)


class Sessions:
    """Resumable upload sessions of one storage root."""

    def __init__(self, buckets: Buckets) -> None:
        self.buckets = buckets

    def session_files(self, session: str) -> tuple[Path, Path]:
        """The record (`.json`) and bytes (`.part`) files of `session`; INVALID_ARGUMENT,
        naming upload_id, for an id `start` could not have made (a `../` in it would reach
        outside the uploads folder)."""
        if not _SESSION_ID.fullmatch(session):
            raise errors.invalid_argument(
                f"Invalid upload_id {session!r}: expected the id the upload's start returned "
                "(16-64 letters, digits, '-' and '_')."
            )
        folder = self.buckets.uploads_dir()
        return folder / f"session-{session}.json", folder / f"session-{session}.part"

    def start(
        self, bucket: str, name: str, query: dict[str, list[str]], metadata: dict | None = None
    ) -> str:
        """A new session for object `name` in `bucket`, which keeps the upload's `metadata` (the
        object resource the client sent) until the last byte; its ID."""
        self.buckets.object_path(bucket, name)  # refuse bad names now, not at the last chunk
        self.buckets.bucket_to_write(bucket, f"upload of object {name} started")
        self.buckets.check_generation(bucket, name, query)
        session = secrets.token_urlsafe(24)
        record_file, part = self.session_files(session)
        os.close(open_no_follow(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        conditions = {k: v[0] for k, v in query.items() if k.startswith("ifGeneration")}
        record = {
            "bucket": bucket, "name": name, "conditions": conditions, "metadata": metadata or {},
        }  # fmt: skip
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
        with open(record_file, "w", opener=lambda path, _: open_no_follow(path, flags)) as file:
            file.write(json.dumps(record))
        return session

    def put(
        self, session: str, chunk: Chunk, body: Readable, declared: dict | None = None
    ) -> tuple[int, ObjectInfo | None, dict]:
        """Add a chunk; (bytes held, None, {}) while incomplete, else (size, the new object, the
        metadata its upload started with). `declared`: hashes the last chunk's `X-Goog-Hash`
        gives, checked as well as those of the start (each against the data: the client's own
        hash of the bytes does not stand in for a wrong one its user declared)."""
        record, part = self._open(session)
        try:
            opened = open(part, "r+b", opener=open_no_follow)  # noqa: SIM115 (closed below)
        except OSError:  # swapped for a link, or gone, since `_open` looked
            raise errors.not_found(f"No such upload session: {session}") from None
        with opened as file:
            held = os.fstat(file.fileno()).st_size
            if chunk.first is not None:
                if chunk.first > held:  # a gap: the client resends from what we hold
                    return held, None, {}
                file.truncate(chunk.first)
                file.seek(chunk.first)
                shutil.copyfileobj(body, file, 1 << 20)
                file.flush()
                held = os.fstat(file.fileno()).st_size
        if chunk.total is None or held < chunk.total:
            return held, None, {}
        if held > chunk.total:
            raise errors.invalid_argument(
                f"Upload session holds {held} bytes, more than the total {chunk.total}."
            )
        query = {k: [v] for k, v in record["conditions"].items()}
        self.buckets.check_generation(record["bucket"], record["name"], query)
        metadata = record.get("metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        try:
            with open(part, "rb", opener=open_no_follow) as source:
                expected = (metadata, declared or {})
                info = self.buckets.write(record["bucket"], record["name"], source, expected)
        except errors.ApiError:
            self.cancel(session)  # a checksum that does not match ends the session, as on GCS
            raise
        self.cancel(session)
        return held, info, metadata

    def cancel(self, session: str) -> None:
        """Forget a session and its bytes (a link in their place is removed, not followed)."""
        for path in self.session_files(session):
            path.unlink(missing_ok=True)

    def _open(self, session: str) -> tuple[dict, Path]:
        """The session's record and bytes file; NOT_FOUND when either is missing or is not a
        plain file (a link a replica put there)."""
        record_file, part = self.session_files(session)
        try:  # a planted FIFO, huge or deep file is no session either (StoredFileError)
            text = stored_files.read_text(record_file.parent, record_file, 1 << 16, session)
            record = json.loads(text)
        except (ValueError, RecursionError):
            raise errors.not_found(f"No such upload session: {session}") from None
        if (
            not part.is_file()
            or part.is_symlink()
            or not isinstance(record, dict)
            or not isinstance(record.get("bucket"), str)
            or not isinstance(record.get("name"), str)
            or not isinstance(record.get("conditions"), dict)
        ):
            raise errors.not_found(f"No such upload session: {session}")
        return record, part


def remove_stale(buckets: Buckets, older_than_seconds: float = 7 * 86400) -> None:
    """Drop upload temporaries and sessions untouched for a week (Cloud Storage's limit)."""
    folder = buckets.uploads_dir()  # never a link: nothing outside the root is removed
    cutoff = time.time() - older_than_seconds
    for path in folder.iterdir():
        try:
            if path.stat().st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            continue
