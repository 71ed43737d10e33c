"""The README's "pipeline of your own" runs as written, from a folder of the user's."""

import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


def readme_blocks() -> tuple[str, list[str]]:
    """The example's Python file and the shell lines that run it."""
    text = README.read_text().split("In a pipeline of your own", 1)[1]
    python = text.split("```python", 1)[1].split("```", 1)[0]
    shell = text.split("```bash", 1)[1].split("```", 1)[0]
    lines = [line.split("  #", 1)[0].strip() for line in shell.splitlines()]
    return python, [line for line in lines if line]


@pytest.mark.slow
def test_the_readme_pipeline_runs_as_written(tmp_path: Path) -> None:
    python, commands = readme_blocks()
    (tmp_path / "my_pipeline.py").write_text(python)
    venv_bin = Path(sys.executable).parent
    for command in commands:
        result = subprocess.run(
            ["bash", "-c", f"source {venv_bin}/activate && {command}"],
            cwd=tmp_path, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert result.returncode == 0, (command, result.stdout[-3000:], result.stderr[-2000:])
    assert (tmp_path / "my_train.yaml").is_file()
