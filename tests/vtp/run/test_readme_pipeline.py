"""The README's "pipeline of your own" runs as written, from a folder of the user's."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import readme_block, shell_commands


@pytest.mark.slow
def test_the_readme_pipeline_runs_as_written(tmp_path: Path) -> None:
    python = readme_block("In a pipeline of your own", "python")
    commands = shell_commands(readme_block("In a pipeline of your own"))
    (tmp_path / "my_pipeline.py").write_text(python)
    venv_bin = Path(sys.executable).parent
    for command in commands:
        result = subprocess.run(
            ["bash", "-c", f"source {venv_bin}/activate && {command}"],
            cwd=tmp_path, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert result.returncode == 0, (command, result.stdout[-3000:], result.stderr[-2000:])
    assert (tmp_path / "my_train.yaml").is_file()
