"""The local service is safe to leave running: one test per way it was attacked.

Each attack is what a web page, a local process of another user's making, or a malformed client
could send; the service must refuse it without running anything and without leaving its root.
"""

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.fixtures import LocalService, wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job, scripted_pool

PARENT = "projects/local/locations/us-central1"
CREATE = f"/v1/{PARENT}/customJobs"


def touching(path: Path) -> dict:
    """A job whose only replica creates `path`: proof that a command ran."""
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "evil/x", "command": ["touch", str(path)]},
    }
    return {"displayName": "x", "jobSpec": {"workerPoolSpecs": [pool]}}


def raw(service: LocalService, request: bytes, timeout: float = 5) -> tuple[int, bytes, float]:
    """Send `request` bytes as they are; the status, body and seconds until the answer."""
    port = int(service.url.rsplit(":", 1)[1])
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n\r\n" not in answer or len(answer.split(b"\r\n\r\n", 1)[1]) < _length(answer):
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1], time.monotonic() - started


def _length(answer: bytes) -> int:
    for line in answer.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 0


def jobs(service: LocalService) -> list[str]:
    return [job.display_name for job in service.client().list_custom_jobs(parent=PARENT)]


def test_a_cross_site_simple_request_runs_nothing(local_service, tmp_path) -> None:
    pwned = tmp_path / "pwned"
    response = requests.post(
        local_service.url + CREATE,
        data=json.dumps(touching(pwned)),
        headers={"Content-Type": "text/plain", "Origin": "http://evil.example"},
        timeout=10,
    )
    assert response.status_code == 403
    assert response.json()["error"]["status"] == "PERMISSION_DENIED"
    # Even with the token (a page cannot have it) a foreign Origin and a non-JSON body are out.
    with_token = local_service.session().post(
        local_service.url + CREATE,
        data=json.dumps(touching(pwned)),
        headers={"Content-Type": "text/plain"},
        timeout=10,
    )
    assert with_token.status_code == 415
    time.sleep(0.5)
    assert not pwned.exists() and jobs(local_service) == []


def test_a_request_without_the_token_is_refused(local_service, tmp_path) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic x"}):
        response = requests.post(
            local_service.url + CREATE,
            json=touching(tmp_path / "pwned"),
            headers=headers,
            timeout=10,
        )
        assert response.status_code == 401, headers
        assert "token" in response.json()["error"]["message"]
    assert requests.get(local_service.url + "/healthz", timeout=10).status_code == 200
    token_file = local_service.state_dir / "token"
    assert token_file.stat().st_mode & 0o777 == 0o600


def test_a_rebinding_host_is_refused(local_service) -> None:
    response = local_service.session().get(
        f"{local_service.url}/v1/{PARENT}/customJobs",
        headers={"Host": "evil.example:80"},
        timeout=10,
    )
    assert response.status_code == 403
    assert "Host" in response.json()["error"]["message"]


TRAVERSALS = {
    "packageUris ..": (
        {
            "pythonPackageSpec": {
                "executorImageUri": "x",
                "packageUris": ["gs://b/../../etc/passwd"],
                "pythonModule": "m",
            }
        },
        "pythonPackageSpec.packageUris",
    ),
    "packageUris absolute path": (
        {
            "pythonPackageSpec": {
                "executorImageUri": "x",
                "packageUris": ["/etc/passwd"],
                "pythonModule": "m",
            }
        },
        "packageUris take gs:// URIs",
    ),
}


