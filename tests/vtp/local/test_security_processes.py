"""What the service starts is contained: no process sees the service's shell, none outlives the
service, its state is the user's alone, a cancel stops an install, and replicas queue past a cap.

Each test is a finding of the outside review (issue #26), against a real `vtp local serve`.
"""

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import FAST_FLAGS, LocalService, State, wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job, scripted_pool, starts, write_sdist
from vtp.local.runtime.capacity import default_cap
from vtp.local.runtime.process import SERVICE_ENV

PARENT = "projects/local/locations/us-central1"
SECRET = {"VTP_TEST_SECRET": "s3cret", "AWS_SECRET_ACCESS_KEY": "hunter2"}


def sdist(path: Path, module: str, setup_body: str) -> str:
    """A source archive of `module` at `path` whose setup.py runs `setup_body` first; its URI
    when `path` is under a service's storage root (`<root>/<bucket>/...`)."""
    write_sdist(path, module, setup_first=setup_body, __main___py="print('ran')\n")
    return "gs://" + "/".join(path.parts[-2:])


def package_job(uri: str, module: str) -> dict:
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "pythonPackageSpec": {
            "executorImageUri": "python:3.11",
            "packageUris": [uri],
            "pythonModule": module,
        },
    }


def records_pid(record: Path) -> str:
    return f"import os, pathlib; pathlib.Path({str(record)!r}).write_text(str(os.getpid()))"


BLOCK = "import time\nwhile True: time.sleep(1)\n"
"""A setup.py that never ends: an install that hangs."""


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def service(tmp_path):
    service = LocalService(tmp_path / "state", env=SECRET).start()
    yield service
    if service.process and service.process.poll() is None:
        service.stop()


def test_a_package_install_gets_a_containers_environment_and_the_service_id(service, tmp_path):
    record = tmp_path / "setup-env.json"
    body = f"import json, os\nopen({str(record)!r}, 'w').write(json.dumps(dict(os.environ)))"
    uri = sdist(service.gcs_root / "b" / "envpkg-0.1.tar.gz", "envpkg", body)
    client = service.client()
    job = client.create_custom_job(parent=PARENT, custom_job=custom_job(package_job(uri, "envpkg")))
    assert wait_for_state(client, job.name).state == State.JOB_STATE_SUCCEEDED
    env = json.loads(record.read_text())
    assert not set(SECRET) & set(env)
    assert env[SERVICE_ENV] and env["PATH"].split(":")[0] == str(Path(sys.executable).parent)


PIPELINE = """
from kfp import dsl


@dsl.component(base_image="python:3.11")
def report(out: str):
    import json, os
    open(out, "w").write(json.dumps(dict(os.environ)))


@dsl.pipeline(name="envreport")
def envreport(out: str):
    report(out=out)
"""


