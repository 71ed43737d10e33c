"""Security issue #26, the storage part: one test per finding, against a real `vtp local serve`.

1. Object downloads are never active content on the service's origin (a stored HTML or SVG file
   must not run script there): every media reply is an attachment, `nosniff`, sandboxed by CSP,
   unframeable and same-origin only.
2. Symbolic links planted in the storage root (as a replica can) never lead a request outside it:
   reads, writes, deletes, copies, listings, uploads and the job, model and pipeline URIs that
   name a path through such a link are refused, naming the field or object, and nothing outside
   the root changes. A link that stays inside the root is followed.
3. List prefixes (and delimiters and offsets) are checked like object names.
4. Upload session ids are checked wherever they are used, and names longer than the file system
   can hold are a 400 naming the object, not a 500.
"""

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from google.api_core import exceptions
from google.cloud import storage

from tests.fixtures import LocalService
from vtp import storage as vtp_storage

PARENT = "projects/local/locations/us-central1"
SECRET = "outside the storage root"
PAGE = b"<html><script>document.title = 'ran on the service origin'</script></html>"
SAFE_DOWNLOAD = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
}


@dataclass(frozen=True)
class Planted:
    """A bucket whose folder holds links a replica planted, and the folder they point into."""

    service: LocalService
    bucket: str
    outside: Path

    @property
    def folder(self) -> Path:
        return self.service.gcs_root / self.bucket

    def snapshot(self) -> dict[str, bytes]:
        """Every file outside the root the links reach, by relative name: what must not change."""
        return {
            p.relative_to(self.outside).as_posix(): p.read_bytes()
            for p in sorted(self.outside.rglob("*"))
            if p.is_file()
        }


