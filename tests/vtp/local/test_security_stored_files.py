"""Untrusted files in storage: a FIFO, a 4 GiB sparse file, a link out, a file over its limit.

Anyone who can write the storage root (a replica through /gcs, a task, another tool) can plant
files the service later reads. The service runs in this process so that the tests can look at
what its storage front hashed; the requests go through the real clients (google-cloud-storage)
and plain HTTP, and every file is made the way a replica would make it: on disk.
"""

import base64
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from google.cloud import storage as gcs
from google.oauth2.credentials import Credentials

from tests.fixtures import wait_until
from vtp.local.app import Running, running
from vtp.local.base import stored_files
from vtp.local.base.config import ServiceConfig
from vtp.local.batch_prediction import spec
from vtp.local.datasets.service import MAX_IMPORT_FILE_BYTES
from vtp.local.storage import checksums

FOUR_GIB = 4 << 30
PARENT = "projects/local/locations/us-central1"
IMAGE_SCHEMA = "gs://google-cloud-aiplatform/schema/dataset/metadata/image_1.0.0.yaml"
IMPORT_SCHEMA = (
    "gs://google-cloud-aiplatform/schema/dataset/ioformat/"
    "image_classification_single_label_io_format_1.0.0.yaml"
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    config = ServiceConfig(tmp_path_factory.mktemp("stored"), port=0)
    with running(config) as served:
        yield served


@pytest.fixture(scope="module")
def root(served: Running) -> Path:
    return served.app.config.storage_root


@pytest.fixture
def hashes(served: Running) -> checksums.Checksums:
    """What the storage front has hashed (its `hashed_bytes` counts every byte read to hash)."""
    return served.app.front.http.storage.buckets.checksums


@pytest.fixture
def client(served: Running, monkeypatch: pytest.MonkeyPatch) -> gcs.Client:
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", served.url)
    return gcs.Client(project="local", credentials=Credentials(served.token))


def sparse(path: Path, size: int = FOUR_GIB) -> Path:
    """A file claiming `size` bytes that stores none (a hole from start to end)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as file:
        file.truncate(size)
    return path


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def finishes(call: Callable[[], object], timeout: float = 30) -> object:
    """`call()`'s result, or a failure if it has not returned within `timeout` seconds (a guard
    against a hang, such as an open of a FIFO that waits for a writer; not a measure of speed)."""
    result: list[object] = []
    raised: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:  # handed to the caller below
            raised.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"{call} did not return: it hangs"
    if raised:
        raise raised[0]
    return result[0]


# -- Cloud Storage: listing and metadata hash no more than is stored ------------------------


def test_a_4gib_sparse_file_is_listed_got_and_read_without_hashing_it(client, root, hashes):
    bucket = client.create_bucket("sparse-bucket")
    sparse(root / bucket.name / "holes.bin")
    before = hashes.hashed_bytes
    (listed,) = client.list_blobs(bucket)
    got = bucket.get_blob("holes.bin")
    head = bucket.blob("holes.bin").download_as_bytes(start=0, end=9)
    assert listed.size == got.size == FOUR_GIB and head == b"\0" * 10
    assert listed.md5_hash is None and got.md5_hash is None and got.crc32c is None
    assert hashes.hashed_bytes == before  # not 4 GiB per listing, not one byte


def test_a_file_written_on_disk_is_hashed_once_when_first_needed(client, root, hashes):
    bucket = client.create_bucket("disk-bucket")
    data = os.urandom(100_000)
    (root / bucket.name / "replica.bin").write_bytes(data)
    before = hashes.hashed_bytes
    first = bucket.get_blob("replica.bin")
    (again,) = client.list_blobs(bucket)
    expected = base64.b64encode(hashlib.md5(data).digest()).decode()
    assert first.md5_hash == again.md5_hash == expected
    assert hashes.hashed_bytes - before == len(data)  # once, for both requests
    bucket.blob("uploaded.bin").upload_from_string(data)  # hashed as it was written
    assert bucket.get_blob("uploaded.bin").md5_hash == expected
    assert hashes.hashed_bytes - before == len(data)


def test_a_page_hashes_within_its_budget_and_the_rest_later(client, root, hashes, monkeypatch):
    monkeypatch.setattr(checksums, "HASH_BUDGET_BYTES", 1 << 20)
    bucket = client.create_bucket("budget-bucket")
    for index in range(3):
        (root / bucket.name / f"{index}.bin").write_bytes(os.urandom(600_000))
    first = list(client.list_blobs(bucket))
    assert [blob.md5_hash is not None for blob in first] == [True, False, False]

    def all_hashed() -> bool:
        return all(blob.md5_hash for blob in client.list_blobs(bucket))

    wait_until(all_hashed, what="the background thread to hash what the budget left")


def test_a_fifo_in_a_bucket_is_left_out_of_listings_and_is_not_found(client, root):
    bucket = client.create_bucket("fifo-bucket")
    fifo(root / bucket.name / "pipe.jsonl")
    (root / bucket.name / "plain.txt").write_text("x")
    assert finishes(lambda: [b.name for b in client.list_blobs(bucket)]) == ["plain.txt"]
    assert finishes(lambda: bucket.get_blob("pipe.jsonl")) is None


def test_a_fifo_planted_as_an_upload_sessions_record_is_no_session(served, root, client):
    client.create_bucket("session-bucket")
    headers = {"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"}
    started = requests.post(
        f"{served.url}/upload/storage/v1/b/session-bucket/o?uploadType=resumable",
        json={"name": "x.bin"},
        headers=headers,
        timeout=30,
    )
    session = started.headers["X-GUploader-UploadID"]
    record = root / ".vtp-uploads" / f"session-{session}.json"
    record.unlink()
    fifo(record)
    answer = finishes(
        lambda: requests.put(
            started.headers["Location"],
            data=b"abc",
            headers={**headers, "Content-Type": "application/octet-stream"},
            timeout=60,
        )
    )
    assert answer.status_code == 404 and "No such upload session" in answer.text


# -- datasets: an import file is a regular file of bounded size -----------------------------


def _import(served: Running, uri: str) -> dict:
    """Create an image dataset and import `uri` into it over REST; the import's operation."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {served.token}"
    body = {"displayName": "untrusted", "metadataSchemaUri": IMAGE_SCHEMA}
    created = session.post(f"{served.url}/v1/{PARENT}/datasets", json=body, timeout=30).json()
    name = created["response"]["name"] if "response" in created else created["name"]
    name = name.split("/operations/")[0]
    configs = {"importConfigs": [{"gcsSource": {"uris": [uri]}, "importSchemaUri": IMPORT_SCHEMA}]}
    answer = session.post(f"{served.url}/v1/{name}:import", json=configs, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def test_importing_a_fifo_fails_at_once_naming_it(served, root):
    fifo(root / "planted" / "items.jsonl")
    operation = finishes(lambda: _import(served, "gs://planted/items.jsonl"))
    assert operation["done"] and operation["error"]["code"] == 3  # INVALID_ARGUMENT: a 400
    assert "gs://planted/items.jsonl is not a regular file" in operation["error"]["message"]


def test_importing_a_4gib_sparse_file_fails_naming_the_limit(served, root):
    sparse(root / "planted" / "huge.jsonl")
    operation = finishes(lambda: _import(served, "gs://planted/huge.jsonl"))
    assert operation["done"] and operation["error"]["code"] == 3
    message = operation["error"]["message"]
    assert "gs://planted/huge.jsonl is 4294967296 bytes" in message
    assert f"over the limit of {MAX_IMPORT_FILE_BYTES} bytes" in message


# -- the one reader every such file goes through --------------------------------------------


def test_the_reader_refuses_what_is_not_a_bounded_regular_file_inside(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside.txt"
    outside.write_text("secret")
    (root / "b").mkdir(parents=True)
    (root / "b" / "link.txt").symlink_to(outside)
    (root / "b" / "ok.txt").write_text("fine")
    cases = {
        "pipe": (fifo(root / "b" / "pipe"), "is not a regular file"),
        "huge": (sparse(root / "b" / "huge"), "is 4294967296 bytes, over the limit of 100"),
        "link": (root / "b" / "link.txt", "leads out of its folder"),
        "folder": (root / "b", "is a folder"),
        "missing": (root / "b" / "none", "does not exist"),
    }
    for path, says in cases.values():
        with pytest.raises(stored_files.StoredFileError, match=says):
            finishes(lambda path=path: stored_files.read_bytes(root, path, 100, str(path)))
    assert stored_files.read_text(root, root / "b" / "ok.txt", 100, "ok") == "fine"


def test_batch_prediction_lines_are_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(spec, "MAX_LINE_BYTES", 1000)
    inputs = tmp_path / "in.jsonl"
    inputs.write_bytes(b'{"x": 1}\n' + b"[" * 5000 + b"\n" + json.dumps([2]).encode() + b"\n")
    read = list(spec.instances(tmp_path, inputs))
    assert read[0] == ({"x": 1}, "") and read[2] == ([2], "")
    assert read[1][1] == "the line is over 1000 bytes" and len(read[1][0]) == 200
    with pytest.raises(stored_files.StoredFileError, match="not a regular file"):
        finishes(lambda: list(spec.instances(tmp_path, fifo(tmp_path / "pipe.jsonl"))))
