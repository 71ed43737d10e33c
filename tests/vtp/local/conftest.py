"""Helpers for local-service tests: CustomJobs whose replicas run `scripted_replica.py`, models
deployed by plain REST calls, and storage clients run on a folder of files."""

import base64
import csv
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path
from urllib.parse import quote

import pytest
import requests
from google.cloud import aiplatform_v1, storage

from tests.fixtures import LocalService

SCRIPT = Path(__file__).with_name("scripted_replica.py")
OTHER_IMAGE = "python:3.11-slim"
"""Not this project's image: the service runs the explicit command on the host."""
PROJECT_IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"
"""This project's image: it runs `python -m vtp.trainer` (or serves, given routes)."""

DEEP_TREE = r"""
import os, sys

def deep(top, depth):
    os.makedirs(top, exist_ok=True)
    here = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=here)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
        os.close(here)
        here = below
    os.close(os.open("leaf.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here))
    os.close(here)
"""
"""The start of a Python program (an attacker's replica) defining `deep(top, depth)`: a folder tree
`depth` deep below `top`, made through open folders, `leaf.txt` at its bottom."""


def scripted_pool(record: Path, *args: str, replicas: int = 1, **env: str) -> dict:
    """A worker pool (REST JSON form) running the scripted replica with `args`."""
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": str(replicas),
        "containerSpec": {
            "imageUri": OTHER_IMAGE,
            "command": ["python", str(SCRIPT), "--record", str(record), *args],
            "env": [{"name": k, "value": v} for k, v in env.items()],
        },
    }


