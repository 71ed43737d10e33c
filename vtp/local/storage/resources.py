"""The JSON API's bucket and object resources, built from what the storage root holds (the
folder, the file) and what the metadata records keep (`metadata.Records`), and the
preconditions Cloud Storage checks against them (ifGeneration..., ifMetageneration...).
"""

import base64
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from vtp.local.base import errors
from vtp.local.base.guard import Headers
from vtp.local.base.names import LOCAL_PROJECT_NUMBER
from vtp.local.storage.objects import ObjectInfo, precondition_failed

LOCATION = "US-CENTRAL1"
LOCATION_TYPE = "region"
"""Where a bucket says it is unless its creator named a location."""

MULTI_REGIONS = frozenset({"US", "EU", "ASIA"})
SOFT_DELETE_SECONDS = "604800"
"""Cloud Storage's default soft-delete retention (7 days), reported; deletes here are final."""


def bucket_resource(base: str, name: str, created_ns: int, record: dict) -> dict:
    """buckets.get's resource of bucket `name`."""
    fields = dict(record.get("fields") or {})
    created = timestamp(created_ns)
    location = str(fields.pop("location", LOCATION)).upper()
    iam = {
        "uniformBucketLevelAccess": {"enabled": True},
        "publicAccessPrevention": "inherited",
        **(fields.pop("iamConfiguration", None) or {}),
    }
    autoclass = fields.pop("autoclass", None)
    if isinstance(autoclass, dict):
        fields["autoclass"] = {
            "toggleTime": created,
            "terminalStorageClass": "NEARLINE",
            "terminalStorageClassUpdateTime": created,
            **autoclass,
        }
    retention = fields.pop("retentionPolicy", None)
    if retention:
        retention = {"effectiveTime": created, "isLocked": False, **retention}
    metageneration = str(record.get("metageneration", 1))
    return {
        "kind": "storage#bucket",
        "id": name,
        "name": name,
        "selfLink": f"{base}/storage/v1/b/{name}",
        "projectNumber": LOCAL_PROJECT_NUMBER,
        "metageneration": metageneration,
        "location": location,
        "locationType": _location_type(location, fields),
        "storageClass": "STANDARD",
        "rpo": "DEFAULT",
        "etag": base64.b64encode(f"b{metageneration}".encode()).decode(),
        "timeCreated": created,
        "updated": timestamp(record.get("updated", created_ns)),
        "iamConfiguration": iam,
        "softDeletePolicy": {
            "retentionDurationSeconds": SOFT_DELETE_SECONDS,
            "effectiveTime": created,
        },
        **({"retentionPolicy": retention} if retention else {}),
        **fields,
    }


def _location_type(location: str, fields: dict) -> str:
    if fields.get("customPlacementConfig"):
        return "dual-region"
    return "multi-region" if location in MULTI_REGIONS else LOCATION_TYPE


def object_resource(base: str, info: ObjectInfo, record: dict, bucket: dict) -> dict:
    """objects.get's resource of the object `info` describes; `record` its metadata record ({}
    for a file nobody described: its content type comes from its name), `bucket` its bucket's
    resource (for the retention it imposes)."""
    path = f"b/{info.bucket}/o/{quote(info.name, safe='')}"
    created = timestamp(info.generation)
    fields = dict(record.get("fields") or {}) if record else {"contentType": info.content_type}
    metageneration = str(record.get("metageneration", 1))
    resource = {
        "kind": "storage#object",
        "id": f"{info.bucket}/{info.name}/{info.generation}",
        "selfLink": f"{base}/storage/v1/{path}",
        "mediaLink": f"{base}/download/storage/v1/{path}?generation={info.generation}&alt=media",
        "name": info.name,
        "bucket": info.bucket,
        "generation": str(info.generation),
        "metageneration": metageneration,
        "storageClass": "STANDARD",
        "size": str(info.size),
        **hash_fields(info),
        "etag": base64.b64encode(f"{info.generation}/{metageneration}".encode()).decode(),
        "timeCreated": created,
        "updated": timestamp(record.get("updated", info.generation)),
        "timeStorageClassUpdated": created,
        **fields,
    }
    period = (bucket.get("retentionPolicy") or {}).get("retentionPeriod")
    if period and str(period).isdigit():
        until = info.generation // 1000 + int(period) * 1_000_000
        resource["retentionExpirationTime"] = timestamp(until * 1000)
    return resource


