"""What Cloud Storage keeps besides the bytes, through the real google-cloud-storage client:
object and bucket fields and their metagenerations, preconditions, holds, retention, compose,
rewrite, move and matchGlob (`vtp.local.storage.metadata`, `resources`); and that malformed
fields are 4xx naming the field."""

import hashlib
import io
import re

import pytest
import requests
from google.api_core import exceptions
from google.cloud import storage


@pytest.fixture
def bucket(gcs_client, request) -> storage.Bucket:
    plain = re.sub(r"[^a-z0-9]+", "-", request.node.name.lower())[:40].strip("-")
    name = f"{plain}-{hashlib.sha256(request.node.name.encode()).hexdigest()[:8]}"
    return gcs_client.create_bucket(name)


def test_object_fields_are_kept_and_patched(bucket):
    blob = bucket.blob("a.bin")
    blob.metadata = {"owner": "me", "drop": "x"}
    blob.cache_control = "no-cache"
    blob.upload_from_string(b"data", content_type="text/csv")
    fetched = bucket.get_blob("a.bin")
    assert (fetched.content_type, fetched.cache_control) == ("text/csv", "no-cache")
    assert fetched.metadata == {"owner": "me", "drop": "x"}
    assert fetched.metageneration == 1
    fetched.metadata = {"drop": None, "new": "y"}
    fetched.patch()
    again = bucket.get_blob("a.bin")
    assert again.metadata == {"owner": "me", "new": "y"}
    assert again.metageneration == 2
    assert again.generation == fetched.generation  # the bytes did not change


def test_metageneration_preconditions(bucket):
    blob = bucket.blob("m.txt")
    blob.upload_from_string(b"x")
    blob.reload()
    blob.content_language = "en"
    with pytest.raises(exceptions.PreconditionFailed):
        blob.patch(if_metageneration_match=blob.metageneration + 1)
    blob.patch(if_metageneration_match=1)
    with pytest.raises(exceptions.PreconditionFailed):
        blob.delete(if_metageneration_match=1)
    blob.delete(if_metageneration_match=2)


@pytest.mark.parametrize("checksum", [None, "auto"])
def test_wrong_declared_checksum_stores_nothing(bucket, checksum):
    """The user's wrong crc32c is refused even when the client's own (right) one comes with the
    last chunk, as it does by default (`checksum="auto"`)."""
    blob = bucket.blob("checked.bin", chunk_size=256 * 1024)  # a resumable upload
    data = io.BytesIO(b"x" * (300 * 1024))
    with pytest.raises(exceptions.BadRequest, match="crc32c"):
        blob.upload_from_file(data, checksum=checksum, crc32c_checksum_value="A0tD7w==")
    assert bucket.get_blob("checked.bin") is None


def test_etag_preconditions_on_metadata_and_media(bucket):
    bucket.blob("e.txt").upload_from_string(b"etag")
    blob = bucket.get_blob("e.txt")
    fresh = bucket.blob("e.txt")
    with pytest.raises(exceptions.NotModified):
        fresh.reload(if_etag_not_match=blob.etag)
    with pytest.raises(exceptions.NotModified):
        fresh.exists(if_etag_not_match=blob.etag)
    with pytest.raises(exceptions.NotModified):
        fresh.download_as_bytes(if_etag_not_match=blob.etag)
    with pytest.raises(exceptions.PreconditionFailed):
        fresh.reload(if_etag_match="kittens")
    assert fresh.exists(if_etag_match=blob.etag)
    assert fresh.download_as_bytes(if_etag_not_match="kittens") == b"etag"


def test_etag_none_match_on_a_write_is_412(bucket, local_service):
    bucket.blob("w.txt").upload_from_string(b"w")
    etag = bucket.get_blob("w.txt").etag
    url = f"{local_service.url}/storage/v1/b/{bucket.name}/o/w.txt"
    headers = {"Authorization": f"Bearer {local_service.token}", "If-None-Match": etag}
    reply = requests.patch(url, json={"contentLanguage": "en"}, headers=headers, timeout=30)
    assert reply.status_code == 412 and "If-None-Match" in reply.json()["error"]["message"]


def test_owner_with_full_projection(bucket):
    bucket.blob("owned.txt").upload_from_string(b"o")
    plain = bucket.get_blob("owned.txt")
    assert plain.owner is None  # noAcl, the default projection, has no owner
    full = bucket.blob("owned.txt")
    full.reload(projection="full")
    assert full.owner == {"entity": "user-local@vtp.invalid", "entityId": ""}


def test_public_access_prevention_kept_and_checked(gcs_client):
    bucket = gcs_client.bucket("pap-bucket")
    bucket.iam_configuration.uniform_bucket_level_access_enabled = True
    bucket.create()
    assert bucket.iam_configuration.public_access_prevention == "inherited"
    bucket.iam_configuration.public_access_prevention = "enforced"
    bucket.patch()
    assert gcs_client.get_bucket("pap-bucket").iam_configuration.public_access_prevention == (
        "enforced"
    )
    bucket.iam_configuration.public_access_prevention = "unexpected value"
    with pytest.raises(exceptions.BadRequest, match="publicAccessPrevention"):
        bucket.patch()


