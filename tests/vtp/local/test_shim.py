"""What a command started under the service's shim (`vtp/local/runtime/shim.py`) begins with:
the signal dispositions a fresh process has, and its own working directory for a relative
program, as `subprocess.Popen` gives them."""

import os
import subprocess
from pathlib import Path

import pytest

from vtp.local.runtime import process


def _run(argv: list[str], cwd: Path) -> str:
    out = cwd / "out.txt"
    with open(out, "wb") as output:
        child = process.start(argv, dict(os.environ), cwd, output)
    assert child.wait(timeout=60) == 0, out.read_text()
    return out.read_text()


def test_a_command_starts_with_sigpipe_at_its_default(tmp_path: Path) -> None:
    ignored = int(_run(["grep", "SigIgn", "/proc/self/status"], tmp_path).split()[1], 16)
    assert not ignored & (1 << (13 - 1))  # SIGPIPE
    assert not ignored & (1 << (25 - 1))  # SIGXFSZ
    # So a pipeline whose reader stops early ends quietly, as in a container.
    text = _run(["bash", "-o", "pipefail", "-c", "yes | head -1; echo done"], tmp_path)
    assert text == "y\ndone\n"


def test_a_relative_program_is_found_in_the_commands_own_folder(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\necho ran here\n")
    (tmp_path / "run.sh").chmod(0o755)
    assert _run(["./run.sh"], tmp_path) == "ran here\n"


def test_a_program_that_is_not_there_raises_as_popen_does(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        process.start(["./absent.sh"], dict(os.environ), tmp_path, subprocess.DEVNULL)
