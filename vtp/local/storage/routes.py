"""The Cloud Storage JSON API's HTTP methods, as google-cloud-storage, gcloud storage and the
aiplatform SDK's staging call them:

    GET|POST         /storage/v1/b                                  buckets.list / insert
    GET|PATCH|DELETE /storage/v1/b/{bucket}                         buckets.get / patch / delete
    GET              /storage/v1/b/{bucket}/storageLayout           getStorageLayout (flat)
    GET|PUT          /storage/v1/b/{bucket}/iam                     IAM policy (kept open)
    GET              /storage/v1/b/{bucket}/o                       objects.list
    GET|PATCH|DELETE /storage/v1/b/{bucket}/o/{object}              get (?alt=media) / delete
    POST   .../o/{object}/copyTo|rewriteTo/b/{bucket}/o/{object}    copy, rewrite
    POST   /storage/v1/b/{bucket}/o/{object}/compose                compose
    POST|PUT         /upload/storage/v1/b/{bucket}/o                insert (media, multipart,
                                                                    resumable sessions)
    GET              /download/storage/v1/b/{bucket}/o/{object}     media (Range supported)

Object names in paths are percent-encoded (a `/` is `%2F`). Errors use Google's JSON shape with
the status codes Cloud Storage uses (404, 409, 412, ...), so clients raise their usual
exceptions. Metadata a client sends (contentType, custom metadata) is accepted and not kept: an
object is only its file.

Objects are served from the service's own origin, where the console lives, so a download must
never be a page: every media reply is an attachment (`Content-Disposition`), `nosniff`,
sandboxed with a CSP that allows nothing, unframeable and readable by the same origin only
(`DOWNLOAD_HEADERS`). Cloud Storage clients ignore these headers.
"""

import base64
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote, unquote

from vtp.local.base import errors
from vtp.local.base.guard import Headers
from vtp.local.base.names import LOCAL_PROJECT_NUMBER
from vtp.local.storage.checksums import Budget
from vtp.local.storage.objects import (
    Buckets,
    ObjectInfo,
    Readable,
    check_list_argument,
    open_no_follow,
)
from vtp.local.storage.uploads import Chunk, Sessions, metadata_from, object_name, split_multipart

PREFIXES = (
    "/storage/v1/",
    "/upload/storage/v1/",
    "/resumable/upload/storage/v1/",  # gcloud storage's path for resumable uploads
    "/download/storage/v1/",
)
"""Paths that belong to the Cloud Storage API."""

MAX_PAGE = 1000

LOCATION = "US-CENTRAL1"
LOCATION_TYPE = "region"
"""Where every bucket here says it is (its resource and its storage layout)."""

DOWNLOAD_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
}
"""What every object download carries besides `Content-Disposition: attachment`: a stored HTML
or SVG file is never rendered, sniffed into script, framed, or embedded by another site."""


def is_storage_path(path: str) -> bool:
    """True for a Cloud Storage JSON API path."""
    return path.startswith(PREFIXES) or path.split("?", 1)[0] == "/storage/v1/b"