def test_autoclass_times_follow_changes(gcs_client):
    bucket = gcs_client.bucket("autoclass-bucket")
    bucket.autoclass_enabled = True
    bucket = gcs_client.create_bucket(bucket)
    assert bucket.autoclass_terminal_storage_class == "NEARLINE"
    toggled, terminal_set = (
        bucket.autoclass_toggle_time,
        bucket.autoclass_terminal_storage_class_update_time,
    )
    assert toggled is not None and terminal_set is not None
    bucket.labels = {"unrelated": "change"}
    bucket.patch()
    assert bucket.autoclass_toggle_time == toggled  # kept while autoclass is unchanged
    bucket.autoclass_terminal_storage_class = "ARCHIVE"
    bucket.patch()
    assert bucket.autoclass_toggle_time == toggled
    assert bucket.autoclass_terminal_storage_class_update_time > terminal_set
    bucket.autoclass_enabled = False
    bucket.patch()
    assert bucket.autoclass_enabled is False and bucket.autoclass_toggle_time > toggled


def test_encryption_enforcement_effective_time(gcs_client):
    from google.cloud.storage.bucket import EncryptionEnforcementConfig

    bucket = gcs_client.bucket("enforced-bucket")
    restricted = EncryptionEnforcementConfig(restriction_mode="FullyRestricted")
    bucket.encryption.google_managed_encryption_enforcement_config = restricted
    bucket = gcs_client.create_bucket(bucket)
    config = bucket.encryption.google_managed_encryption_enforcement_config
    since = config.effective_time
    assert config.restriction_mode == "FullyRestricted" and since is not None
    open_config = EncryptionEnforcementConfig(restriction_mode="NotRestricted")
    bucket.encryption.customer_managed_encryption_enforcement_config = open_config
    bucket.patch()
    bucket.reload()
    assert bucket.encryption.google_managed_encryption_enforcement_config.effective_time == since
    customer = bucket.encryption.customer_managed_encryption_enforcement_config
    assert customer.restriction_mode == "NotRestricted" and customer.effective_time is None


def test_bucket_fields_patch_and_metageneration(gcs_client, bucket):
    bucket.labels = {"team": "ml"}
    bucket.add_lifecycle_delete_rule(age=42)
    bucket.patch()
    got = gcs_client.get_bucket(bucket.name)
    assert got.labels == {"team": "ml"}
    assert [dict(rule) for rule in got.lifecycle_rules] == [
        {"action": {"type": "Delete"}, "condition": {"age": 42}}
    ]
    assert got.metageneration == 2
    got.labels = {}
    got.patch()
    assert gcs_client.get_bucket(bucket.name).labels == {}
    with pytest.raises(exceptions.PreconditionFailed):
        gcs_client.get_bucket(bucket.name, if_metageneration_match=1)


def test_holds_and_retention_refuse_deletes(gcs_client, bucket):
    blob = bucket.blob("held.txt")
    blob.upload_from_string(b"x")
    blob.temporary_hold = True
    blob.patch()
    with pytest.raises(exceptions.Forbidden, match="temporaryHold"):
        blob.delete()
    blob.temporary_hold = False
    blob.patch()
    blob.delete()
    bucket.retention_period = 3600
    bucket.patch()
    kept = bucket.blob("kept.txt")
    kept.upload_from_string(b"x")
    kept.reload()
    assert kept.retention_expiration_time is not None
    with pytest.raises(exceptions.Forbidden, match="retention"):
        kept.delete()


def test_compose_rewrite_and_move(bucket):
    for name in ("p1", "p2"):
        bucket.blob(name).upload_from_string(name.encode())
    p1 = bucket.get_blob("p1")
    joined = bucket.blob("joined")
    with pytest.raises(exceptions.PreconditionFailed):
        joined.compose([p1, bucket.blob("p2")], if_source_generation_match=[p1.generation + 1, 0])
    joined.compose([p1, bucket.blob("p2")])
    assert joined.download_as_bytes() == b"p1p2"
    assert bucket.get_blob("joined").content_type is None  # the destination named none
    cold = bucket.blob("joined")
    cold.update_storage_class("NEARLINE")
    assert bucket.get_blob("joined").storage_class == "NEARLINE"
    moved = bucket.move_blob(bucket.blob("p2"), "dir/p2 moved")
    assert moved.download_as_bytes() == b"p2"
    assert bucket.get_blob("p2") is None


def test_match_glob(gcs_client, bucket):
    for name in ("foo/bar", "foo/baz", "foo/foobar", "foobar"):
        bucket.blob(name).upload_from_string(b"")
    listed = gcs_client.list_blobs(bucket, match_glob="foo*bar")
    assert [b.name for b in listed] == ["foobar"]
    listed = gcs_client.list_blobs(bucket, match_glob="**/ba{r,z}")
    assert [b.name for b in listed] == ["foo/bar", "foo/baz"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"metadata": "not-an-object"}, "metadata"),
        ({"metadata": {"k": {"nested": 1}}}, "metadata"),
        ({"temporaryHold": "yes"}, "temporaryHold"),
    ],
)
def test_malformed_object_fields_are_400_naming_them(bucket, local_service, body, field):
    bucket.blob("o.txt").upload_from_string(b"x")
    url = f"{local_service.url}/storage/v1/b/{bucket.name}/o/o.txt"
    headers = {"Authorization": f"Bearer {local_service.token}"}
    reply = requests.patch(url, json=body, headers=headers, timeout=30)
    assert reply.status_code == 400
    assert field in reply.json()["error"]["message"]


def test_malformed_bucket_labels_are_400(bucket, local_service):
    url = f"{local_service.url}/storage/v1/b/{bucket.name}"
    headers = {"Authorization": f"Bearer {local_service.token}"}
    reply = requests.patch(url, json={"labels": ["a"]}, headers=headers, timeout=30)
    assert reply.status_code == 400
    assert "labels" in reply.json()["error"]["message"]
