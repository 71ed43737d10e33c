"""Code that uses Cloud Storage FUSE paths (`/gcs/<bucket>/...`) reaches the local storage root."""

from pathlib import Path

from tests.fixtures import wait_for_state
from tests.vtp.local.conftest import custom_job

WRITE_AND_READ = (
    "import os, pathlib; p = pathlib.Path('/gcs/fuse-bucket/out/x.txt'); "
    "p.parent.mkdir(parents=True, exist_ok=True); p.write_text('written through /gcs'); "
    "print(pathlib.Path('/gcs/fuse-bucket/in.txt').read_text())"
)


def test_a_script_writing_to_gcs_paths_finds_its_file_under_the_storage_root(local_service):
    (local_service.gcs_root / "fuse-bucket").mkdir(parents=True, exist_ok=True)
    (local_service.gcs_root / "fuse-bucket" / "in.txt").write_text("uploaded before the job")
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "python:3.11", "command": ["python", "-c", WRITE_AND_READ]},
    }
    job = custom_job(pool, display_name="fuse")
    created = local_service.client().create_custom_job(parent=local_service.parent, custom_job=job)
    ended = wait_for_state(local_service.client(), created.name)
    assert ended.state.name == "JOB_STATE_SUCCEEDED", ended.error.message
    written = local_service.gcs_root / "fuse-bucket" / "out" / "x.txt"
    assert written.read_text() == "written through /gcs"
    log = local_service.state_dir / "jobs" / created.name.rsplit("/", 1)[-1] / "logs"
    assert "uploaded before the job" in (log / "workerpool0-0.log").read_text()
    host = Path("/gcs")  # the mount is the replica's own: nothing shows on the host
    assert not host.is_dir() or not (host / "fuse-bucket").exists()