@pytest.fixture(scope="module")
def planted(local_service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Planted:
    """Links to a file and a folder outside the root, a bucket that is such a link, and a link
    that stays inside the root, all made on disk as a replica would."""
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text(SECRET)
    (outside / "package.tar.gz").write_bytes(b"not really an archive")
    (outside / "model").mkdir()
    (outside / "model" / "config.json").write_text('{"task": "x"}')
    folder = local_service.gcs_root / "planted"
    folder.mkdir(parents=True)
    (folder / "ok.txt").write_text("inside")
    (folder / "out-file").symlink_to(outside / "secret.txt")
    (folder / "out-package.tar.gz").symlink_to(outside / "package.tar.gz")
    (folder / "out-dir").symlink_to(outside, target_is_directory=True)
    (folder / "in-link.txt").symlink_to(folder / "ok.txt")
    (local_service.gcs_root / "out-bucket").symlink_to(outside, target_is_directory=True)
    return Planted(local_service, "planted", outside)


@pytest.fixture
def client(local_service: LocalService, monkeypatch: pytest.MonkeyPatch) -> storage.Client:
    """google-cloud-storage pointed at the service as a user points it."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", local_service.url)
    return storage.Client(project="local", credentials=local_service.credentials())


def object_url(service: LocalService, bucket: str, name: str, tail: str = "") -> str:
    """`/storage/v1/b/{bucket}/o/{name}` with the name percent-encoded, as clients send it."""
    return f"{service.url}/storage/v1/b/{bucket}/o/{quote(name, safe='')}{tail}"


def refused(response: requests.Response, *named: str) -> None:
    """A 4xx in Google's JSON shape whose message names each of `named`; no secret in it."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text)
    message = response.json()["error"]["message"]
    for text in named:
        assert text in message, message
    assert SECRET not in response.text


# -- 1. downloads are never active content --------------------------------------------------


@pytest.mark.parametrize("name", ["page.html", "image.svg", 'we"ird;name\u00e9.html'])
@pytest.mark.parametrize("route", ["json-api", "download"])
def test_downloads_are_attachments_that_cannot_run_script(client, local_service, name, route):
    bucket = client.bucket("downloads")
    if not bucket.exists():
        client.create_bucket("downloads")
    bucket.blob(name).upload_from_string(PAGE)
    url = (
        object_url(local_service, "downloads", name, "?alt=media")
        if route == "json-api"
        else f"{local_service.url}/download/storage/v1/b/downloads/o/{quote(name, safe='')}"
    )
    for extra in ({}, {"Range": "bytes=0-9"}):
        answer = local_service.session().get(url, headers=extra, timeout=10)
        assert answer.status_code == (206 if extra else 200)
        for header, value in SAFE_DOWNLOAD.items():
            assert answer.headers.get(header) == value, header
        disposition = answer.headers["Content-Disposition"]
        assert disposition.startswith("attachment; filename=")
        plain = disposition.split("filename=", 1)[1].split(";", 1)[0]
        assert plain.startswith('"') and plain.endswith('"') and '"' not in plain[1:-1]
        assert "filename*=UTF-8''" + quote(name, safe="") in disposition
        assert answer.content == (PAGE[:10] if extra else PAGE)


def test_google_cloud_storage_still_downloads_whole_ranged_and_to_a_file(client, tmp_path):
    bucket = client.create_bucket("clients-download")
    bucket.blob("site/index.html").upload_from_string(PAGE, content_type="text/html")
    blob = bucket.blob("site/index.html")
    assert blob.download_as_bytes() == PAGE
    assert blob.download_as_bytes(start=6, end=13) == PAGE[6:14]
    target = tmp_path / "index.html"
    blob.download_to_filename(target)  # the client checks the md5/crc32c it is sent
    assert target.read_bytes() == PAGE


def test_a_range_whose_last_byte_comes_before_its_first_is_ignored(client, local_service):
    bucket = client.create_bucket("backwards-range")
    bucket.blob("a.txt").upload_from_string(PAGE)
    url = f"{local_service.url}/download/storage/v1/b/backwards-range/o/a.txt"
    answer = local_service.session().get(url, headers={"Range": "bytes=5-1"}, timeout=10)
    assert answer.status_code == 200 and answer.content == PAGE  # RFC 9110: ignored, not a 5xx
    assert answer.headers["Content-Disposition"].startswith("attachment")


# -- 2. links out of the root ----------------------------------------------------------------


THROUGH_LINKS = ["out-file", "out-dir/secret.txt"]


@pytest.mark.parametrize("name", THROUGH_LINKS)
def test_reading_through_a_link_out_of_the_root_is_refused(planted, name):
    session = planted.service.session()
    for tail in ("", "?alt=media"):
        refused(
            session.get(object_url(planted.service, planted.bucket, name, tail), timeout=10), name
        )
    media = f"{planted.service.url}/download/storage/v1/b/{planted.bucket}/o/{quote(name, safe='')}"
    refused(session.get(media, timeout=10), name)


@pytest.mark.parametrize("name", [*THROUGH_LINKS, "out-dir/new.txt", "out-dir/model/new.txt"])
def test_writing_through_a_link_out_of_the_root_is_refused(client, planted, name):
    before = planted.snapshot()
    with pytest.raises(exceptions.BadRequest, match="out-"):
        client.bucket(planted.bucket).blob(name).upload_from_string("overwritten")
    url = f"{planted.service.url}/upload/storage/v1/b/{planted.bucket}/o"
    session = planted.service.session()
    refused(session.post(url, params={"uploadType": "media", "name": name}, data=b"x"), name)
    resumable = session.post(url, params={"uploadType": "resumable"}, json={"name": name})
    refused(resumable, name)
    assert planted.snapshot() == before


@pytest.mark.parametrize("name", THROUGH_LINKS)
def test_deleting_through_a_link_out_of_the_root_is_refused(planted, name):
    before = planted.snapshot()
    answer = planted.service.session().delete(
        object_url(planted.service, planted.bucket, name), timeout=10
    )
    refused(answer, name)
    assert planted.snapshot() == before and (planted.folder / "out-file").is_symlink()


@pytest.mark.parametrize("verb", ["copyTo", "rewriteTo"])
def test_copying_from_or_to_a_link_out_of_the_root_is_refused(planted, verb):
    before = planted.snapshot()
    session, service, bucket = planted.service.session(), planted.service, planted.bucket
    out = f"/{verb}/b/{bucket}/o/copied.txt"
    refused(session.post(object_url(service, bucket, "out-file", out), timeout=10), "out-file")
    into = f"/{verb}/b/{bucket}/o/{quote('out-dir/copied.txt', safe='')}"
    refused(session.post(object_url(service, bucket, "ok.txt", into), timeout=10), "out-dir")
    assert not (planted.folder / "copied.txt").exists()
    assert planted.snapshot() == before


def test_composing_from_or_to_a_link_out_of_the_root_is_refused(planted):
    before = planted.snapshot()
    session, service, bucket = planted.service.session(), planted.service, planted.bucket
    parts = {"sourceObjects": [{"name": "ok.txt"}, {"name": "out-file"}]}
    answer = session.post(object_url(service, bucket, "joined.txt", "/compose"), json=parts)
    refused(answer, "out-file")
    parts = {"sourceObjects": [{"name": "ok.txt"}]}
    answer = session.post(object_url(service, bucket, "out-dir/joined.txt", "/compose"), json=parts)
    refused(answer, "out-dir")
    assert not (planted.folder / "joined.txt").exists()
    assert planted.snapshot() == before


def test_listings_leave_out_links_out_of_the_root_and_follow_links_inside(client, planted):
    names = [b.name for b in client.list_blobs(planted.bucket)]
    assert names == ["in-link.txt", "ok.txt"]
    assert list(client.list_blobs(planted.bucket, prefix="out-dir/")) == []
    assert client.bucket(planted.bucket).blob("in-link.txt").download_as_text() == "inside"
    assert "out-bucket" not in [b.name for b in client.list_buckets()]
    answer = planted.service.session().get(
        f"{planted.service.url}/storage/v1/b/out-bucket/o", timeout=10
    )
    refused(answer, "out-bucket")


def test_a_planted_upload_folder_or_session_file_leads_nowhere_outside(client, planted, tmp_path):
    before = planted.snapshot()
    uploads = planted.service.gcs_root / ".vtp-uploads"
    session = planted.service.session()
    url = f"{planted.service.url}/upload/storage/v1/b/{planted.bucket}/o"
    started = session.post(url, params={"uploadType": "resumable"}, json={"name": "big.bin"})
    location = started.headers["Location"]
    part = uploads / f"session-{started.headers['X-GUploader-UploadID']}.part"
    part.unlink()
    part.symlink_to(planted.outside / "secret.txt")  # a replica swaps the session's bytes file
    answer = session.put(location, data=b"overwritten", timeout=10)
    assert 400 <= answer.status_code < 500 and SECRET not in answer.text
    assert planted.snapshot() == before
    aside = tmp_path / "uploads-aside"
    uploads.rename(aside)
    uploads.symlink_to(planted.outside, target_is_directory=True)  # the whole folder, now
    try:
        bucket = client.create_bucket("after-planting")
        bucket.blob("after.bin", chunk_size=256 << 10).upload_from_string(os.urandom(300 << 10))
        assert (planted.service.gcs_root / "after-planting/after.bin").stat().st_size == 300 << 10
        assert planted.snapshot() == before
        assert uploads.is_dir() and not uploads.is_symlink()  # the service made its own again
    finally:
        if uploads.is_symlink():
            uploads.unlink()


def test_job_model_and_pipeline_uris_through_a_link_out_of_the_root_are_refused(planted):
    before = planted.snapshot()
    service, session, bucket = planted.service, planted.service.session(), planted.bucket
    package = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "pythonPackageSpec": {
            "executorImageUri": "x",
            "packageUris": [f"gs://{bucket}/out-package.tar.gz"],
            "pythonModule": "m",
        },
    }
    job = {"displayName": "x", "jobSpec": {"workerPoolSpecs": [package]}}
    refused(session.post(f"{service.url}/v1/{PARENT}/customJobs", json=job), "packageUris")
    command = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "python:3.11", "command": ["true"]},
    }
    job = {
        "displayName": "x",
        "jobSpec": {
            "workerPoolSpecs": [command],
            "baseOutputDirectory": {"outputUriPrefix": f"gs://{bucket}/out-dir/job"},
        },
    }
    answer = session.post(f"{service.url}/v1/{PARENT}/customJobs", json=job)
    refused(answer, "baseOutputDirectory.outputUriPrefix")
    model = {"displayName": "m", "artifactUri": f"gs://{bucket}/out-dir/model",
             "containerSpec": {"imageUri": "x"}}  # fmt: skip
    answer = session.post(f"{service.url}/v1/{PARENT}/models:upload", json={"model": model})
    if answer.status_code == 200:  # an operation: its error names the field
        operation = session.get(f"{service.url}/v1/{answer.json()['name']}", timeout=10).json()
        assert operation["done"] and "model.artifactUri" in operation["error"]["message"]
    else:
        refused(answer, "model.artifactUri")
    spec = {"pipelineInfo": {"name": "p"}, "root": {"dag": {"tasks": {}}}, "schemaVersion": "2.1.0"}
    runtime = {"gcsOutputDirectory": f"gs://{bucket}/out-dir/pipeline-root"}
    body = {"pipelineSpec": spec, "runtimeConfig": runtime}
    answer = session.post(f"{service.url}/v1/{PARENT}/pipelineJobs", json=body)
    refused(answer, "gcsOutputDirectory")
    assert planted.snapshot() == before