@pytest.mark.parametrize("case", TRAVERSALS, ids=list(TRAVERSALS))
def test_package_uris_that_leave_the_root_are_refused(local_service, case) -> None:
    pool, message = TRAVERSALS[case]
    body = {"displayName": "x", "jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "n1-standard-4"}, **pool}]}}  # fmt: skip
    response = local_service.session().post(local_service.url + CREATE, json=body, timeout=10)
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


def test_a_base_output_directory_that_leaves_the_root_is_refused(local_service, tmp_path) -> None:
    job = touching(tmp_path / "x")
    job["jobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": "gs://b/../../tmp/out"}
    response = local_service.session().post(local_service.url + CREATE, json=job, timeout=10)
    assert response.status_code == 400
    assert "baseOutputDirectory.outputUriPrefix" in response.json()["error"]["message"]


def test_a_model_artifact_uri_that_leaves_the_root_is_refused(local_service) -> None:
    body = {"model": {"displayName": "m", "artifactUri": "gs://b/../../../etc",
                      "containerSpec": {"imageUri": "x"}}}  # fmt: skip
    response = local_service.session().post(
        f"{local_service.url}/v1/{PARENT}/models:upload", json=body, timeout=10
    )
    answer = response.json()
    if response.status_code == 200:  # an operation: its error names the field
        answer = (
            local_service.session()
            .get(f"{local_service.url}/v1/{answer['name']}", timeout=10)
            .json()
        )
        assert answer["done"] and "model.artifactUri" in answer["error"]["message"]
    else:
        assert response.status_code == 400 and "model.artifactUri" in answer["error"]["message"]


def test_a_pipeline_root_that_leaves_the_root_is_refused(local_service) -> None:
    spec = {"pipelineInfo": {"name": "p"}, "root": {"dag": {"tasks": {}}}, "schemaVersion": "2.1.0"}
    body = {"pipelineSpec": spec, "runtimeConfig": {"gcsOutputDirectory": "gs://b/../../tmp"}}
    response = local_service.session().post(
        f"{local_service.url}/v1/{PARENT}/pipelineJobs", json=body, timeout=10
    )
    assert response.status_code == 400
    assert "gcsOutputDirectory" in response.json()["error"]["message"]


@pytest.mark.parametrize("length", [b"-1", b"abc", b"1000000000000000", b"\xc2\xb2"])
def test_a_bad_content_length_is_answered_at_once(local_service, length) -> None:
    port = local_service.url.rsplit(":", 1)[1]
    request = (
        (
            f"POST {CREATE} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Authorization: Bearer {local_service.token}\r\nContent-Type: application/json\r\n"
        ).encode()
        + b"Content-Length: "
        + length
        + b"\r\n\r\n"
    )
    status, body, seconds = raw(local_service, request)
    assert status in (400, 413) and seconds < 1.0
    assert b"Content-Length" in body or b"larger than" in body


def test_a_huge_replica_count_is_refused_at_once(local_service) -> None:
    job = {"displayName": "x", "jobSpec": {"workerPoolSpecs": [
        {"machineSpec": {"machineType": "n1-standard-4"},
         "containerSpec": {"imageUri": "x", "command": ["true"]}},
        {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1000000",
         "containerSpec": {"imageUri": "x", "command": ["true"]}}]}}  # fmt: skip
    started = time.monotonic()
    response = local_service.session().post(local_service.url + CREATE, json=job, timeout=10)
    assert response.status_code == 400 and time.monotonic() - started < 1.0
    assert "workerPoolSpecs[1].replicaCount" in response.json()["error"]["message"]


def test_replicas_get_a_containers_environment_not_the_services(tmp_path) -> None:
    secret = {"VTP_TEST_SECRET": "s3cret", "VTP_TEST_PASSED": "yes"}
    service = LocalService(tmp_path / "state", "--pass-env", "VTP_TEST_PASSED", env=secret)
    service.start()
    try:
        job = service.client().create_custom_job(
            parent=PARENT, custom_job=custom_job(scripted_pool(tmp_path))
        )
        wait_for_state(service.client(), job.name)
        env = json.loads((tmp_path / "workerpool0-0.env.json").read_text())
        assert "VTP_TEST_SECRET" not in env and env["VTP_TEST_PASSED"] == "yes"
        # Its own Python environment first (test_isolation.py), then the service interpreter's.
        bins = [env["VIRTUAL_ENV"] + "/bin", str(Path(sys.executable).parent)]
        assert env["PATH"].split(":")[:2] == bins
        assert "CLUSTER_SPEC" in env and "HOME" in env
    finally:
        service.stop()


def test_replicas_die_with_a_killed_service(tmp_path) -> None:
    service = LocalService(tmp_path / "state").start()
    job = service.client().create_custom_job(
        parent=PARENT,
        custom_job=custom_job(scripted_pool(tmp_path, "--sleep", "300", replicas=1)),
    )
    pids = wait_until(lambda: _starts(tmp_path), what="the replica to start")
    service.kill()  # SIGKILL: no chance to stop anything itself
    wait_until(lambda: not any(_alive(pid) for pid in pids), timeout=10, what="no orphans")
    assert job.name


def _starts(record: Path) -> list[int]:
    path = record / "workerpool0-0.starts"
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie waiting for its reaper counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False
