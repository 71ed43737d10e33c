"""The README's file map matches the tree: every source file has its line, no line is stale."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import readme_block, shell_commands

REPO = Path(__file__).resolve().parents[1]
MAPPED = re.compile(
    r"^([\w./-]+\.(?:py|toml|txt|md|json|js|css|html)|[\w./-]+/LICENSE\.\w+|Dockerfile|\.ci/run"
    r"|vtp/(?:trainer|components|pipelines))\s",
    re.MULTILINE,
)


def file_map() -> str:
    """The fenced block under `## File map`."""
    text = (REPO / "README.md").read_text()
    return text.split("## File map", 1)[1].split("```")[1]


def tracked_sources() -> set[str]:
    """Files that need a line: everything but tests, compiled YAML, package markers, the
    pictures under docs/ and third parties' files (bench/third_party/: one line for the folder)."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        f
        for f in files
        if not f.startswith(("tests/", "compiled/", "bench/third_party/"))
        and not f.endswith("__init__.py")
        and f != ".gitignore"
        and not f.endswith(".png")
    }


def test_every_source_file_has_a_line() -> None:
    listed = set(MAPPED.findall(file_map()))
    missing = sorted(tracked_sources() - listed)
    assert not missing, f"add these to the README's file map: {missing}"


def test_no_line_names_a_file_that_is_gone() -> None:
    stale = [path for path in MAPPED.findall(file_map()) if not (REPO / path).exists()]
    assert not stale, f"the README's file map names missing files: {stale}"


@pytest.mark.slow
def test_readme_usage_lines_run_as_written(tmp_path: Path) -> None:
    """Each line in a shell as a user has it after the set-up command: local lines succeed,
    Vertex lines (no credentials here) fail with one line that says what to do."""
    commands = shell_commands(readme_block("## Using it"))
    assert commands[0].startswith("source .venv/bin/activate")
    venv = Path(sys.executable).parent.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "CLOUDSDK_"))}
    env |= {"HOME": str(tmp_path / "home"), "CLOUDSDK_CONFIG": str(tmp_path / "gcloud")}
    for command in commands[1:]:
        script = f"source {venv}/bin/activate && cd {tmp_path} && {command}"
        result = subprocess.run(
            ["bash", "-c", script], env=env, capture_output=True, text=True, timeout=900
        )
        if "my-project" in command:  # Vertex: no credentials on this machine
            assert result.returncode in (0, 1), (command, result.stderr)
            errors = result.stderr.strip().splitlines()
            one_line = len(errors) == 1 and errors[0].startswith("vtp: error: ")
            assert result.returncode == 0 or one_line, (command, result.stderr)
        else:
            assert result.returncode == 0, (command, result.stderr[-2000:])
