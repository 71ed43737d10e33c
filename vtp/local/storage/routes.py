"""The Cloud Storage JSON API's HTTP methods, as google-cloud-storage, gcloud storage and the
aiplatform SDK's staging call them:

    GET|POST         /storage/v1/b                                  buckets.list / insert
    GET|PATCH|PUT|DELETE /storage/v1/b/{bucket}                     buckets.get / patch / update
                                                                    / delete
    POST             /storage/v1/b/{bucket}/lockRetentionPolicy     lockRetentionPolicy
    GET              /storage/v1/b/{bucket}/storageLayout           getStorageLayout (flat)
    GET|PUT          /storage/v1/b/{bucket}/iam                     IAM policy (kept open)
    GET              /storage/v1/projects/{project}/serviceAccount  the service agent's name
    GET              /storage/v1/b/{bucket}/o                       objects.list (matchGlob too)
    GET|PATCH|PUT|DELETE /storage/v1/b/{bucket}/o/{object}          get (?alt=media) / patch /
                                                                    update / delete
    POST   .../o/{object}/copyTo|rewriteTo/b/{bucket}/o/{object}    copy, rewrite
    POST   .../o/{object}/moveTo/o/{object}                         move
    POST   /storage/v1/b/{bucket}/o/{object}/compose                compose
    POST|PUT         /upload/storage/v1/b/{bucket}/o                insert (media, multipart,
                                                                    resumable sessions; a
                                                                    session's chunks PUT or POST)
    GET              /download/storage/v1/b/{bucket}/o/{object}     media (Range supported)

Object names in paths are percent-encoded (a `/` is `%2F`). Errors use Google's JSON shape with
the status codes Cloud Storage uses (404, 409, 412, ...), so clients raise their usual
exceptions. The fields clients set on objects and buckets (contentType,
custom metadata, labels, lifecycle, holds, retention, ...) are kept in `metadata.Records`, each
with its metageneration; preconditions, holds and retention are checked as Cloud Storage checks
them (`resources`).

Objects are served from the service's own origin, where the console lives, so a download must
never be a page: every media reply is an attachment (`Content-Disposition`), `nosniff`,
sandboxed with a CSP that allows nothing, unframeable and readable by the same origin only
(`DOWNLOAD_HEADERS`). Cloud Storage clients ignore these headers.
"""

import base64
import fnmatch
import io
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

from vtp.local.base import errors
from vtp.local.base.guard import Headers
from vtp.local.base.names import LOCAL_PROJECT_NUMBER
from vtp.local.storage import resources
from vtp.local.storage.checksums import Budget
from vtp.local.storage.metadata import BUCKET_FIELDS, OBJECT_FIELDS, Records, patched, writable
from vtp.local.storage.objects import (
    Buckets,
    ObjectInfo,
    Readable,
    check_list_argument,
    open_no_follow,
    precondition_failed,
)
from vtp.local.storage.uploads import (
    Chunk,
    Sessions,
    goog_hash,
    metadata_from,
    object_name,
    split_multipart,
)

PREFIXES = (
    "/storage/v1/",
    "/upload/storage/v1/",
    "/resumable/upload/storage/v1/",  # gcloud storage's path for resumable uploads
    "/download/storage/v1/",
)
"""Paths that belong to the Cloud Storage API."""

MAX_PAGE = 1000