@pytest.mark.slow
def test_a_pipeline_task_gets_a_containers_environment(tmp_path):
    (tmp_path / "envreport.py").write_text(PIPELINE)
    out = tmp_path / "task-env.json"
    run = subprocess.run(
        [sys.executable, "-m", "vtp", "run", "envreport.py", "--param", f"out={out}"],
        cwd=tmp_path, env={**os.environ, **SECRET}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    env = json.loads(out.read_text())
    assert not set(SECRET) & set(env)
    assert env[SERVICE_ENV] and env["VTP_LOCAL_ENDPOINT"] and env["VTP_LOCAL_TOKEN"]


def test_the_state_is_the_users_alone_whatever_the_umask(tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    (state / "left-by-an-old-service.log").write_text("token?")
    (state / "left-by-an-old-service.log").chmod(0o644)
    before = os.umask(0o022)
    try:
        service = LocalService(state).start()
    finally:
        os.umask(before)
    try:
        writes = "env; mkdir -p $VTP_GCS_ROOT/b/out && echo x > $VTP_GCS_ROOT/b/out/f"
        pool = {
            "machineSpec": {"machineType": "n1-standard-4"},
            "containerSpec": {"imageUri": "x/y", "command": ["sh", "-c", writes]},
        }
        client = service.client()
        job = client.create_custom_job(parent=PARENT, custom_job=custom_job(pool))
        assert wait_for_state(client, job.name).state == State.JOB_STATE_SUCCEEDED
        assert (state / "gcs" / "b" / "out" / "f").is_file()
        open_to_others = [
            f"{path.relative_to(state)} {stat.filemode(path.lstat().st_mode)}"
            for path in [state, *state.rglob("*")]
            if not path.is_symlink() and path.lstat().st_mode & 0o077
        ]
        assert open_to_others == []
        assert any(state.rglob("*.db")) and any(state.rglob("*.log"))
    finally:
        service.stop()


def test_objects_uploaded_through_the_storage_api_are_the_users_alone(service):
    session = service.session()
    made = session.post(f"{service.url}/storage/v1/b", json={"name": "team-data"}, timeout=10)
    assert made.status_code == 200, made.text
    url = f"{service.url}/upload/storage/v1/b/team-data/o?uploadType=media&name=private.txt"
    response = session.post(url, data=b"x", headers={"Content-Type": "text/plain"}, timeout=10)
    assert response.status_code == 200, response.text
    assert (service.gcs_root / "team-data" / "private.txt").stat().st_mode & 0o077 == 0


ESCAPE = (
    "import os, pathlib, sys; pathlib.Path(sys.argv[1]).write_text(str(os.getpid())); "
    "os.setsid(); os.execve('/bin/sleep', ['sleep', '300'], {})"
)
"""A replica that leaves the service's session and drops its whole environment."""


def test_nothing_the_service_started_survives_a_kill_9(service, tmp_path):
    client = service.client()
    escaped = tmp_path / "escaped.pid"
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "x/y", "command": ["python", "-c", ESCAPE, str(escaped)]},
    }
    client.create_custom_job(parent=PARENT, custom_job=custom_job(pool))
    installing = tmp_path / "install.pid"
    uri = sdist(
        service.gcs_root / "b" / "hang-0.1.tar.gz", "hang", records_pid(installing) + "\n" + BLOCK
    )
    client.create_custom_job(parent=PARENT, custom_job=custom_job(package_job(uri, "hang")))
    pids = [
        int(wait_until(lambda p=p: p.exists() and p.read_text(), what=f"{p.name}"))
        for p in (escaped, installing)
    ]
    # The replica has left the service's session and environment before the kill.
    wait_until(lambda: Path(f"/proc/{pids[0]}/comm").read_text().strip() == "sleep")
    assert os.getsid(pids[0]) == pids[0]
    assert b"VTP" not in Path(f"/proc/{pids[0]}/environ").read_bytes()

    service.kill()  # SIGKILL: no chance to stop anything itself
    wait_until(lambda: not any(alive(pid) for pid in pids), timeout=30, what="no orphans")


def test_cancel_interrupts_a_hanging_package_install(service, tmp_path):
    client = service.client()
    installing = tmp_path / "install.pid"
    uri = sdist(
        service.gcs_root / "b" / "stuck-0.1.tar.gz", "stuck", records_pid(installing) + "\n" + BLOCK
    )
    job = client.create_custom_job(parent=PARENT, custom_job=custom_job(package_job(uri, "stuck")))
    pid = int(wait_until(lambda: installing.exists() and installing.read_text(), what="pip"))
    assert client.get_custom_job(name=job.name).state == State.JOB_STATE_PENDING

    client.cancel_custom_job(name=job.name)
    assert wait_for_state(client, job.name).state == State.JOB_STATE_CANCELLED
    wait_until(lambda: not alive(pid), what="setup.py killed")


def test_replicas_past_the_default_cap_wait_in_the_queue(tmp_path):
    cap = default_cap()
    service = LocalService(tmp_path / "state", *FAST_FLAGS).start()  # no --max-replicas
    try:
        client = service.client()
        gate = tmp_path / "go"
        folders = [tmp_path / f"job{i}" for i in range(cap + 2)]
        jobs = []
        for folder in folders:
            folder.mkdir()
            pool = scripted_pool(folder, "--wait-file", str(gate))
            jobs.append(client.create_custom_job(parent=PARENT, custom_job=custom_job(pool)))

        def started() -> list[Path]:
            return [f for f in folders if starts(f, "workerpool0-0")]

        wait_until(lambda: len(started()) >= cap, what=f"{cap} replicas")
        states = [client.get_custom_job(name=job.name).state for job in jobs]
        assert states.count(State.JOB_STATE_QUEUED) == 2, states
        assert len(started()) == cap

        gate.touch()
        ended = [wait_for_state(client, job.name, timeout=120).state for job in jobs]
        assert ended == [State.JOB_STATE_SUCCEEDED] * len(jobs)
    finally:
        service.stop()
