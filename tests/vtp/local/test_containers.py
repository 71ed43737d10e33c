"""With a container engine, a custom job's replicas run in the job's own image (issue #28), with
each engine this machine has (Podman, Docker: `tests/container_images.py`).

The first test's image is made here, without a registry: the host's /bin/sh and the libraries it
loads, a marker file and an entrypoint script, imported with `ENGINE import`. The others run the
Debian base with Python. A cancelled job's container is stopped and removed, also one that
ignores SIGTERM, and also under Docker, whose containers are not below the client the service
kills; so are a dead service's (its watchdog kills them). On machines whose kernel refuses crun
or the default ulimits (this project's CI), Podman runs with runc, cgroupfs and a
containers.conf that clears `default_ulimits`, as docs/containers.md says.
"""

import io
import os
import subprocess
import tarfile
import time
import uuid
from pathlib import Path

import pytest

from tests import container_images
from tests.container_images import Engine, engine_fixture  # noqa: F401 (container_engine)
from tests.fixtures import LocalService, State, wait_for_state
from tests.vtp.local.conftest import custom_job

PARENT = "projects/local/locations/us-central1"
MACHINE = {"machineType": "n1-standard-4"}

ENTRYPOINT = """read marker < /marker
[ -e /work ] && host=yes || host=no
echo "$marker $host $CLOUD_ML_JOB_ID $*" > /gcs/b/out/$RANK
# The primary's exit ends the job and stops the others: it waits for the worker's line first.
if [ "$RANK" = 0 ]; then while [ ! -s /gcs/b/out/1 ]; do :; done; fi
"""
"""What the image runs: its marker, whether the host's /work shows, the job and its args."""


@pytest.fixture(scope="module")
def image(container_engine: Engine) -> tuple[str, str]:
    """(name, marker) of an image holding /bin/sh, /marker and /entrypoint.sh."""
    name, marker = f"localhost/vtp-test-{uuid.uuid4().hex[:8]}:1", uuid.uuid4().hex
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        for path in ["/bin/sh", *_libraries("/bin/sh")]:
            archive.add(os.path.realpath(path), arcname=path.lstrip("/"))
        for path, text in {"marker": marker + "\n", "entrypoint.sh": ENTRYPOINT}.items():
            member = tarfile.TarInfo(path)
            member.size, member.mode = len(text.encode()), 0o755
            archive.addfile(member, io.BytesIO(text.encode()))
    change = 'ENTRYPOINT ["/bin/sh", "/entrypoint.sh"]'
    container_engine.run("import", "--change", change, "-", name, input=data.getvalue())
    yield name, marker
    container_images.remove_image(container_engine, name)


def _libraries(program: str) -> list[str]:
    """The shared libraries `program` loads, as ldd names them."""
    out = subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout
    return [word for word in out.split() if word.startswith("/")]


def test_a_jobs_replicas_run_in_its_image(tmp_path: Path, container_engine, image) -> None:
    name, marker = image
    service = LocalService(tmp_path / "state", env=container_engine.service_env()).start()
    try:
        (service.gcs_root / "b" / "out").mkdir(parents=True)
        pool = {"machineSpec": MACHINE, "replicaCount": "1",
                "containerSpec": {"imageUri": name, "args": ["--epochs=1"]}}  # fmt: skip
        workers = {**pool, "containerSpec": {
            "imageUri": name, "command": ["/bin/sh", "/entrypoint.sh", "worker"]}}  # fmt: skip
        client = service.client()
        job = client.create_custom_job(parent=PARENT, custom_job=custom_job(pool, workers))
        ended = wait_for_state(client, job.name, timeout=120)
        assert ended.state == State.JOB_STATE_SUCCEEDED, ended.error.message
        job_id = job.name.rsplit("/", 1)[-1]
        out = service.gcs_root / "b" / "out"
        assert (out / "0").read_text().split() == [marker, "no", job_id, "--epochs=1"]
        assert (out / "1").read_text().split() == [marker, "no", job_id, "worker"]
        assert not _containers_of(container_engine, job_id)
    finally:
        service.stop()


