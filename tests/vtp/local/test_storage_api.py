"""Cloud Storage's JSON API on the storage root, with the real clients: google-cloud-storage
(STORAGE_EMULATOR_HOST), `gcloud storage` (its endpoint override) and a replica reading files."""

import hashlib
import os

import pytest
import requests
from google.api_core import exceptions
from google.cloud import storage

from tests.fixtures import State, wait_for_state
from tests.vtp.local.conftest import custom_job


@pytest.fixture
def bucket(gcs_client, request) -> storage.Bucket:
    name = request.node.name.replace("_", "-")[:50].strip("-")
    return gcs_client.create_bucket(name)


def test_small_upload_download_and_metadata(bucket, local_service):
    blob = bucket.blob("data/hello.txt")
    blob.upload_from_string("hello\n", content_type="text/plain")
    assert (blob.size, blob.content_type) == (6, "text/plain")
    assert blob.md5_hash == "sZRqySSS0jR8YjW00mERhA=="  # base64(md5("hello\n")), as GCS writes
    assert (local_service.gcs_root / bucket.name / "data/hello.txt").read_text() == "hello\n"
    assert bucket.blob("data/hello.txt").download_as_text() == "hello\n"
    fetched = bucket.get_blob("data/hello.txt")
    assert fetched.generation == blob.generation and fetched.crc32c == blob.crc32c


def test_resumable_upload_in_chunks_and_ranged_download(bucket, local_service, tmp_path):
    data = os.urandom(5 * (256 << 10) + 123)
    source = tmp_path / "big.bin"
    source.write_bytes(data)
    blob = bucket.blob("models/big.bin", chunk_size=256 << 10)  # five chunks and a tail
    blob.upload_from_filename(source)
    stored = local_service.gcs_root / bucket.name / "models/big.bin"
    assert hashlib.sha256(stored.read_bytes()).digest() == hashlib.sha256(data).digest()
    assert bucket.blob("models/big.bin").download_as_bytes(start=100, end=199) == data[100:200]
    target = tmp_path / "back.bin"
    bucket.blob("models/big.bin").download_to_filename(target)  # checksum-verified by the client
    assert target.read_bytes() == data
    assert not list((local_service.gcs_root / ".vtp-uploads").glob("session-*"))


def test_list_with_prefix_delimiter_and_pages(gcs_client, bucket):
    for name in ("a/1.txt", "a/2.txt", "a/b/3.txt", "c.txt", "d/4.txt"):
        bucket.blob(name).upload_from_string(name)
    top = gcs_client.list_blobs(bucket, delimiter="/")
    assert [b.name for b in top] == ["c.txt"] and top.prefixes == {"a/", "d/"}
    under_a = gcs_client.list_blobs(bucket, prefix="a/", delimiter="/")
    assert [b.name for b in under_a] == ["a/1.txt", "a/2.txt"] and under_a.prefixes == {"a/b/"}
    paged = gcs_client.list_blobs(bucket, page_size=2)
    assert [b.name for b in paged] == ["a/1.txt", "a/2.txt", "a/b/3.txt", "c.txt", "d/4.txt"]


def test_delete_copy_rewrite_compose(bucket, local_service):
    bucket.blob("x.txt").upload_from_string("x")
    bucket.blob("y.txt").upload_from_string("y")
    bucket.copy_blob(bucket.blob("x.txt"), bucket, "copies/x.txt")
    bucket.blob("copies/y.txt").rewrite(bucket.blob("y.txt"))
    joined = bucket.blob("xy.txt")
    joined.compose([bucket.blob("x.txt"), bucket.blob("y.txt")])
    assert joined.download_as_text() == "xy"
    bucket.blob("copies/x.txt").delete()
    assert not bucket.blob("copies/x.txt").exists()
    with pytest.raises(exceptions.NotFound):
        bucket.blob("copies/x.txt").delete()
    assert sorted(p.name for p in (local_service.gcs_root / bucket.name).rglob("*.txt")) == [
        "x.txt",
        "xy.txt",
        "y.txt",
        "y.txt",
    ]


