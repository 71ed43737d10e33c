"""Helpers for local-service tests: CustomJobs whose replicas run `scripted_replica.py`."""

import io
import json
import tarfile
from pathlib import Path

from google.cloud import aiplatform_v1

SCRIPT = Path(__file__).with_name("scripted_replica.py")
OTHER_IMAGE = "python:3.11-slim"
"""Not this project's image: the service runs the explicit command on the host."""


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
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{module}-0.1/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