# -- 3. list prefixes ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("prefix", "../../../../etc/"),
        ("prefix", "a/../../"),
        ("prefix", "/etc/"),
        ("prefix", "a//"),
        ("prefix", "nul\0"),
        ("delimiter", "/\0"),
        ("startOffset", "a\nb"),
        ("endOffset", "\\x"),
    ],
)
def test_list_parameters_are_checked_like_object_names(client, local_service, field, value):
    if not client.bucket("listing").exists():
        client.create_bucket("listing")
    answer = local_service.session().get(
        f"{local_service.url}/storage/v1/b/listing/o", params={field: value}, timeout=10
    )
    assert answer.status_code == 400, answer.text
    assert field in answer.json()["error"]["message"]
    assert "passwd" not in answer.text


def test_a_prefix_that_is_a_partial_name_still_lists(client):
    bucket = client.create_bucket("partial-prefix")
    for name in ("dir/.env", "dir/..x", "dir/a.txt"):
        bucket.blob(name).upload_from_string(name)
    assert [b.name for b in client.list_blobs(bucket, prefix="dir/.")] == ["dir/..x", "dir/.env"]


# -- 4. upload ids and names too long for the file system --------------------------------------


def test_cancelling_an_upload_checks_its_id(local_service, tmp_path):
    uploads = local_service.gcs_root / ".vtp-uploads"
    (uploads / "session-").mkdir(parents=True, exist_ok=True)  # what a replica could make
    victim = tmp_path / "victim"
    for suffix in (".json", ".part"):
        victim.with_suffix(suffix).write_text("keep me")
    upload_id = "/" + "../" * 64 + victim.as_posix().lstrip("/")
    url = f"{local_service.url}/upload/storage/v1/b/any-bucket/o"
    session = local_service.session()
    for method in ("DELETE", "PUT"):
        answer = session.request(
            method, url, params={"uploadType": "resumable", "upload_id": upload_id}, timeout=10
        )
        assert answer.status_code == 400 and "upload_id" in answer.json()["error"]["message"]
    assert victim.with_suffix(".json").exists() and victim.with_suffix(".part").exists()


