"""Issue #49, finding 3: root in an image is not root on the host through the storage root.

Under rootful Podman, root in a container is root on the host, and the storage root it sees at
/gcs is a host folder: round 4's image left a setuid-root copy of its Python there, opened the
folders' modes, and another local user ran it as root. Now (`vtp.containers`): the container has
no CAP_MKNOD (no device node either), Podman mounts /gcs `nosuid,nodev` (the setuid file gives no
one root inside), and the service refuses to start with an engine unless the storage root is
inside a folder only its owner enters (the default `<state-dir>/gcs` is), so no other local user
reaches what a container writes there, whatever modes it sets. The attack is played with a real
container (each engine here: Podman, Docker, where Docker's no-new-privileges stands for nosuid)
and a real second local user. Skipped without an engine (`.ci/run` installs both).
"""

import json
import os
import secrets
import shutil
import subprocess
from pathlib import Path

from tests import container_images
from tests.container_images import engine_fixture  # noqa: F401 (container_engine)
from tests.fixtures import LocalService, State, wait_for_state
from tests.vtp.local.conftest import custom_job
from tests.vtp.local.test_security_state_dir import VTP, as_user, attacker  # noqa: F401 (fixture)

PARENT = "projects/local/locations/us-central1"

PLANT = r"""
import json, os, shutil, subprocess
os.makedirs("/gcs/drop", exist_ok=True)
shutil.copy("/usr/bin/python3.11", "/gcs/drop/rootpy")
os.chmod("/gcs/drop/rootpy", 0o4755)
os.chmod("/gcs/drop", 0o777)
os.chmod("/gcs", 0o777)
try:
    os.mknod("/gcs/drop/mem", 0o20666, os.makedev(1, 1))
    mknod = "made"
except OSError as exc:
    mknod = exc.strerror
as_nobody = subprocess.run(
    ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/gcs/drop/rootpy", "-c",
     "import os; print(os.geteuid())"], capture_output=True, text=True)
with open("/gcs/drop/report.json", "w") as out:
    json.dump({"mknod": mknod, "euid_inside": as_nobody.stdout.strip() or as_nobody.stderr}, out)
"""
"""What the image does as root: a setuid-root Python in storage, opened to all, and a device."""

RUN_IT = """
import subprocess, sys
try:
    ran = subprocess.run([sys.argv[1], "-c", "import os; print(os.geteuid())"],
                         capture_output=True, text=True)
    print(ran.stdout.strip() or ran.stderr.strip())
except OSError as exc:
    print(type(exc).__name__)
"""
"""What the other local user does: run the file the image left."""


def test_a_setuid_file_a_container_leaves_in_storage_gives_no_one_root(
    tmp_path,
    attacker,  # noqa: F811 (the fixture)
    container_engine,
) -> None:
    image = container_images.debian_python(container_engine)
    service = LocalService(tmp_path / "state", env=container_engine.service_env()).start()
    try:
        client = service.client()
        pool = {
            "machineSpec": {"machineType": "n1-standard-4"},
            "containerSpec": {"imageUri": image, "command": ["python3", "-c", PLANT]},
        }
        job = client.create_custom_job(parent=PARENT, custom_job=custom_job(pool))
        ended = wait_for_state(client, job.name, timeout=300)
        assert ended.state == State.JOB_STATE_SUCCEEDED, ended.error.message
        drop = service.gcs_root / "drop"
        report = json.loads((drop / "report.json").read_text())
        planted = (drop / "rootpy").stat()
    finally:
        service.stop()

    assert report["mknod"] == "Operation not permitted"  # no CAP_MKNOD
    assert report["euid_inside"] == "65534"  # /gcs is nosuid in the container
    # The file is there, setuid root on the host, with every folder of storage opened...
    assert planted.st_uid == 0 and planted.st_mode & 0o4000
    # ...and still no other local user can run it: storage is inside the private state folder.
    ran = as_user(attacker, RUN_IT, str(drop / "rootpy"))
    assert ran.stdout.strip() == "PermissionError", ran


def test_a_storage_root_others_can_reach_is_refused_with_an_engine(
    tmp_path, container_engine
) -> None:
    shared = Path("/tmp") / f"vtp-shared-{secrets.token_hex(4)}"  # /tmp: anyone passes through
    try:
        (shared / "gcs").mkdir(parents=True)
        shared.chmod(0o755)  # whatever umask an earlier test left this process with
        served = subprocess.run(
            [str(VTP), "local", "serve", "--port", "0", "--state-dir", str(tmp_path / "state"),
             "--gcs-root", str(shared / "gcs")],
            capture_output=True, text=True, timeout=120,
            env={**os.environ, **container_engine.service_env(),
                 "VTP_RUNTIME_DIR": str(tmp_path / "runtime")},
        )  # fmt: skip
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    assert served.returncode == 1, served
    assert served.stderr.strip().splitlines() == [
        f"vtp: error: refusing to start: the storage root {shared / 'gcs'} is inside no folder "
        "that only you can enter, so other local users could run a setuid file a container "
        "(root in its image) writes there; with a container engine, keep --gcs-root inside such "
        "a folder (`chmod 700` one above it, or use the default <state-dir>/gcs)"
    ]
    assert not (tmp_path / "state" / "token").exists()