LOCATION = resources.LOCATION
LOCATION_TYPE = resources.LOCATION_TYPE

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
        self.records = Records(root)
        b = f"(?P<bucket>{_SEG})"
        o = f"(?P<object>{_SEG})"
        self._routes: list[tuple[str, re.Pattern, _Handler]] = []
        for method, pattern, handler in (
            ("GET", "/storage/v1/b", self._list_buckets),
            ("GET", f"/storage/v1/projects/{_SEG}/serviceAccount", self._service_account),
            ("POST", "/storage/v1/b", self._insert_bucket),
            ("GET", f"/storage/v1/b/{b}", self._get_bucket),
            ("PATCH", f"/storage/v1/b/{b}", self._patch_bucket),
            ("PUT", f"/storage/v1/b/{b}", self._patch_bucket),
            ("POST", f"/storage/v1/b/{b}/lockRetentionPolicy", self._lock_retention),
            ("DELETE", f"/storage/v1/b/{b}", self._delete_bucket),
            ("GET", f"/storage/v1/b/{b}/storageLayout", self._storage_layout),
            ("GET", f"/storage/v1/b/{b}/iam", self._get_iam),
            ("PUT", f"/storage/v1/b/{b}/iam", self._set_iam),
            ("GET", f"/storage/v1/b/{b}/o", self._list_objects),
            ("GET", f"/storage/v1/b/{b}/o/{o}", self._get_object),
            ("PATCH", f"/storage/v1/b/{b}/o/{o}", self._patch_object),
            ("PUT", f"/storage/v1/b/{b}/o/{o}", self._patch_object),
            ("POST", f"/storage/v1/b/{b}/o/{o}/moveTo/o/(?P<to_object>{_SEG})", self._move),
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
        record = self.records.bucket(name)
        return resources.bucket_resource(request.base, name, folder.stat().st_mtime_ns, record)

    def _list_buckets(self, request: StorageRequest) -> Reply:
        prefix = request.arg("prefix")
        names = [n for n in self.buckets.bucket_names() if n.startswith(prefix)]
        return Reply.of(
            {"kind": "storage#buckets", "items": [self._bucket(request, n) for n in names]}
        )

    def _insert_bucket(self, request: StorageRequest) -> Reply:
        body = request.json()
        name = body.get("name")
        if not isinstance(name, str) or not name:
            raise errors.invalid_argument("Required field: name (the bucket's name).")
        fields = {k: v for k, v in writable(body, BUCKET_FIELDS, "bucket").items() if v is not None}
        resources.check_bucket_fields(fields)
        fields = resources.stamped({}, fields, time.time_ns())
        if request.arg("enableObjectRetention").lower() == "true":
            fields["objectRetention"] = {"mode": "Enabled"}
        self.buckets.create_bucket(name)
        self.records.put_bucket(name, {"metageneration": 1, "fields": fields})
        return Reply.of(self._bucket(request, name))

    def _get_bucket(self, request: StorageRequest) -> Reply:
        resource = self._bucket(request, request.params["bucket"])
        resources.check_metageneration(request.query, resource["metageneration"])
        return Reply.of(resource)

    def _patch_bucket(self, request: StorageRequest) -> Reply:
        """buckets.patch (fields merged) and buckets.update (settable fields replaced)."""
        name = request.params["bucket"]
        current = self._bucket(request, name)
        resources.check_metageneration(request.query, current["metageneration"])
        changes = writable(request.json(), BUCKET_FIELDS, "bucket")
        resources.check_bucket_fields(changes)
        record = self.records.bucket(name)
        resources.check_locked_retention(current, changes)
        old = record.get("fields") or {}
        fields = patched(old, changes) if request.method == "PATCH" else _settable(changes)
        fields = resources.stamped(old, fields, time.time_ns())
        return self._keep_bucket(request, name, record, fields)

    def _lock_retention(self, request: StorageRequest) -> Reply:
        """buckets.lockRetentionPolicy: ifMetagenerationMatch is required, as on GCS."""
        name = request.params["bucket"]
        current = self._bucket(request, name)
        if not request.arg("ifMetagenerationMatch"):
            raise errors.invalid_argument("Required parameter: ifMetagenerationMatch.")
        resources.check_metageneration(request.query, current["metageneration"])
        record = self.records.bucket(name)
        fields = dict(record.get("fields") or {})
        if not fields.get("retentionPolicy"):
            raise errors.ApiError(
                errors.FAILED_PRECONDITION,
                f"Bucket {name} has no retention policy to lock.",
                http_status=412,
            )
        fields["retentionPolicy"] = {**fields["retentionPolicy"], "isLocked": True}
        return self._keep_bucket(request, name, record, fields)

    def _keep_bucket(self, request: StorageRequest, name: str, record: dict, fields: dict) -> Reply:
        metageneration = int(record.get("metageneration", 1)) + 1
        self.records.put_bucket(
            name, {"metageneration": metageneration, "fields": fields, "updated": time.time_ns()}
        )
        return Reply.of(self._bucket(request, name))

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
        name = request.params["bucket"]
        resources.check_metageneration(request.query, self._bucket(request, name)["metageneration"])
        self.buckets.delete_bucket(name)
        self.records.drop_bucket(name)
        return Reply(status=204)

    def _service_account(self, request: StorageRequest) -> Reply:
        """projects.serviceAccount.get: the project's Cloud Storage service agent, by name only
        (nothing here acts as it)."""
        email = f"service-{LOCAL_PROJECT_NUMBER}@gs-project-accounts.iam.gserviceaccount.com"
        return Reply.of({"kind": "storage#serviceAccount", "email_address": email})

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

    def _object(
        self, request: StorageRequest, info: ObjectInfo, bucket: dict | None = None
    ) -> dict:
        record = self.records.object(info.bucket, info.name, info.version)
        bucket = bucket if bucket is not None else self._bucket(request, info.bucket)
        resource = resources.object_resource(request.base, info, record, bucket)
        if request.arg("projection") == "full":
            resource["owner"] = dict(resources.OWNER)
        return resource

    def _info(self, request: StorageRequest, bucket: str = "", name: str = "") -> ObjectInfo:
        bucket = bucket or request.params["bucket"]
        name = name or request.params["object"]
        return self.buckets.info(bucket, name, request.arg("generation"))

    def _checked(self, request: StorageRequest) -> dict:
        """The named object's resource, once the request's preconditions hold (for a write, an
        If-None-Match naming its etag is a 412)."""
        _, resource, unmodified = self._read_checked(request)
        if unmodified:
            raise precondition_failed(
                "At least one of the pre-conditions you specified did not hold: "
                f"If-None-Match={request.headers.get('If-None-Match', '')}."
            )
        return resource

    def _read_checked(self, request: StorageRequest) -> tuple[ObjectInfo, dict, bool]:
        """The named object and its resource once the request's preconditions hold, and whether
        its If-None-Match names the resource's etag (a read then answers 304 Not Modified)."""
        bucket, name = request.params["bucket"], request.params["object"]
        self.buckets.check_generation(bucket, name, request.query)
        info = self._info(request)
        resource = self._object(request, info)
        resources.check_metageneration(request.query, resource["metageneration"])
        unmodified = resources.check_etag(request.headers, resource["etag"])
        return info, resource, unmodified

    def _get_object(self, request: StorageRequest) -> Reply:
        if request.arg("alt") == "media":
            return self._media(request)
        _, resource, unmodified = self._read_checked(request)
        return _not_modified(resource) if unmodified else Reply.of(resource)

    def _patch_object(self, request: StorageRequest) -> Reply:
        """objects.patch (fields merged, metadata key by key) and objects.update (replaced)."""
        current = self._checked(request)
        info = self._info(request)
        record = self.records.object(info.bucket, info.name, info.version)
        changes = writable(request.json(), OBJECT_FIELDS, "object")
        old = record.get("fields") if record else {"contentType": info.content_type}
        fields = patched(old or {}, changes) if request.method == "PATCH" else _settable(changes)
        metageneration = int(current["metageneration"]) + 1
        new = {"metageneration": metageneration, "fields": fields, "updated": time.time_ns()}
        self.records.put_object(info.bucket, info.name, info.version, new)
        return Reply.of(self._object(request, info))

    def _delete_object(self, request: StorageRequest) -> Reply:
        resource = self._checked(request)
        resources.check_deletable(resource)
        self.buckets.delete(resource["bucket"], resource["name"])
        self.records.drop_object(resource["bucket"], resource["name"])
        return Reply(status=204)

    def _written(
        self, request: StorageRequest, info: ObjectInfo, fields: dict, bucket: dict | None = None
    ) -> dict:
        """Keep the record of an object just written (its settable `fields`); its resource."""
        bucket = bucket if bucket is not None else self._bucket(request, info.bucket)
        fields = {k: v for k, v in _settable(fields).items() if k not in ("md5Hash", "crc32c")}
        if bucket.get("defaultEventBasedHold") and "eventBasedHold" not in fields:
            fields["eventBasedHold"] = True
        self.records.put_object(
            info.bucket, info.name, info.version, {"metageneration": 1, "fields": fields}
        )
        return resources.object_resource(
            request.base, info, self.records.object(info.bucket, info.name, info.version), bucket
        )

    def _check_overwrite(self, request: StorageRequest, bucket: str, name: str) -> None:
        """Preconditions on a write's target, and its holds and retention (403)."""
        self.buckets.check_generation(bucket, name, request.query)
        try:
            target = self._object(request, self.buckets.info(bucket, name))
        except errors.ApiError:
            if request.arg("ifMetagenerationMatch"):
                resources.check_metageneration(request.query, "0")
            return
        resources.check_metageneration(request.query, target["metageneration"])
        resources.check_deletable(target)

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
        glob = _glob(request.arg("matchGlob"))
        resource = self._bucket(request, bucket) if self.buckets.bucket_dir(bucket).is_dir() else {}
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
            if glob and not is_prefix and not glob.fullmatch(name):
                continue
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
                    items.append(self._object(request, info, resource))
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
        """objects.copy and objects.rewrite (done in one call): the source's fields, with the
        body's (the destination resource) over them."""
        source = self._info(request)
        record = self.records.object(source.bucket, source.name, source.version)
        resources.check_source(request.query, source, record)
        to_bucket, to_name = request.params["to_bucket"], request.params["to_object"]
        self.buckets.object_path(to_bucket, to_name)  # refuse a bad target before reading
        self._check_overwrite(request, to_bucket, to_name)
        body = writable(request.json(), OBJECT_FIELDS, "object")
        fields = record.get("fields") if record else {"contentType": source.content_type}
        fields = {**(fields or {}), **body}
        for key in _NOT_COPIED.difference(body):
            fields.pop(key, None)
        with self.buckets.reading(source.bucket, source.name) as file:
            info = self.buckets.write(to_bucket, to_name, file)
        resource = self._written(request, info, fields)
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

    def _move(self, request: StorageRequest) -> Reply:
        """objects.move within a bucket: a copy, then the source deleted."""
        source = self._info(request)
        record = self.records.object(source.bucket, source.name, source.version)
        resources.check_source(request.query, source, record)
        bucket, to_name = source.bucket, request.params["to_object"]
        self.buckets.object_path(bucket, to_name)
        self._check_overwrite(request, bucket, to_name)
        resources.check_deletable(self._object(request, source))
        fields = record.get("fields") if record else {"contentType": source.content_type}
        with self.buckets.reading(bucket, source.name) as file:
            info = self.buckets.write(bucket, to_name, file)
        resource = self._written(request, info, fields or {})
        self.buckets.delete(bucket, source.name)
        self.records.drop_object(bucket, source.name)
        return Reply.of(resource)

    def _compose(self, request: StorageRequest) -> Reply:
        bucket, name = request.params["bucket"], request.params["object"]
        body = request.json()
        sources = body.get("sourceObjects")
        if not isinstance(sources, list) or not 1 <= len(sources) <= 32:
            raise errors.invalid_argument("Invalid sourceObjects: expected 1 to 32 objects.")
        names = [self._compose_source(bucket, source) for source in sources]
        destination = body.get("destination") or {}
        if not isinstance(destination, dict):
            raise errors.invalid_argument("Invalid destination: expected an object resource.")
        fields = writable(destination, OBJECT_FIELDS, "destination")
        self.buckets.object_path(bucket, name)  # refuse a bad target before reading
        self._check_overwrite(request, bucket, name)
        with self.buckets.temporary() as temporary:
            with open(temporary, "wb", opener=open_no_follow) as out:
                for part_name in names:
                    with self.buckets.reading(bucket, part_name) as part:
                        while chunk := part.read(1 << 20):
                            out.write(chunk)
            with open(temporary, "rb") as joined:
                info = self.buckets.write(bucket, name, joined)
        return Reply.of(self._written(request, info, fields))

    def _compose_source(self, bucket: str, source: object) -> str:
        """The name of one of compose's sourceObjects, once it exists (at the generation it
        names) and its objectPreconditions hold."""
        name = source.get("name") if isinstance(source, dict) else None
        if not isinstance(source, dict) or not isinstance(name, str) or not name:
            raise errors.invalid_argument("Invalid sourceObjects: each needs a name.")
        generation = source.get("generation")
        info = self.buckets.info(bucket, name, str(generation) if generation else "")
        conditions = source.get("objectPreconditions") or {}
        wanted = conditions.get("ifGenerationMatch") if isinstance(conditions, dict) else None
        if wanted is not None and str(wanted) != str(info.generation):
            raise precondition_failed(
                f"At least one of the pre-conditions you specified did not hold: "
                f"sourceObjects[{name!r}].objectPreconditions.ifGenerationMatch={wanted}, the "
                f"object's generation is {info.generation}."
            )
        return name

    # -- media -----------------------------------------------------------------------------

    def _media(self, request: StorageRequest) -> Reply:
        info, resource, unmodified = self._read_checked(request)
        if unmodified:
            return _not_modified(resource)
        content_type = resource.get("contentType") or "application/octet-stream"
        encoding = resource.get("contentEncoding") or ""
        headers = {
            **_hash_header(info),
            "x-goog-generation": str(info.generation),
            "x-goog-metageneration": resource["metageneration"],
            "ETag": resource["etag"],
            "x-goog-stored-content-length": str(info.size),
            "x-goog-stored-content-encoding": encoding or "identity",
            **({"Content-Encoding": encoding} if encoding else {}),
            "Accept-Ranges": "bytes",
            "Content-Disposition": attachment(info.name),
            **DOWNLOAD_HEADERS,
        }
        path = self.buckets.open(info.bucket, info.name)
        span = _range(request.headers.get("Range", ""), info.size)
        if span is None:
            return Reply(file=path, length=info.size, content_type=content_type, headers=headers)
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
            content_type=content_type,
            headers=headers,
        )

    def _upload(self, request: StorageRequest) -> Reply:
        bucket = request.params["bucket"]
        kind = request.arg("uploadType", "media")
        if kind == "resumable" and request.arg("upload_id"):  # a chunk POSTed, as gcsfs does
            return self._resume(request)
        if kind == "resumable":
            metadata = request.json()
            name = object_name(request.query, metadata)
            self._check_overwrite(request, bucket, name)
            fields = _upload_fields(metadata, request.headers.get("X-Upload-Content-Type", ""))
            session = self.sessions.start(bucket, name, request.query, fields)
            location = (
                f"{request.base}/upload/storage/v1/b/{quote(bucket, safe='')}/o"
                f"?uploadType=resumable&upload_id={session}"
            )
            return Reply(headers={"Location": location, "X-GUploader-UploadID": session})
        if kind == "multipart":
            data = request.body.read(request.length)
            metadata, content = split_multipart(request.headers.get("Content-Type", ""), data)
            name = object_name(request.query, metadata)
            self._check_overwrite(request, bucket, name)
            fields = _upload_fields(metadata, "")
            info = self.buckets.write(bucket, name, io.BytesIO(content), [fields])
            return Reply.of(self._written(request, info, fields))
        if kind == "media":
            name = object_name(request.query, {})
            self._check_overwrite(request, bucket, name)
            fields = _upload_fields({}, request.headers.get("Content-Type", ""))
            info = self.buckets.write(bucket, name, request.body)
            return Reply.of(self._written(request, info, fields))
        raise errors.invalid_argument(
            f"Invalid uploadType {kind!r}: expected media, multipart or resumable."
        )

    def _resume(self, request: StorageRequest) -> Reply:
        session = request.arg("upload_id")
        chunk = Chunk.parse(request.headers.get("Content-Range", ""), request.length)
        declared = goog_hash(request.headers.get("X-Goog-Hash", ""))
        held, info, fields = self.sessions.put(session, chunk, request.body, declared)
        if info is None:
            headers = {"Range": f"bytes=0-{held - 1}"} if held else {}
            return Reply(status=308, headers=headers)
        return Reply.of(self._written(request, info, fields))

    def _cancel_upload(self, request: StorageRequest) -> Reply:
        self.sessions.cancel(request.arg("upload_id"))  # checks the id first
        return Reply(status=499)


