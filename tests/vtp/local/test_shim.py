"""What a command started under the service's shim (`vtp/local/runtime/shim.py`) begins with:
the signal dispositions a fresh process has, and its own working directory for a relative
program, as `subprocess.Popen` gives them."""

import os
import signal
import subprocess
from pathlib import Path

import pytest

from vtp.local.runtime import process, shim


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


def _sleepers(count: int, env: dict[str, str] | None = None) -> list[subprocess.Popen]:
    return [subprocess.Popen(["sleep", "120"], env=env) for _ in range(count)]


def _spy_on_kill(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The signals `os.kill` sends from now on, in order (each still sent)."""
    sent: list[tuple[int, int]] = []
    real = os.kill

    def kill(pid: int, signum: int) -> None:
        sent.append((pid, signum))
        real(pid, signum)

    monkeypatch.setattr(os, "kill", kill)
    return sent


def test_a_tree_is_stopped_whole_before_any_of_it_is_killed(monkeypatch) -> None:
    # Killed one by one, a pipeline worker outliving its task (pids wrap, so any order comes)
    # would record the task FAILED; stopped first, nothing of it runs to see the others end.
    sleepers = _sleepers(3)
    pids = [s.pid for s in sleepers]
    sent = _spy_on_kill(monkeypatch)
    assert shim.stop_then_kill(pids) == 3
    assert sent == [(p, signal.SIGSTOP) for p in pids] + [(p, signal.SIGKILL) for p in pids]
    assert [s.wait(timeout=30) for s in sleepers] == [-signal.SIGKILL] * 3


def test_the_watchdogs_sweep_stops_every_carrier_before_it_kills_one(monkeypatch) -> None:
    marked = _sleepers(2, {**os.environ, "VTP_TEST_SWEEP": "this-test"})
    other = _sleepers(1, {**os.environ, "VTP_TEST_SWEEP": "another"})
    sent = _spy_on_kill(monkeypatch)
    try:
        assert process.kill_carrying("VTP_TEST_SWEEP", "this-test") == 2
        stops = {p for p, s in sent if s == signal.SIGSTOP}
        kills = [i for i, (_, s) in enumerate(sent) if s == signal.SIGKILL]
        assert stops == {m.pid for m in marked}
        assert max(i for i, (_, s) in enumerate(sent) if s == signal.SIGSTOP) < min(kills)
        assert [m.wait(timeout=30) for m in marked] == [-signal.SIGKILL] * 2
        assert other[0].poll() is None
    finally:
        other[0].kill()
        other[0].wait()