def test_generation_preconditions(bucket):
    blob = bucket.blob("once.txt")
    blob.upload_from_string("first", if_generation_match=0)
    with pytest.raises(exceptions.PreconditionFailed):
        bucket.blob("once.txt").upload_from_string("second", if_generation_match=0)
    assert bucket.blob("once.txt").download_as_text() == "first"


def test_names_that_would_leave_the_root_are_refused(gcs_client, bucket, local_service):
    for name in ("../escape.txt", "a/../../escape.txt", "a//b.txt"):
        with pytest.raises(exceptions.BadRequest, match="Invalid object name"):
            bucket.blob(name).upload_from_string("x")
    for name in ("..", "../up", "a..b"):  # google-cloud-storage itself would refuse these
        answer = local_service.session().post(
            f"{local_service.url}/storage/v1/b?project=local", json={"name": name}, timeout=10
        )
        assert answer.status_code == 400 and "Invalid bucket name" in answer.text
    assert not (local_service.gcs_root.parent / "escape.txt").exists()


def test_requests_without_the_token_are_refused(local_service):
    anonymous = requests.get(f"{local_service.url}/storage/v1/b?project=local", timeout=10)
    assert anonymous.status_code == 401 and "bearer token" in anonymous.json()["error"]["message"]


@pytest.mark.slow
def test_a_replica_reads_what_a_client_uploaded_and_the_other_way(bucket, local_service):
    bucket.blob("in/config.txt").upload_from_string("lr=0.1")
    root = local_service.gcs_root / bucket.name
    code = (
        f"import pathlib; root = pathlib.Path({str(root)!r}); "
        "(root / 'out').mkdir(exist_ok=True); "
        "(root / 'out/seen.txt').write_text((root / 'in/config.txt').read_text().upper())"
    )
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": "python:3.11-slim", "command": ["python", "-c", code]},
    }
    jobs = local_service.client()
    job = jobs.create_custom_job(parent=local_service.parent, custom_job=custom_job(pool))
    assert wait_for_state(jobs, job.name).state == State.JOB_STATE_SUCCEEDED
    assert bucket.blob("out/seen.txt").download_as_text() == "LR=0.1"


def test_gcloud_storage_cp_ls_cat_rm(gcloud, local_service, tmp_path, gcs_client):
    env = {"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE": f"{local_service.url}/storage/v1/"}
    gcloud.env.update(env)
    token = f"--access-token-file={gcloud.token}"
    gcs_client.create_bucket("gcloud-bucket")
    small, large = tmp_path / "small.txt", tmp_path / "large.bin"
    small.write_text("small\n")
    large.write_bytes(os.urandom(12 << 20))  # over gcloud's resumable threshold
    gcloud.run_raw("storage", "cp", str(small), str(large), "gs://gcloud-bucket/up/", token)
    assert (local_service.gcs_root / "gcloud-bucket/up/large.bin").read_bytes() == (
        large.read_bytes()
    )
    listed = gcloud.run_raw("storage", "ls", "gs://gcloud-bucket/up/", token).stdout.split()
    assert listed == ["gs://gcloud-bucket/up/large.bin", "gs://gcloud-bucket/up/small.txt"]
    assert gcloud.run_raw("storage", "cat", "gs://gcloud-bucket/up/small.txt", token).stdout == (
        "small\n"
    )
    back = tmp_path / "back.bin"
    gcloud.run_raw("storage", "cp", "gs://gcloud-bucket/up/large.bin", str(back), token)
    assert back.read_bytes() == large.read_bytes()
    gcloud.run_raw("storage", "rm", "gs://gcloud-bucket/up/small.txt", token)
    assert not (local_service.gcs_root / "gcloud-bucket/up/small.txt").exists()
