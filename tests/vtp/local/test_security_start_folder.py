"""Issue #49, finding 4: the folder a service starts in goes on import paths only when it is
trusted. The attack, by a real second local user: the service starts in a folder others may
write (a shared folder, or /tmp itself); the other user has planted `json.py` there, which every
job's `import json` found first (the folder came before the standard library on PYTHONPATH), so
their code ran in every replica as the service's user. Now that folder is left off every
import path, with one warning line that says why, and the job runs what it asked for."""

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures import LocalService, wait_for_state
from tests.vtp.local.conftest import custom_job
from tests.vtp.local.test_security_state_dir import as_user
from tests.vtp.local.test_security_state_dir import attacker as attacker  # fixture
from vtp import private_files

PLANT = """
import os, sys
folder, marker = sys.argv[1:]
with open(os.path.join(folder, "json.py"), "w") as planted:
    planted.write(f"open({marker!r}, 'w').write('ran as ' + str(__import__('os').getuid()))\\n")
    planted.write("raise ImportError('planted')\\n")
os.chmod(os.path.join(folder, "json.py"), 0o644)
print("planted")
"""
"""The attacker's step: a module named like the standard library's, in the shared folder."""


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder under /tmp that every user may write (mode 0777), as a team share is."""
    folder = Path(tempfile.mkdtemp(prefix="vtp-shared-", dir="/tmp"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder)


def test_a_module_planted_in_a_shared_start_folder_never_runs_in_a_job(
    attacker, shared_folder: Path, tmp_path: Path
) -> None:
    marker = Path(tempfile.gettempdir()) / f"vtp-planted-ran-{os.getpid()}"
    marker.unlink(missing_ok=True)
    planted = as_user(attacker, PLANT, str(shared_folder), str(marker))
    assert planted.stdout.strip() == "planted", planted.stderr
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {
            "imageUri": "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
            "command": ["python", "-c", "import json; print('job:', json.dumps({'ok': 1}))"],
        },
    }
    # Started as the `vtp` command starts (its script's folder heads sys.path, not the working
    # directory, which `python -m` would put there).
    safe = {"PYTHONSAFEPATH": "1"}
    with LocalService(tmp_path / "state", env=safe, cwd=shared_folder) as service:
        client = service.client()
        created = client.create_custom_job(parent=service.parent, custom_job=custom_job(pool))
        ended = wait_for_state(client, created.name, timeout=120)
        log = service.service_log()
    assert ended.state.name == "JOB_STATE_SUCCEEDED", ended.error.message
    assert not marker.exists(), marker.read_text()
    warned = [line for line in log.splitlines() if "is left off the import path" in line]
    assert len(warned) == 1 and "writable by other users" in warned[0], log[-2000:]


def test_a_trusted_folder_stays_on_the_import_path(tmp_path: Path) -> None:
    mine = tmp_path / "team"
    mine.mkdir(mode=0o755)
    private_files.check_trusted_dir(mine)  # no exception: it is the user's, and only theirs


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777])
def test_a_folder_others_may_write_is_not_trusted(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(private_files.UnsafePath, match="writable by other users"):
        private_files.check_trusted_dir(folder)


def test_the_service_config_says_why_it_left_a_folder_out(tmp_path: Path) -> None:
    from vtp.local.base.config import ServiceConfig

    folder = tmp_path / "open"
    folder.mkdir()
    folder.chmod(0o777)
    config = ServiceConfig(state_dir=tmp_path / "state", project_dir=folder)
    assert config.import_dir is None
    assert config.untrusted_reason.startswith(f"{folder} is left off the import path")
    trusted = ServiceConfig(state_dir=tmp_path / "state", project_dir=tmp_path)
    assert trusted.import_dir == tmp_path and trusted.untrusted_reason == ""
