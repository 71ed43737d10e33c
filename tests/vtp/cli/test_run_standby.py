"""`vtp run` starts its run's worker first thing, before its own imports and its service (the
service's standby, `vtp.local.pipeline_jobs.standby`): the run is the same, a rerun of cache
hits too, and one with `--no-cache`, and nothing of any is left once the command has exited."""

import subprocess
from pathlib import Path

from tests.vtp.cli.run_helpers import vtp
from tests.vtp.local.pipeline_jobs.test_standby import processes_with

PIPELINE = """
from kfp import dsl


@dsl.component(base_image="python:3.11-slim")
def greet(name: str) -> str:
    import os

    print(f"greeting from {os.getcwd()}")
    return f"hello {name}"


@dsl.pipeline(name="greeting")
def greeting(name: str = "world"):
    greet(name=name)
"""


def succeeded(result: subprocess.CompletedProcess) -> str:
    """The run's summary; fails with what the run printed if it did not succeed."""
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout[result.stdout.index("Pipeline my_pipeline.py SUCCEEDED") :]


def test_vtp_run_runs_in_the_worker_it_started_first_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "my_pipeline.py").write_text(PIPELINE)
    state_dir = tmp_path / ".vtp" / "run"
    first = vtp(tmp_path, "run", "my_pipeline.py")
    summary = succeeded(first)
    assert "runs in the standby worker" in first.stderr
    assert f"greeting from {tmp_path}" in first.stdout  # in the user's folder, as ever
    assert "  greet:\n    Output hello world\n" in summary
    assert processes_with(str(state_dir)) == []  # its worker, fork server and the next standby
    rerun = vtp(tmp_path, "run", "my_pipeline.py")
    summary = succeeded(rerun)
    assert "runs in the standby worker" in rerun.stderr
    assert "  greet: cached\n    Output hello world\n" in summary
    assert processes_with(str(state_dir)) == []
    again = vtp(tmp_path, "run", "my_pipeline.py", "--no-cache")  # its worker serves tasks at once
    summary = succeeded(again)
    assert "runs in the standby worker" in again.stderr
    assert "  greet:\n    Output hello world\n" in summary  # ran again
    assert processes_with(str(state_dir)) == []