@pytest.mark.parametrize(
    ("name", "why"),
    [("a" * 300, "255"), ("d/" + "b" * 256 + "/c.txt", "255"), ("x" * 1025, "1024")],
)
def test_names_too_long_for_the_file_system_are_a_400_naming_the_object(
    client, local_service, name, why
):
    if not client.bucket("long-names").exists():
        client.create_bucket("long-names")
    session = local_service.session()
    upload = f"{local_service.url}/upload/storage/v1/b/long-names/o"
    answers = [
        session.post(upload, params={"uploadType": "media", "name": name}, data=b"x"),
        session.post(upload, params={"uploadType": "resumable"}, json={"name": name}),
        session.get(object_url(local_service, "long-names", name), timeout=10),
        session.get(object_url(local_service, "long-names", name, "?alt=media"), timeout=10),
        session.delete(object_url(local_service, "long-names", name), timeout=10),
    ]
    for answer in answers:
        assert answer.status_code == 400, answer.text
        message = answer.json()["error"]["message"]
        assert name[:40] in message and why in message


def test_a_name_that_is_not_unicode_text_is_a_400(local_service, client):
    if not client.bucket("odd-names").exists():
        client.create_bucket("odd-names")
    body = b'{"name": "\\ud800.txt"}'  # a lone surrogate: valid JSON, no UTF-8 for it
    answer = local_service.session().post(
        f"{local_service.url}/upload/storage/v1/b/odd-names/o",
        params={"uploadType": "resumable"},
        data=body,
        headers={"Content-Type": "application/json"},
        timeout=10,
    )
    assert answer.status_code == 400 and "object name" in answer.json()["error"]["message"]


def test_replicas_and_tasks_mapping_gs_uris_get_the_same_boundary(tmp_path, monkeypatch):
    """`vtp.storage.local_path` (what the trainer, components and the engine use) refuses a URI
    through a link out of the root, follows one inside it, and names too long a segment."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "b").mkdir(parents=True)
    outside.mkdir()
    (root / "b" / "out").symlink_to(outside, target_is_directory=True)
    (root / "b" / "in").symlink_to(root / "b", target_is_directory=True)
    monkeypatch.setenv(vtp_storage.GCS_ROOT_ENV, str(root))
    for uri in ("gs://b/out", "gs://b/out/x", "gs://b/in/out/x"):
        with pytest.raises(ValueError, match="symbolic link"):
            vtp_storage.local_path(uri)
    assert vtp_storage.local_path("gs://b/in/x") == root / "b" / "in" / "x"
    with pytest.raises(ValueError, match="255"):
        vtp_storage.local_path("gs://b/" + "x" * 256)