@dataclass
class StorageRequest:
    """One Cloud Storage request: the body is read from `body` (at most `length` bytes)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: Headers
    body: Readable
    length: int
    params: dict[str, str] = field(default_factory=dict)

    def arg(self, key: str, default: str = "") -> str:
        """The first value of query parameter `key`."""
        return self.query.get(key, [default])[0]

    @property
    def base(self) -> str:
        """`http://host:port` as the client addressed the service."""
        return f"http://{self.headers.get('Host', '127.0.0.1')}"

    def json(self) -> dict:
        """The body as a JSON object."""
        return metadata_from(self.body.read(min(self.length, 1 << 20)))


@dataclass
class Reply:
    """An answer: JSON or bytes in `body`, or a byte range of `file`."""

    status: int = 200
    body: bytes = b""
    content_type: str = "application/json; charset=UTF-8"
    headers: dict[str, str] = field(default_factory=dict)
    file: Path | None = None
    offset: int = 0
    length: int = 0

    @classmethod
    def of(
        cls, value: dict, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> "Reply":
        """A JSON reply."""
        return cls(status=status, body=json.dumps(value).encode(), headers=dict(headers or {}))


_Handler = Callable[[StorageRequest], Reply]
_SEG = "[^/]+"


class StorageApi:
    """The JSON API over one storage root."""

    def __init__(self, root: Path, strict_buckets: bool = False) -> None:
        """`strict_buckets`: writes to a bucket never made are 404 (`Buckets`)."""
        self.buckets = Buckets(root, strict_buckets)
        self.sessions = Sessions(self.buckets)
        b = f"(?P<bucket>{_SEG})"
        o = f"(?P<object>{_SEG})"
        self._routes: list[tuple[str, re.Pattern, _Handler]] = []
        for method, pattern, handler in (
            ("GET", "/storage/v1/b", self._list_buckets),
            ("POST", "/storage/v1/b", self._insert_bucket),
            ("GET", f"/storage/v1/b/{b}", self._get_bucket),
            ("PATCH", f"/storage/v1/b/{b}", self._get_bucket),
            ("DELETE", f"/storage/v1/b/{b}", self._delete_bucket),
            ("GET", f"/storage/v1/b/{b}/storageLayout", self._storage_layout),
            ("GET", f"/storage/v1/b/{b}/iam", self._get_iam),
            ("PUT", f"/storage/v1/b/{b}/iam", self._set_iam),
            ("GET", f"/storage/v1/b/{b}/o", self._list_objects),
            ("GET", f"/storage/v1/b/{b}/o/{o}", self._get_object),
            ("PATCH", f"/storage/v1/b/{b}/o/{o}", self._get_object),
            ("PUT", f"/storage/v1/b/{b}/o/{o}", self._get_object),
            ("DELETE", f"/storage/v1/b/{b}/o/{o}", self._delete_object),
            (
                "POST",
                f"/storage/v1/b/{b}/o/{o}/(?P<verb>copyTo|rewriteTo)"
                f"/b/(?P<to_bucket>{_SEG})/o/(?P<to_object>{_SEG})",
                self._copy,
            ),
            ("POST", f"/storage/v1/b/{b}/o/{o}/compose", self._compose),
            ("POST", f"(?:/resumable)?/upload/storage/v1/b/{b}/o", self._upload),
            ("PUT", f"(?:/resumable)?/upload/storage/v1/b/{b}/o", self._resume),
            ("DELETE", f"(?:/resumable)?/upload/storage/v1/b/{b}/o", self._cancel_upload),
            ("GET", f"/download/storage/v1/b/{b}/o/{o}", self._media),
        ):
            self._routes.append((method, re.compile(pattern), handler))

    def handle(self, request: StorageRequest) -> Reply:
        """The reply to one request; errors in Google's JSON shape."""
        try:
            for method, pattern, handler in self._routes:
                match = pattern.fullmatch(request.path)
                if match and method == request.method:
                    request.params = {k: unquote(v) for k, v in match.groupdict().items() if v}
                    return handler(request)
            raise errors.not_found(
                f"{request.method} {request.path} is not a Cloud Storage JSON API method the "
                "local service serves (buckets: get, list, insert, delete, storageLayout; objects: "
                "get, list, insert, delete, copy, rewrite, compose)."
            )
        except errors.ApiError as exc:
            return Reply(status=exc.http_status, body=exc.to_json().encode())

    # -- buckets ---------------------------------------------------------------------------

    def _bucket(self, request: StorageRequest, name: str) -> dict:
        folder = self.buckets.existing_bucket(name)
        created = _timestamp(folder.stat().st_mtime_ns)
        return {
            "kind": "storage#bucket",
            "id": name,
            "name": name,
            "selfLink": f"{request.base}/storage/v1/b/{name}",
            "projectNumber": LOCAL_PROJECT_NUMBER,
            "metageneration": "1",
            "location": LOCATION,
            "locationType": LOCATION_TYPE,
            "storageClass": "STANDARD",
            "etag": "CAE=",
            "timeCreated": created,
            "updated": created,
            "iamConfiguration": {
                "uniformBucketLevelAccess": {"enabled": True},
                "publicAccessPrevention": "enforced",
            },
        }

    def _list_buckets(self, request: StorageRequest) -> Reply:
        prefix = request.arg("prefix")
        items = [self._bucket(request, n) for n in self.buckets.bucket_names()]
        return Reply.of(
            {"kind": "storage#buckets", "items": [b for b in items if b["name"].startswith(prefix)]}
        )

    def _insert_bucket(self, request: StorageRequest) -> Reply:
        name = request.json().get("name")
        if not isinstance(name, str) or not name:
            raise errors.invalid_argument("Required field: name (the bucket's name).")
        self.buckets.create_bucket(name)
        return Reply.of(self._bucket(request, name))

    def _get_bucket(self, request: StorageRequest) -> Reply:
        return Reply.of(self._bucket(request, request.params["bucket"]))

    def _storage_layout(self, request: StorageRequest) -> Reply:
        """buckets.getStorageLayout: a flat namespace, never hierarchical (folders here are only
        name prefixes). `gcloud storage cp|rm --recursive` and `ls` of a folder ask before they
        walk a bucket. A bucket never made is flat too unless strict (as `Buckets.list` lists it
        empty): `cp --recursive` to it asks first, and its upload then makes it."""
        name = request.params["bucket"]
        if self.buckets.strict:
            self.buckets.existing_bucket(name)
        else:
            self.buckets.bucket_dir(name)
        return Reply.of(
            {
                "kind": "storage#storageLayout",
                "bucket": name,
                "location": LOCATION,
                "locationType": LOCATION_TYPE,
                "hierarchicalNamespace": {"enabled": False},
            }
        )

    def _delete_bucket(self, request: StorageRequest) -> Reply:
        self.buckets.delete_bucket(request.params["bucket"])
        return Reply(status=204)

    def _get_iam(self, request: StorageRequest) -> Reply:
        bucket = request.params["bucket"]
        self.buckets.existing_bucket(bucket)
        return Reply.of(_policy(bucket, []))

    def _set_iam(self, request: StorageRequest) -> Reply:
        bucket = request.params["bucket"]
        self.buckets.existing_bucket(bucket)
        bindings = request.json().get("bindings") or []
        return Reply.of(_policy(bucket, bindings if isinstance(bindings, list) else []))

    # -- objects ---------------------------------------------------------------------------

    def _object(self, request: StorageRequest, info: ObjectInfo) -> dict:
        path = f"b/{info.bucket}/o/{quote(info.name, safe='')}"
        updated = _timestamp(info.generation)
        return {
            "kind": "storage#object",
            "id": f"{info.bucket}/{info.name}/{info.generation}",
            "selfLink": f"{request.base}/storage/v1/{path}",
            "mediaLink": f"{request.base}/download/storage/v1/{path}"
            f"?generation={info.generation}&alt=media",
            "name": info.name,
            "bucket": info.bucket,
            "generation": str(info.generation),
            "metageneration": "1",
            "contentType": info.content_type,
            "storageClass": "STANDARD",
            "size": str(info.size),
            **_hash_fields(info),
            "etag": base64.b64encode(str(info.generation).encode()).decode(),
            "timeCreated": updated,
            "updated": updated,
            "timeStorageClassUpdated": updated,
        }

    def _info(self, request: StorageRequest, bucket: str = "", name: str = "") -> ObjectInfo:
        bucket = bucket or request.params["bucket"]
        name = name or request.params["object"]
        return self.buckets.info(bucket, name, request.arg("generation"))

    def _get_object(self, request: StorageRequest) -> Reply:
        if request.arg("alt") == "media":
            return self._media(request)
        info = self._info(request)
        self.buckets.check_generation(info.bucket, info.name, request.query)
        return Reply.of(self._object(request, info))

    def _delete_object(self, request: StorageRequest) -> Reply:
        bucket, name = request.params["bucket"], request.params["object"]
        self.buckets.check_generation(bucket, name, request.query)
        self.buckets.delete(bucket, name)
        return Reply(status=204)

    def _list_objects(self, request: StorageRequest) -> Reply:
        bucket = request.params["bucket"]
        size = request.arg("maxResults", str(MAX_PAGE))
        if not (size.isascii() and size.isdigit()) or int(size) < 1:
            raise errors.invalid_argument(f"Invalid maxResults {size!r}: expected an integer > 0.")
        page = min(int(size), MAX_PAGE)
        after = _token(request.arg("pageToken"))
        start, end = request.arg("startOffset"), request.arg("endOffset")
        check_list_argument("startOffset", start)
        check_list_argument("endOffset", end)
        items: list[dict] = []
        prefixes: list[str] = []
        last = ""
        listing = self.buckets.list(bucket, request.arg("prefix"), request.arg("delimiter"), after)
        budget = Budget()  # one for the page: hashes past it are left out, found later
        for name, is_prefix in listing:
            if start and name < start:
                continue
            if end and name >= end:
                break
            if len(items) + len(prefixes) == page:
                body = self._page(items, prefixes)
                body["nextPageToken"] = base64.urlsafe_b64encode(last.encode()).decode()
                return Reply.of(body)
            last = name
            if is_prefix:
                prefixes.append(name)
            else:
                try:
                    info = self.buckets.info(bucket, name, budget=budget)
                    items.append(self._object(request, info))
                except errors.ApiError:  # deleted while listing
                    continue
        return Reply.of(self._page(items, prefixes))

    @staticmethod
    def _page(items: list[dict], prefixes: list[str]) -> dict:
        body: dict = {"kind": "storage#objects"}
        if items:
            body["items"] = items
        if prefixes:
            body["prefixes"] = prefixes
        return body

    def _copy(self, request: StorageRequest) -> Reply:
        source = self._info(request)
        to_bucket, to_name = request.params["to_bucket"], request.params["to_object"]
        self.buckets.check_generation(to_bucket, to_name, request.query)
        self.buckets.object_path(to_bucket, to_name)  # refuse a bad target before reading
        with self.buckets.reading(source.bucket, source.name) as file:
            info = self.buckets.write(to_bucket, to_name, file)
        resource = self._object(request, info)
        if request.params["verb"] == "copyTo":
            return Reply.of(resource)
        size = str(info.size)
        return Reply.of(
            {
                "kind": "storage#rewriteResponse",
                "totalBytesRewritten": size,
                "objectSize": size,
                "done": True,
                "resource": resource,
            }
        )

    def _compose(self, request: StorageRequest) -> Reply:
        bucket, name = request.params["bucket"], request.params["object"]
        sources = request.json().get("sourceObjects")
        if not isinstance(sources, list) or not 1 <= len(sources) <= 32:
            raise errors.invalid_argument("Invalid sourceObjects: expected 1 to 32 objects.")
        given = [s.get("name") if isinstance(s, dict) else None for s in sources]
        names = [n for n in given if isinstance(n, str) and n]
        if len(names) != len(given):
            raise errors.invalid_argument("Invalid sourceObjects: each needs a name.")
        for part_name in names:
            self.buckets.info(bucket, part_name)
        self.buckets.object_path(bucket, name)  # refuse a bad target before reading
        self.buckets.check_generation(bucket, name, request.query)
        with self.buckets.temporary() as temporary:
            with open(temporary, "wb", opener=open_no_follow) as out:
                for part_name in names:
                    with self.buckets.reading(bucket, part_name) as part:
                        while chunk := part.read(1 << 20):
                            out.write(chunk)
            with open(temporary, "rb") as joined:
                info = self.buckets.write(bucket, name, joined)
        return Reply.of(self._object(request, info))

    # -- media -----------------------------------------------------------------------------

    def _media(self, request: StorageRequest) -> Reply:
        info = self._info(request)
        headers = {
            **_hash_header(info),
            "x-goog-generation": str(info.generation),
            "x-goog-metageneration": "1",
            "x-goog-stored-content-length": str(info.size),
            "x-goog-stored-content-encoding": "identity",
            "Accept-Ranges": "bytes",
            "Content-Disposition": attachment(info.name),
            **DOWNLOAD_HEADERS,
        }
        path = self.buckets.open(info.bucket, info.name)
        span = _range(request.headers.get("Range", ""), info.size)
        if span is None:
            return Reply(
                file=path, length=info.size, content_type=info.content_type, headers=headers
            )
        first, last = span
        if first >= info.size:
            headers["Content-Range"] = f"bytes */{info.size}"
            return Reply(status=416, headers=headers)
        headers["Content-Range"] = f"bytes {first}-{last}/{info.size}"
        return Reply(
            status=206,
            file=path,
            offset=first,
            length=last - first + 1,
            content_type=info.content_type,
            headers=headers,
        )

    def _upload(self, request: StorageRequest) -> Reply:
        bucket = request.params["bucket"]
        kind = request.arg("uploadType", "media")
        if kind == "resumable":
            metadata = request.json()
            name = object_name(request.query, metadata)
            session = self.sessions.start(bucket, name, request.query)
            location = (
                f"{request.base}/upload/storage/v1/b/{quote(bucket, safe='')}/o"
                f"?uploadType=resumable&upload_id={session}"
            )
            return Reply(headers={"Location": location, "X-GUploader-UploadID": session})
        if kind == "multipart":
            data = request.body.read(request.length)
            metadata, content = split_multipart(request.headers.get("Content-Type", ""), data)
            name = object_name(request.query, metadata)
            self.buckets.check_generation(bucket, name, request.query)
            info = self.buckets.write(bucket, name, io.BytesIO(content))
            return Reply.of(self._object(request, info))
        if kind == "media":
            name = object_name(request.query, {})
            self.buckets.check_generation(bucket, name, request.query)
            info = self.buckets.write(bucket, name, request.body)
            return Reply.of(self._object(request, info))
        raise errors.invalid_argument(
            f"Invalid uploadType {kind!r}: expected media, multipart or resumable."
        )

    def _resume(self, request: StorageRequest) -> Reply:
        session = request.arg("upload_id")
        chunk = Chunk.parse(request.headers.get("Content-Range", ""), request.length)
        held, info = self.sessions.put(session, chunk, request.body)
        if info is None:
            headers = {"Range": f"bytes=0-{held - 1}"} if held else {}
            return Reply(status=308, headers=headers)
        return Reply.of(self._object(request, info))

    def _cancel_upload(self, request: StorageRequest) -> Reply:
        self.sessions.cancel(request.arg("upload_id"))  # checks the id first
        return Reply(status=499)


