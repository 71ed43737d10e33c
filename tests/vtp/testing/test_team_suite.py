"""A team's own test suite (team_suite/: its pipeline, its trainer, its tests) run as the team
runs it: copied out of the repository and run with `python -m pytest`, with nothing but this
project installed; no service is started by hand. Again in a fresh virtual environment that has
only the project's wheel and its `testing` extra, as docs/testing.md installs it. Then Ctrl-C
(and SIGKILL) in the middle of that run, with a replica running: nothing of the service is left
behind."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fixtures import read_until

SUITE = Path(__file__).parent / "team_suite"
REPO = Path(__file__).resolve().parents[3]
SUITE_TESTS = 11
UNUSED_FAULT_TEST = """
def test_an_unused_fault_is_reported(local_vertex):
    local_vertex.stockout_next_job(nth=2)
    # no job at all: the fixture fails this test at its end, naming the fault
"""
HANG_TEST = """
from google.cloud import aiplatform

import team_jobs


def test_a_long_job(local_vertex):
    job = aiplatform.CustomJob(
        display_name="long",
        worker_pool_specs=[{
            "machine_spec": {"machine_type": "n1-standard-4"},
            "replica_count": 1,
            "container_spec": {
                "image_uri": team_jobs.IMAGE,
                "command": ["python", "-c", "import time; print('replica', 'up', flush=True); "
                            "time.sleep(600)"],
            },
        }],
    )
    job.submit()
    # The replica's own words: the service's "starting" line quotes its command, not these.
    local_vertex.wait_for_log(job, "replica up")
    print("READY", flush=True)
    job.wait_for_completion()  # job.wait() returns at once for a submitted job
"""


def team_folder(tmp_path: Path) -> Path:
    """The team's folder, outside the repository."""
    return Path(
        shutil.copytree(SUITE, tmp_path / "team", ignore=shutil.ignore_patterns("__pycache__"))
    )


def pytest_command(folder: Path, *args: str) -> list[str]:
    """`python -m pytest` as the team runs it, with a temporary directory of this test's."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            f"--basetemp={folder.parent / 'basetemp'}", *args]  # fmt: skip


def team_env() -> dict[str, str]:
    """The environment of a team's shell: none of this pytest run's own variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_teams_suite_passes_with_only_pytest(tmp_path: Path, workers: list[str]) -> None:
    folder = team_folder(tmp_path)
    result = subprocess.run(
        pytest_command(folder, *workers),
        cwd=folder, env=team_env(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert f"{SUITE_TESTS} passed" in result.stdout, result.stdout[-3000:]


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtual environment with only the project's wheel and its `testing` extra (torch from
    the CPU wheel `constraints.txt` pins), as docs/testing.md has a team install it; but with
    `--no-compile`: pip would compile every module of every package (most of the install's time),
    and the team's run writes the bytecode of those it imports as it imports them
    (its environment does not set PYTHONDONTWRITEBYTECODE)."""
    root = tmp_path_factory.mktemp("wheel-venv")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(root / "dist"), str(REPO)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = (root / "dist").glob("vertex_torch_pipelines-*-py3-none-any.whl")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, timeout=300)
    python = root / "venv" / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-compile",
         "-c", str(REPO / "constraints.txt"), f"{wheel}[testing]"],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    return root / "venv"


@pytest.mark.slow
def test_a_teams_suite_runs_with_only_the_wheel_and_its_testing_extra(
    tmp_path: Path, wheel_venv: Path
) -> None:
    listed = subprocess.run(
        [str(wheel_venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    names = {line.split("==")[0].lower() for line in listed.stdout.split()}
    assert {"vertex-torch-pipelines", "pytest", "pytest-xdist"} <= names
    assert not names & {"ruff", "mypy", "playwright"}, "the `test` extra's tools came along"
    folder = team_folder(tmp_path)
    (folder / "tests" / "test_unused_fault.py").write_text(UNUSED_FAULT_TEST)
    env = {**team_env(), "PATH": f"{wheel_venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the venv's bytecode, written as it is imported
    command = pytest_command(folder, "-n", "2", "-rA")
    result = subprocess.run(
        [str(wheel_venv / "bin" / "python"), *command[1:]],
        cwd=folder, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    out = result.stdout
    assert f"{SUITE_TESTS + 1} passed, 1 error" in out, out[-6000:] + result.stderr[-3000:]
    for test in ("test_a_job_fails_after_its_replica_logged", "test_a_job_runs_out_of_memory",
                 "test_a_failed_trial_counts_in_its_study",
                 "test_a_lasting_stockout_fails_the_job_as_on_vertex"):  # fmt: skip
        assert f"PASSED tests/test_faults.py::{test}" in out, out[-6000:]
    assert "ERROR tests/test_unused_fault.py::test_an_unused_fault_is_reported" in out
    assert (
        "local_vertex: stockout_next_job(nth=2) was never used: fewer than 2 custom jobs were "
        "created after it"
    ) in out, out[-6000:]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_stopping_the_run_leaves_no_process(tmp_path: Path, signum: int) -> None:
    folder = team_folder(tmp_path)
    (folder / "tests" / "test_hang.py").write_text(HANG_TEST)
    run = subprocess.Popen(
        pytest_command(folder, "-s", "tests/test_hang.py"),
        cwd=folder, env=team_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=terminal_signals,
    )  # fmt: skip
    try:
        output = read_until(run, "READY", timeout=300)
        assert "READY" in output, output
        tree = descendants(run.pid)
        commands = [command(pid) for pid in tree]
        assert any("vtp.testing.serve" in c for c in commands), commands
        assert any("time.sleep(600)" in c for c in commands), commands
        run.send_signal(signum)
        run.wait(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
        run.wait()
    left = wait_until_gone(tree, timeout=60)
    assert not left, f"left running: {[command(pid) for pid in left]}\n{output}"
    if signum == signal.SIGINT:
        assert run.returncode == 2  # pytest's "interrupted"


def terminal_signals() -> None:
    """In the child: Ctrl-C as a team's terminal delivers it (a test runner's worker may have
    left SIGINT ignored, which its children inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def descendants(root: int) -> dict[int, str]:
    """Every live process below `root`, pid -> start time (a reused pid has another)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = process_stat(int(entry.name))
            if stat:
                parents[int(entry.name)] = int(stat[1])
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, ppid in parents.items():
            if ppid == parent and pid not in found:
                found[pid] = process_stat(pid)[19] if process_stat(pid) else ""
                frontier.append(pid)
    return found


def process_stat(pid: int) -> list[str]:
    """/proc/PID/stat after the command: [state, ppid, ...], or [] once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return []
    return text.rsplit(")", 1)[1].split()


def command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_until_gone(tree: dict[int, str], timeout: float) -> list[int]:
    """The processes of `tree` still alive (not zombies) once all are gone or `timeout` passed."""
    deadline = time.monotonic() + timeout
    while True:
        left = []
        for pid, started in tree.items():
            stat = process_stat(pid)
            if stat and stat[19] == started and stat[0] != "Z":
                left.append(pid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)
