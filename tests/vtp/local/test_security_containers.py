"""Issue #38: what a user's image, run by the local service with Podman, sees of the host.

A custom job's replica in its own image (Debian with Python, `tests/container_images.py`) runs
a probe that looks everywhere it can for the service's token: every file it can read (its
image, /gcs, whatever else is mounted), the environment and command line of every process it
can see, and the host path of the state directory. It reports what it found to /gcs; the test
then checks that the token appears nowhere, that the state directory is not there, and that
its way to the service is the API with the credential it was given (`workload_token`), not
the token and not the console's sign-in. A canary the test plants in /gcs shows that the search
finds what is there. Skipped where Podman is not installed (`.ci/run` installs it).
"""

import hashlib
import json
import os
import secrets
from pathlib import Path

import requests

from tests import container_images
from tests.container_images import engine_fixture  # noqa: F401 (container_engine)
from tests.fixtures import LocalService, State, wait_for_state
from tests.vtp.local.conftest import custom_job
from vtp import containers
from vtp.local.console.signin import mint

PARENT = "projects/local/locations/us-central1"

PROBE = r"""
import hashlib, json, os, re, stat, sys, urllib.error, urllib.request

wanted = {"token": sys.argv[1], "canary": sys.argv[2]}
state_dir = sys.argv[3]
WORD = re.compile(rb"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])")
found = {name: [] for name in wanted}

def search(where, data):
    for word in WORD.findall(data):
        digest = hashlib.sha256(word).hexdigest()
        for name, needle in wanted.items():
            if digest == needle:
                found[name].append(where)

scanned = 0
for folder, dirs, files in os.walk("/"):
    if folder == "/":
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
    for name in files:
        path = os.path.join(folder, name)
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            with open(path, "rb") as file:
                search(path, file.read(16 << 20))
            scanned += 1
        except OSError:
            pass
for pid in os.listdir("/proc"):
    for part in ("environ", "cmdline"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as file:
                search(f"/proc/{pid}/{part}", file.read())
        except OSError:
            pass

def status(method, path, token="", body=None):
    request = urllib.request.Request(
        os.environ["VTP_LOCAL_ENDPOINT"] + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json",
                 **({"Authorization": f"Bearer {token}"} if token else {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code

jobs = "/v1/projects/local/locations/us-central1/customJobs"
report = {
    "found": found,
    "scanned": scanned,
    "state_dir_seen": os.path.exists(state_dir),
    "gcs": sorted(os.listdir("/gcs")),
    "variables": sorted(os.environ),
    "credential": os.environ.get("VTP_LOCAL_TOKEN", ""),
    "api_with_credential": status("GET", jobs, os.environ.get("VTP_LOCAL_TOKEN", "")),
    "api_without": status("GET", jobs),
    "signin_forged": status("POST", "/console/signin", body={"code": "0.AAAA.BBBB"}),
}
with open("/gcs/probe/report.json", "w") as out:
    json.dump(report, out)
"""
"""What the user's image runs: search everything it can reach for the token, try the service."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_users_image_cannot_read_the_token_or_the_state_directory(
    tmp_path: Path, container_engine
) -> None:
    image = container_images.debian_python(container_engine)
    service = LocalService(tmp_path / "state", env=container_engine.service_env()).start()
    try:
        token = service.token
        canary = secrets.token_urlsafe(32)
        (service.gcs_root / "probe").mkdir(parents=True)
        (service.gcs_root / "probe" / "canary.txt").write_text(f"{canary}\n")
        pool = {
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": "1",
            "containerSpec": {
                "imageUri": image,
                "command": ["python3", "-c", PROBE],
                "args": [_sha(token), _sha(canary), str(service.state_dir.resolve())],
            },
        }
        client = service.client()
        job = client.create_custom_job(parent=PARENT, custom_job=custom_job(pool))
        ended = wait_for_state(client, job.name, timeout=300)
        assert ended.state == State.JOB_STATE_SUCCEEDED, ended.error.message
        report = json.loads((service.gcs_root / "probe" / "report.json").read_text())
        storage = sorted(os.listdir(service.gcs_root))
    finally:
        service.stop()

    # The search works: it found the canary where the test put it, having read the image.
    assert report["found"]["canary"] == ["/gcs/probe/canary.txt"]
    assert report["scanned"] > 1000
    # The token is in no file, environment or command line the image can see.
    assert report["found"]["token"] == []
    assert not report["state_dir_seen"]
    assert report["gcs"] == storage  # /gcs is the storage root, as Vertex's is the buckets
    assert "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE" not in report["variables"]
    # Its way in is the API with the credential it was given, as a replica's on Vertex.
    assert report["credential"] == containers.workload_token(token, job.name) != token
    assert report["api_with_credential"] == 200
    assert report["api_without"] == 401
    assert report["signin_forged"] == 401


def test_the_workload_credential_calls_the_api_but_signs_in_no_console(local_service) -> None:
    """A code made with the credential a container holds, as one made with the token would be,
    is refused: the console's sign-in needs the token itself."""
    workload = containers.workload_token(local_service.token, f"{PARENT}/customJobs/1")
    jobs = f"{local_service.url}/v1/{PARENT}/customJobs"
    listed = requests.get(jobs, headers={"Authorization": f"Bearer {workload}"}, timeout=30)
    assert listed.status_code == 200
    signin = f"{local_service.url}/console/signin"
    forged = requests.post(signin, json={"code": mint(workload)}, timeout=30)
    assert forged.status_code == 401
    genuine = requests.post(signin, json={"code": mint(local_service.token)}, timeout=30)
    assert genuine.status_code == 200 and genuine.json()["token"] == local_service.token
    wrong = containers.WORKLOAD_PREFIX + "QQ." + "A" * 43
    refused = requests.get(jobs, headers={"Authorization": f"Bearer {wrong}"}, timeout=30)
    assert refused.status_code == 401


def test_only_the_workload_credential_reaches_a_container() -> None:
    given = containers.client_environment(
        {"VTP_LOCAL_TOKEN": "t" * 43, "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": "/state/token", "A": "1"},
        {"PATH": os.environ.get("PATH", ""), "VTP_LOCAL_TOKEN": "t" * 43},
        f"{PARENT}/customJobs/1",
    )
    assert given["VTP_LOCAL_TOKEN"] == containers.workload_token("t" * 43, f"{PARENT}/customJobs/1")
    assert "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE" not in given and given["A"] == "1"
