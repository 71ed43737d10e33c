"""A job's installs stay in the job: its replicas' Python environments are their own (issue #28).

On Vertex a replica starts from a fresh container; here it runs on the service's interpreter, in
an environment layered over the service's (`vtp/local/runtime/isolation.py`). The wheels pip
installs are built here (nothing is downloaded): `somepkg`, and a pip 99.0 made of the pip wheel
Python's own `ensurepip` holds, so `pip install --upgrade pip` really upgrades pip.
"""

import json
import subprocess
import sys
import sysconfig
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.fixtures import LocalService, State, wait_for_state
from tests.vtp.local.conftest import custom_job, write_wheel
from vtp.local.runtime import isolation

PARENT = "projects/local/locations/us-central1"
NEW_PIP = "99.0"

INSTALLS = """set -e
pip install --user somepkg
pip install --upgrade pip
python -c '
import json, sys, importlib.metadata as m, pip, somepkg
json.dump({"pip": m.version("pip"), "pip_file": pip.__file__, "somepkg": somepkg.__file__,
           "prefix": sys.prefix}, open(sys.argv[1], "w"))
' "$RECORD"
"""

LOOKS = """python -c '
import importlib.util, json, sys, importlib.metadata as m
json.dump({"pip": m.version("pip"), "somepkg": importlib.util.find_spec("somepkg") is not None},
          open(sys.argv[1], "w"))
' "$RECORD"
"""


def newer_pip(folder: Path) -> Path:
    """pip's own code from the wheel `ensurepip` bundles, as version NEW_PIP."""
    bundled = Path(sysconfig.get_path("stdlib"), "ensurepip", "_bundled")
    source = next(bundled.glob("pip-*.whl"))
    with zipfile.ZipFile(source) as archive:
        code = {n: archive.read(n) for n in archive.namelist() if n.startswith("pip/")}
    return write_wheel(folder, "pip", NEW_PIP, code)


def service_freeze() -> str:
    """`pip freeze` of the service's interpreter (pip itself included; the editable project
    left out: its line names the commit, which others may move meanwhile)."""
    command = [sys.executable, "-m", "pip", "freeze", "--all", "--exclude-editable"]
    return subprocess.run(command, capture_output=True, text=True, check=True).stdout


def shell_pool(script: str, wheels: Path, record: Path) -> dict:
    """A pool of another image running `script`, pip pointed at `wheels` only."""
    env = {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "RECORD": str(record),
    }
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {
            "imageUri": "python:3.8",
            "command": ["sh", "-c", script],
            "env": [{"name": k, "value": v} for k, v in env.items()],
        },
    }


@pytest.fixture
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    write_wheel(folder, "somepkg", "1.0", {"somepkg/__init__.py": b"VALUE = 1\n"})
    newer_pip(folder)
    return folder


def test_a_jobs_pip_installs_stay_in_the_job(tmp_path: Path, wheels: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    before = service_freeze()
    service = LocalService(tmp_path / "state", env={"HOME": str(home)}).start()
    try:
        client = service.client()
        record = tmp_path / "installed.json"
        pool = shell_pool(INSTALLS, wheels, record)
        job = client.create_custom_job(parent=PARENT, custom_job=custom_job(pool))
        ended = wait_for_state(client, job.name, timeout=120)
        assert ended.state == State.JOB_STATE_SUCCEEDED, ended.error.message
        seen = json.loads(record.read_text())
        assert seen["pip"] == NEW_PIP and seen["pip_file"].startswith(seen["prefix"])
        assert seen["somepkg"].startswith(seen["prefix"])  # the --user site is the replica's
        assert not Path(seen["prefix"]).exists()  # removed with the replica

        later = tmp_path / "later.json"
        job = client.create_custom_job(
            parent=PARENT, custom_job=custom_job(shell_pool(LOOKS, wheels, later))
        )
        assert wait_for_state(client, job.name).state == State.JOB_STATE_SUCCEEDED
        assert json.loads(later.read_text()) == {"pip": version("pip"), "somepkg": False}
    finally:
        service.stop()
    assert service_freeze() == before
    assert not list(home.rglob("somepkg*"))


def test_a_layer_sees_the_services_packages_after_its_own(tmp_path: Path) -> None:
    layer = isolation.create(tmp_path / "env")
    probe = "import sys, vtp, google.cloud.aiplatform as a; print(vtp.__file__); print(sys.prefix)"
    run = subprocess.run(
        isolation.command([sys.executable, "-c", probe], layer),
        env=isolation.environment({"PATH": "/usr/bin:/bin"}, layer),
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    vtp_file, prefix = run.stdout.split()
    assert Path(vtp_file).parent == Path(isolation.__file__).parents[2]
    assert prefix == str(layer.root)
    isolation.remove(layer)
    assert not layer.root.exists()


def test_a_layers_environment_puts_its_bin_before_the_services() -> None:
    layer = isolation.Layer(Path("/state/envs/r"))
    service_bin = str(Path(sys.executable).parent)
    env = isolation.environment({"PATH": f"/a:{service_bin}:/b", "HOME": "/h"}, layer)
    assert env["PATH"] == f"/a:/state/envs/r/bin:{service_bin}:/b"
    assert env["VIRTUAL_ENV"] == "/state/envs/r" and env["PYTHONUSERBASE"] == "/state/envs/r/user"
    assert env["HOME"] == "/h"
    assert isolation.environment({"PYTHONUSERBASE": "/mine"}, layer)["PYTHONUSERBASE"] == "/mine"
    command = isolation.command([sys.executable, "-m", "x"], layer)
    assert command == ["/state/envs/r/bin/python", "-m", "x"]