def _not_modified(resource: dict) -> Reply:
    """304 for a read whose If-None-Match names the object's etag (no body, as HTTP has it)."""
    return Reply(status=304, headers={"ETag": resource["etag"]})


_NOT_COPIED = frozenset({"temporaryHold", "eventBasedHold", "retention"})
"""Fields a copy does not take from its source unless the request sets them."""


def _settable(fields: dict) -> dict:
    """`fields` without those set to null (objects.update, buckets.update: null is unset)."""
    return {key: value for key, value in fields.items() if value is not None}


def _upload_fields(metadata: dict, content_type: str) -> dict:
    """What an upload keeps: the settable fields of its object resource (`md5Hash`, `crc32c`
    too, checked against the data by `Buckets.write`); the media's type when the resource has
    none."""
    fields = writable(metadata, OBJECT_FIELDS, "object")
    fields = {**fields, **{k: metadata[k] for k in ("md5Hash", "crc32c") if metadata.get(k)}}
    media_type = content_type.split(";")[0].strip() if content_type else ""
    if not fields.get("contentType"):
        fields["contentType"] = media_type or "application/octet-stream"
    return fields


def _glob(pattern: str) -> re.Pattern | None:
    """matchGlob as a regular expression: `**` any characters (`**/` also none), `*` and `?`
    any but `/`, `[...]` a class, `{a,b}` alternatives; None without a pattern."""
    if not pattern:
        return None
    check_list_argument("matchGlob", pattern)
    return re.compile(_glob_body(pattern))


def _glob_body(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "{" and "}" in pattern[i:]:
            close = pattern.index("}", i)
            options = pattern[i + 1 : close].split(",")
            out.append("(?:" + "|".join(_glob_body(o) for o in options) + ")")
            i = close + 1
        elif c == "[" and "]" in pattern[i + 1 :]:
            close = pattern.index("]", i + 1)
            out.append(fnmatch.translate(pattern[i : close + 1])[4:-3])
            i = close + 1
        else:
            out.append({"*": "[^/]*", "?": "[^/]"}.get(c) or re.escape(c))
            i += 1
    return "".join(out)


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


def _hash_header(info: ObjectInfo) -> dict[str, str]:
    """`x-goog-hash` of a media download, when its hashes are known (clients check it then)."""
    if not (info.md5 and info.crc32c):
        return {}
    return {"x-goog-hash": f"crc32c={info.crc32c},md5={info.md5}"}
