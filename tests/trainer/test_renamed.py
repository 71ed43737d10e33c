"""Names from before the project's modules moved under `vtp`, for one release: a spec compiled
before (`--task=trainer.tasks.digits`), a checkout's `python -m trainer`."""

import subprocess
import sys

import pytest

from tests.fixtures import REPO
from vtp.trainer import tasks


def test_a_builtin_task_by_its_old_name_loads_the_new_one_saying_so_once(capsys) -> None:
    first = tasks.load_task("trainer.tasks.digits")
    again = tasks.load_task("trainer.tasks.digits")
    assert first is again and first.__name__ == "vtp.trainer.tasks.digits"
    assert capsys.readouterr().err.splitlines() == [
        "--task=trainer.tasks.digits is now --task=vtp.trainer.tasks.digits "
        "(renamed; the old name goes in a later release)"
    ]


def test_a_teams_own_module_is_never_renamed() -> None:
    assert tasks.renamed("trainer.task") == "trainer.task"  # Google's layout: the team's
    assert tasks.renamed("my_task") == "my_task"
    with pytest.raises(ValueError, match=r"--task=trainer\.tasks\.nothere: cannot import it"):
        tasks.load_task("trainer.tasks.nothere")


def test_python_m_trainer_in_a_checkout_says_the_new_name() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "trainer", "--help"], cwd=REPO, capture_output=True, text=True
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [
        "python -m trainer is now python -m vtp.trainer (the project's modules live under vtp)"
    ]