def test_an_image_not_here_fails_the_create_naming_it(tmp_path: Path, container_engine) -> None:
    service = LocalService(tmp_path / "state", env=container_engine.service_env()).start()
    try:
        absent = f"localhost:1/vtp-absent-{uuid.uuid4().hex[:8]}:1"
        pool = {"machineSpec": MACHINE, "containerSpec": {"imageUri": absent}}
        with pytest.raises(Exception, match="could not be pulled") as raised:
            service.client().create_custom_job(parent=PARENT, custom_job=custom_job(pool))
        assert absent in str(raised.value) and "imageUri" in str(raised.value)
    finally:
        service.stop()


STUBBORN = "trap '' TERM; echo up > /gcs/b/up; while :; do sleep 1; done"
"""A replica that ignores SIGTERM (its `sleep` too), as a trainer stuck in a collective does."""


def _containers_of(engine: Engine, job_id: str, running_only: bool = False) -> list[str]:
    names = engine.container_names(running_only)
    return [name for name in names if name.startswith(f"vtp-{job_id}-")]


def _stubborn_job(service: LocalService, engine: Engine) -> tuple[str, str]:
    """Start a job whose replica ignores SIGTERM; (its name, its id) once it runs."""
    (service.gcs_root / "b").mkdir(parents=True)
    command = ["/bin/sh", "-c", STUBBORN]
    image = container_images.debian_python(engine)
    pool = {"machineSpec": MACHINE, "containerSpec": {"imageUri": image, "command": command}}
    job = service.client().create_custom_job(parent=PARENT, custom_job=custom_job(pool))
    deadline = time.monotonic() + 120
    while not (service.gcs_root / "b" / "up").exists():
        assert time.monotonic() < deadline, "the replica did not start"
        time.sleep(0.05)
    return job.name, job.name.rsplit("/", 1)[-1]


def test_a_cancelled_jobs_container_is_stopped_and_removed(
    tmp_path: Path, container_engine
) -> None:
    """SIGTERM is ignored, so the service SIGKILLs the engine's client after the grace period:
    under Docker the container outlives its client, and the service still ends it."""
    with LocalService(tmp_path / "state", env=container_engine.service_env()) as service:
        name, job_id = _stubborn_job(service, container_engine)
        # dockerd may list it as running a moment after its first process has run
        deadline = time.monotonic() + 60
        while not _containers_of(container_engine, job_id, running_only=True):
            assert time.monotonic() < deadline, container_engine.container_names()
            time.sleep(0.1)
        client = service.client()
        client.cancel_custom_job(name=name)
        assert wait_for_state(client, name, timeout=120).state == State.JOB_STATE_CANCELLED
        assert _containers_of(container_engine, job_id) == []


def test_a_dead_services_containers_are_stopped(tmp_path: Path, container_engine) -> None:
    """The service killed with SIGKILL: its watchdog kills what carries its id, containers'
    processes included (Docker's are the daemon's), then removes the containers (Podman's
    monitor died too, and would list it as running forever)."""
    service = LocalService(tmp_path / "state", env=container_engine.service_env()).start()
    try:
        _name, job_id = _stubborn_job(service, container_engine)
    finally:
        service.kill()
    deadline = time.monotonic() + 60
    while _containers_of(container_engine, job_id):
        assert time.monotonic() < deadline, container_engine.container_names()
        time.sleep(0.1)


def test_a_command_the_image_lacks_fails_the_job_with_the_engines_status(
    tmp_path: Path,
    container_engine,
) -> None:
    """Both engines exit 127 for a command not in the image (126: not executable, 125: their
    own error), as a shell does; the job fails with Vertex's words and that status, and the
    replica's log has the engine's line saying why."""
    image = container_images.debian_python(container_engine)
    with LocalService(tmp_path / "state", env=container_engine.service_env()) as service:
        for command, status in ((["vtp-no-such-command"], 127), (["/etc/passwd"], 126)):
            pool = {"machineSpec": MACHINE,
                    "containerSpec": {"imageUri": image, "command": command}}  # fmt: skip
            client = service.client()
            job = client.create_custom_job(parent=PARENT, custom_job=custom_job(pool))
            ended = wait_for_state(client, job.name, timeout=120)
            assert ended.state == State.JOB_STATE_FAILED
            assert f"exited with a non-zero status of {status}" in ended.error.message
            job_id = job.name.rsplit("/", 1)[-1]
            log = service.state_dir / "jobs" / job_id / "logs" / "workerpool0-0.log"
            assert command[0] in log.read_text()