def two_replica_trainer_job(
    name: str, output: str, flags: dict, env: dict[str, str], **spec: object
) -> dict:
    """A CustomJob (the client's dict form) of two replicas (pools 0 and 1) of this project's
    image running the trainer with `flags` and `env`, its outputs under `output` (gs://), and
    further jobSpec fields `spec` (`scheduling`, ...)."""
    container = {
        "image_uri": PROJECT_IMAGE,
        "args": [f"--{flag}={value}" for flag, value in flags.items()],
        "env": [{"name": k, "value": v} for k, v in env.items()],
    }
    pool = {"machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1}
    pool["container_spec"] = container
    job_spec = {
        "worker_pool_specs": [pool, pool],
        "base_output_directory": {"output_uri_prefix": output},
        **spec,
    }
    return {"display_name": name, "job_spec": job_spec}


def custom_job(
    *pools: dict, display_name: str = "scripted", **spec: object
) -> aiplatform_v1.CustomJob:
    """A CustomJob of `pools` (REST JSON dicts) and further jobSpec fields (`scheduling`, ...)."""
    body = {"displayName": display_name, "jobSpec": {"workerPoolSpecs": list(pools), **spec}}
    return aiplatform_v1.CustomJob.from_json(json.dumps(body))


def starts(record: Path, replica: str) -> list[int]:
    """Pids of every start of `replica` so far."""
    path = record / f"{replica}.starts"
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def write_sdist(path: Path, module: str, setup_first: str = "", **files: str) -> None:
    """A source archive of package `module` at `path`: its setup.py (running `setup_first`
    before setuptools), `__init__.py` and `files` (names relative to the package folder, e.g.
    `task_py="..."` is `task.py`)."""
    members = {
        "setup.py": f"{setup_first}\nfrom setuptools import setup\nsetup(name='{module}', "
        f"version='0.1', packages=['{module}'])\n",
        f"{module}/__init__.py": "",
        **{f"{module}/{name.replace('_py', '.py')}": text for name, text in files.items()},
    }
    write_source_archive(path, f"{module}-0.1", members)


def write_source_archive(path: Path, top: str, members: dict[str, str]) -> None:
    """A gzipped tar at `path` of `members` (their text by name) inside the folder `top`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def write_wheel(
    folder: Path, name: str, version: str, files: dict[str, bytes], requires: str = ""
) -> Path:
    """A wheel of `files` (paths inside site-packages) as `name` `version`, with its dist-info
    (`requires`, where given, its Requires-Dist)."""
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    if requires:
        metadata += f"Requires-Dist: {requires}\n"
    members = {
        **files,
        f"{info}/METADATA": metadata.encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in members.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        writer.writerow([path, f"sha256={digest}", len(data)])
    writer.writerow([f"{info}/RECORD", "", ""])
    members[f"{info}/RECORD"] = record.getvalue().encode()
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in members.items():
            archive.writestr(path, data)
    return wheel


DIGITS_INSTANCE = [float(i % 17) for i in range(64)]
"""One input of the digits task (64 pixel values), as a prediction request's instance."""


class ServiceApi:
    """REST calls to the service, with its token: models, endpoints, operations, objects."""

    def __init__(self, service: LocalService) -> None:
        self.service = service
        self.session = service.session()
        self.base = f"{service.url}/v1/{service.parent}"

    def upload(
        self, uri: str, image: str = PROJECT_IMAGE, env: dict[str, str] | None = None
    ) -> str:
        """Register a model served by `image` from `uri` (`env` set in its container); its
        name."""
        spec: dict = {"imageUri": image}
        if image == PROJECT_IMAGE:
            spec.update(predictRoute="/predict", healthRoute="/health")
        if env is not None:
            spec["env"] = [{"name": k, "value": v} for k, v in env.items()]
        body = {"model": {"displayName": "m", "artifactUri": uri, "containerSpec": spec}}
        answer = self.session.post(f"{self.base}/models:upload", json=body, timeout=30)
        assert answer.status_code == 200 and "error" not in answer.json(), answer.text
        return answer.json()["response"]["model"]

    def endpoint(self) -> str:
        """A new endpoint's name."""
        created = self.session.post(f"{self.base}/endpoints", json={"displayName": "e"}, timeout=30)
        return created.json()["response"]["name"]

    def deploy(self, endpoint: str, model: str) -> requests.Response:
        """The deployModel request's answer (an Operation, or the error)."""
        body = {"deployedModel": {"model": model}}
        url = f"{self.service.url}/v1/{endpoint}:deployModel"
        return self.session.post(url, json=body, timeout=30)

    def finish(self, operation: dict) -> dict:
        """The operation, once done."""
        deadline = time.monotonic() + 300
        while not operation.get("done"):
            assert time.monotonic() < deadline, f"operation not done: {operation}"
            url = f"{self.service.url}/v1/{operation['name']}:wait"
            operation = self.session.post(url, json={"timeout": "10s"}, timeout=60).json()
        return operation

    def deployed_models(self, endpoint: str) -> list:
        """What the endpoint lists as deployed."""
        got = self.session.get(f"{self.service.url}/v1/{endpoint}", timeout=30).json()
        return got.get("deployedModels", [])

    def object_status(self, bucket: str, name: str) -> int:
        """The storage API's status for the object's metadata."""
        url = f"{self.service.url}/storage/v1/b/{bucket}/o/{quote(name, safe='')}"
        return self.session.get(url, timeout=30).status_code


def storage_client(service: LocalService, monkeypatch: pytest.MonkeyPatch) -> storage.Client:
    """google-cloud-storage pointed at `service` as a user points it (the token passed)."""
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", service.url)
    return storage.Client(project="local", credentials=service.credentials())


@pytest.fixture
def gcs_client(local_service: LocalService, monkeypatch: pytest.MonkeyPatch) -> storage.Client:
    """`storage_client` of the module's `local_service`."""
    return storage_client(local_service, monkeypatch)


CLIENT_TIMEOUT = 120
"""Seconds any one client command may take: a client retrying against the internet fails the
test."""


def client_exec(url: str, *argv: str) -> list[str]:
    """`argv` under `vtp local exec` against the service at `url`."""
    return [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", url, "--", *argv]


def attempt_client(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """`argv` run within `CLIENT_TIMEOUT`, in a session of its own: past it, the whole group is
    killed (gsutil leaves processes of its own behind otherwise) and the test fails."""
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=CLIENT_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"{' '.join(argv)} ran past {CLIENT_TIMEOUT}s") from None
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def run_client(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    """`attempt_client`, a non-zero exit failing the test with the command's stderr."""
    result = attempt_client(argv, env, cwd)
    assert result.returncode == 0, f"{' '.join(argv)} exited {result.returncode}:\n{result.stderr}"
    return result


def file_tree(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` (its path relative to it) and its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def nested_folder(root: Path, name: str, deepest: str, data: bytes) -> Path:
    """`root/name`: two files at the top (a.txt, b.json), `deepest` holding `data` two folders
    down (sub/deeper/)."""
    (root / name / "sub" / "deeper").mkdir(parents=True)
    (root / name / "a.txt").write_text("a\n")
    (root / name / "b.json").write_text('{"b": 1}\n')
    (root / name / "sub" / "deeper" / deepest).write_bytes(data)
    return root / name
