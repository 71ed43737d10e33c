"""The README's file map matches the tree: every source file has its line, no line is stale."""

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAPPED = re.compile(r"^([\w./-]+\.(?:py|toml|txt|md)|Dockerfile|\.ci/run)\s", re.MULTILINE)


def file_map() -> str:
    """The fenced block under `## File map`."""
    text = (REPO / "README.md").read_text()
    return text.split("## File map", 1)[1].split("```")[1]


def tracked_sources() -> set[str]:
    """Files that need a line: everything but tests, compiled YAML and package markers."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    return {
        f
        for f in files
        if not f.startswith(("tests/", "compiled/"))
        and not f.endswith("__init__.py")
        and f != ".gitignore"
    }


def test_every_source_file_has_a_line() -> None:
    listed = set(MAPPED.findall(file_map()))
    missing = sorted(tracked_sources() - listed)
    assert not missing, f"add these to the README's file map: {missing}"


def test_no_line_names_a_file_that_is_gone() -> None:
    stale = [path for path in MAPPED.findall(file_map()) if not (REPO / path).exists()]
    assert not stale, f"the README's file map names missing files: {stale}"