def _policy(bucket: str, bindings: list) -> dict:
    return {
        "kind": "storage#policy",
        "resourceId": f"projects/_/buckets/{bucket}",
        "version": 1,
        "etag": "CAE=",
        "bindings": bindings,
    }


def attachment(name: str) -> str:
    """`Content-Disposition` for object `name`: an attachment, never shown inline, named by the
    name's last segment: plainly (ASCII letters, digits, `.`, `_`, `-`; anything else `_`) for
    old clients, and exactly in RFC 8187's percent-encoded UTF-8. Neither form can hold a quote,
    `;` or a line break, so the name cannot add parameters or headers."""
    base = name.rstrip("/").rpartition("/")[2] or "download"
    plain = re.sub(r"[^A-Za-z0-9._-]", "_", base)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(base, safe='')}"


def _token(token: str) -> str:
    if not token:
        return ""
    try:
        return base64.urlsafe_b64decode(token.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        raise errors.invalid_argument(f"Invalid pageToken {token!r}.") from None


def _range(header: str, size: int) -> tuple[int, int] | None:
    """(first, last) of a `Range: bytes=...` header; None for the whole object, which is also
    the answer to a range whose last byte comes before its first (RFC 9110: an invalid range
    header is ignored)."""
    match = re.fullmatch(r"bytes=(\d*)-(\d*)", header.strip())
    if not match or not (match[1] or match[2]):
        return None
    if not match[1]:  # the last N bytes
        return max(size - int(match[2]), 0), size - 1
    first = int(match[1])
    if match[2] and int(match[2]) < first:
        return None
    last = min(int(match[2]), size - 1) if match[2] else size - 1
    return first, last


def _hash_fields(info: ObjectInfo) -> dict[str, str]:
    """`md5Hash` and `crc32c` of an object's resource, those known (optional in the JSON API)."""
    fields = {"md5Hash": info.md5, "crc32c": info.crc32c}
    return {key: value for key, value in fields.items() if value}


def _hash_header(info: ObjectInfo) -> dict[str, str]:
    """`x-goog-hash` of a media download, when its hashes are known (clients check it then)."""
    if not (info.md5 and info.crc32c):
        return {}
    return {"x-goog-hash": f"crc32c={info.crc32c},md5={info.md5}"}


def _timestamp(nanoseconds: int) -> str:
    moment = datetime.fromtimestamp(nanoseconds / 1e9, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
