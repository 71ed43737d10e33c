"""Helpers for `vtp run` tests: `vtp` as a user types it in a folder of theirs, a `vtp local
serve` started in that folder, the service a running `vtp run` serves, and the processes that
still belong to a state directory."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from vtp.vertex import local_auth

FAST = {"VTP_LOCAL_POLL_INTERVAL": "0.05", "VTP_LOCAL_GRACE_PERIOD": "2"}
"""Quick polling and a short grace period, for the services `vtp run` starts itself."""


def vtp(folder: Path, *args: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    """`python -m vtp ARGS` from `folder`, as a user runs it there."""
    return subprocess.run(
        [sys.executable, "-m", "vtp", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **FAST, **env},
    )


def vtp_run_unpointed(
    folder: Path, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`vtp run ARGS --state-dir FOLDER/replay` from `folder`, in a shell not pointed at any
    service (none of its VTP_LOCAL* or STORAGE_* settings)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VTP_LOCAL", "STORAGE_"))}
    return subprocess.run(
        [sys.executable, "-m", "vtp", "run", *args, "--state-dir", str(folder / "replay")],
        cwd=folder, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def start_vtp(folder: Path, *args: str, log: Path) -> subprocess.Popen:
    """`python -m vtp ARGS` from `folder` in a session of its own (as a terminal would start
    it), stdout and stderr to `log` and `log`.err."""
    return subprocess.Popen(
        [sys.executable, "-m", "vtp", *args],
        cwd=folder,
        stdout=open(log, "w"),
        stderr=open(log.with_suffix(".err"), "w"),
        text=True,
        env={**os.environ, **FAST},
        start_new_session=True,
    )


@dataclass
class Served:
    """A `vtp local serve` started in a folder of the user's."""

    url: str
    state_dir: Path
    process: subprocess.Popen

    @property
    def token(self) -> str:
        """The service's bearer token."""
        return (self.state_dir / "token").read_text().strip()


@contextlib.contextmanager
def serve(folder: Path, state_dir: Path) -> Iterator[Served]:
    """`vtp local serve --port 0 --state-dir STATE_DIR` from `folder` until the block ends;
    what it logged is in `<state_dir>/serve.log`."""
    state_dir.mkdir(parents=True, exist_ok=True)
    flags = ("--port=0", f"--state-dir={state_dir}", "--poll-interval=0.05", "--grace-period=2")
    process = subprocess.Popen(
        [sys.executable, "-m", "vtp", "local", "serve", *flags, "--gpus=none"],
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=open(state_dir / "serve.log", "a"),  # noqa: SIM115 (lives with the process)
        text=True,
    )
    try:
        assert process.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:\d+", process.stdout.readline())
        assert match, (state_dir / "serve.log").read_text()
        yield Served(match.group(), state_dir, process)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        if process.stdout:
            process.stdout.close()


def service_of(state_dir: Path) -> tuple[str, str] | None:
    """(URL, token) of the live service that published `state_dir`, or None yet."""
    for path in local_auth.runtime_dir().glob("service-*.json"):
        try:
            info = json.loads(path.read_text())
            if Path(info["state_dir"]) == state_dir.resolve() and local_auth.published(info["url"]):
                return info["url"], Path(info["token_file"]).read_text().strip()
        except (OSError, ValueError, KeyError):
            continue
    return None


def processes_with(text: str) -> list[str]:
    """`pid: command line` of every live process (but this one) whose command line, working
    directory or environment contains `text`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_text(errors="replace")
            places = [cmdline, os.readlink(entry / "cwd"), (entry / "environ").read_text("latin-1")]
            if (entry / "stat").read_text().split(") ", 1)[1].startswith("Z"):
                continue  # a zombie: gone but for its parent's wait
        except (OSError, IndexError):
            continue
        if any(text in place for place in places):
            found.append(f"{entry.name}: {cmdline.replace(chr(0), ' ')[:200]}")
    return found