def hash_fields(info: ObjectInfo) -> dict[str, str]:
    """`md5Hash` and `crc32c` of an object's resource, those known (optional in the JSON API)."""
    fields = {"md5Hash": info.md5, "crc32c": info.crc32c}
    return {key: value for key, value in fields.items() if value}


def check_metageneration(query: dict[str, list[str]], current: str, prefix: str = "if") -> None:
    """Apply {prefix}MetagenerationMatch / NotMatch against `current` ("0": none); 412."""
    for suffix, holds in (("Match", str.__eq__), ("NotMatch", str.__ne__)):
        key = f"{prefix}Metageneration{suffix}"
        wanted = query.get(key, [""])[0]
        if wanted and not holds(wanted, current):
            raise precondition_failed(
                f"At least one of the pre-conditions you specified did not hold: {key}={wanted}, "
                f"the metageneration is {current}."
            )


def check_source(query: dict[str, list[str]], info: ObjectInfo, record: dict) -> None:
    """ifSourceGenerationMatch ... ifSourceMetagenerationNotMatch of a copy, rewrite or move."""
    generation = str(info.generation)
    for key, holds in (("Match", str.__eq__), ("NotMatch", str.__ne__)):
        wanted = query.get(f"ifSourceGeneration{key}", [""])[0]
        if wanted and not holds(wanted, generation):
            raise precondition_failed(
                f"At least one of the pre-conditions you specified did not hold: "
                f"ifSourceGeneration{key}={wanted}, the source's generation is {generation}."
            )
    check_metageneration(query, str(record.get("metageneration", 1)), prefix="ifSource")


def check_deletable(resource: dict) -> None:
    """403 for an object under a hold or its bucket's retention, as Cloud Storage refuses."""
    held = [key for key in ("temporaryHold", "eventBasedHold") if resource.get(key)]
    if held:
        raise errors.ApiError(
            errors.PERMISSION_DENIED,
            f"Object '{resource['bucket']}/{resource['name']}' is under {held[0]}.",
            http_status=403,
        )
    until = resource.get("retentionExpirationTime")
    if until and parse_time(until) > datetime.now(UTC):
        raise errors.ApiError(
            errors.PERMISSION_DENIED,
            f"Object '{resource['bucket']}/{resource['name']}' is subject to bucket's retention "
            f"policy or object retention and cannot be deleted or overwritten until {until}.",
            http_status=403,
        )


def check_etag(headers: Headers, etag: str) -> None:
    """`If-Match` against the resource's etag (412 when it differs)."""
    wanted = headers.get("If-Match", "")
    if wanted and wanted not in (etag, "*"):
        raise precondition_failed(
            f"At least one of the pre-conditions you specified did not hold: If-Match={wanted}, "
            f"the etag is {etag}."
        )


def check_locked_retention(bucket: dict, changes: dict) -> None:
    """403 for a patch that removes or shortens a locked retention policy."""
    current = bucket.get("retentionPolicy") or {}
    if not current.get("isLocked") or "retentionPolicy" not in changes:
        return
    given = changes["retentionPolicy"] or {}
    period = given.get("retentionPeriod") if isinstance(given, dict) else None
    if str(period) != str(current.get("retentionPeriod")) and (
        not str(period).isdigit() or int(str(period)) < int(current["retentionPeriod"])
    ):
        raise errors.ApiError(
            errors.PERMISSION_DENIED,
            f"The retention policy of bucket {bucket['name']} is locked: it cannot be removed "
            "or shortened.",
            http_status=403,
        )


def parse_time(text: str) -> datetime:
    """An RFC 3339 time as the JSON API writes it."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def timestamp(nanoseconds: int) -> str:
    """RFC 3339 with milliseconds, UTC, as the JSON API writes times."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=nanoseconds // 1000)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
