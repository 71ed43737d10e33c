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
from vtp.vertex.local_auth import GSUTIL_ACCOUNT

LOCATION = "US-CENTRAL1"
LOCATION_TYPE = "region"
"""Where a bucket says it is unless its creator named a location."""

OWNER = {"entity": f"user-{GSUTIL_ACCOUNT}", "entityId": ""}
"""Every object's `owner` (reported with projection=full): the one principal the service's
token stands for, by the name gcloud has for it under `vtp local exec` and `env`."""

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
    if isinstance(autoclass, dict):  # `stamped` its times; these stand in for older records'
        terminal = {"terminalStorageClass": "NEARLINE", "terminalStorageClassUpdateTime": created}
        fields["autoclass"] = {
            "toggleTime": created,
            **(terminal if autoclass.get("enabled") else {}),
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


PUBLIC_ACCESS_PREVENTION = ("inherited", "enforced", "unspecified")
ENFORCEMENT_CONFIGS = (
    "googleManagedEncryptionEnforcementConfig",
    "customerManagedEncryptionEnforcementConfig",
    "customerSuppliedEncryptionEnforcementConfig",
)
"""The `encryption` fields whose restrictionMode takes effect at a time Cloud Storage reports."""


def check_bucket_fields(fields: dict) -> None:
    """400 naming the field for a value Cloud Storage refuses (iamConfiguration's
    publicAccessPrevention; objects where objects belong)."""
    for key in ("iamConfiguration", "autoclass", "encryption"):
        if fields.get(key) is not None and not isinstance(fields[key], dict):
            raise errors.invalid_argument(f"Invalid bucket field {key}: expected a JSON object.")
    prevention = (fields.get("iamConfiguration") or {}).get("publicAccessPrevention")
    if prevention is not None and prevention not in PUBLIC_ACCESS_PREVENTION:
        raise errors.invalid_argument(
            f"Invalid bucket field iamConfiguration.publicAccessPrevention {prevention!r}: "
            f"expected one of {', '.join(PUBLIC_ACCESS_PREVENTION)}."
        )


def stamped(old: dict, new: dict, now_ns: int) -> dict:
    """A bucket's `new` fields with the output-only times Cloud Storage keeps for them: when
    autoclass was last toggled and its terminal class last set, when an encryption
    enforcement config's restriction took effect. Unchanged settings keep their times; the
    times a client sends back are not taken."""
    now = timestamp(now_ns)
    fields = dict(new)
    autoclass, before = fields.get("autoclass"), old.get("autoclass") or {}
    if isinstance(autoclass, dict):
        same = before.get("enabled") == autoclass.get("enabled") and "toggleTime" in before
        autoclass = {**autoclass, "toggleTime": before["toggleTime"] if same else now}
        if autoclass.get("enabled"):
            terminal = autoclass.get("terminalStorageClass") or "NEARLINE"
            kept = before.get("terminalStorageClass") == terminal
            since = before.get("terminalStorageClassUpdateTime") if kept else None
            autoclass["terminalStorageClass"] = terminal
            autoclass["terminalStorageClassUpdateTime"] = since or now
        fields["autoclass"] = autoclass
    encryption, was = fields.get("encryption"), old.get("encryption") or {}
    if isinstance(encryption, dict):
        fields["encryption"] = {
            **encryption,
            **{
                key: _enforced(encryption[key], was.get(key), now)
                for key in ENFORCEMENT_CONFIGS
                if isinstance(encryption.get(key), dict)
            },
        }
    return fields


def _enforced(config: dict, before: object, now: str) -> dict:
    """An encryption enforcement config with its effectiveTime: since when a FullyRestricted
    mode holds (kept while it stays so); none for another mode."""
    config = {k: v for k, v in config.items() if k != "effectiveTime"}
    if config.get("restrictionMode") != "FullyRestricted":
        return config
    before = before if isinstance(before, dict) else {}
    kept = before.get("restrictionMode") == "FullyRestricted" and before.get("effectiveTime")
    return {**config, "effectiveTime": kept or now}


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


def check_etag(headers: Headers, etag: str) -> bool:
    """`If-Match` against the resource's etag (412 when it names another), then whether
    `If-None-Match` names it (RFC 9110's order): a read then answers 304, a write 412."""
    wanted = headers.get("If-Match", "")
    if wanted and not _names_etag(wanted, etag):
        raise precondition_failed(
            f"At least one of the pre-conditions you specified did not hold: If-Match={wanted}, "
            f"the etag is {etag}."
        )
    unwanted = headers.get("If-None-Match", "")
    return bool(unwanted) and _names_etag(unwanted, etag)


def _names_etag(header: str, etag: str) -> bool:
    """Whether an If-Match / If-None-Match value (`*`, or etags separated by commas, quoted
    or not, weak or strong) names `etag`."""
    given = {item.strip().removeprefix("W/").strip('"') for item in header.split(",")}
    return "*" in given or etag in given


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
