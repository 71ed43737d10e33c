"""A run's worker is watched as well as its shim: once the worker has exited with its run
succeeded, the run has ended, while the shim still kills and reaps what the worker left (the
fork server's stages); a failed run waits for the shim, and `wait_ended` for everything."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from vtp.engine import worker
from vtp.local.pipeline_jobs.process import RunProcess, _on_exit, _only_child
from vtp.local.runtime.process import spawn

WORKER = """
import json, os, subprocess, sys
run_dir, outcome = sys.argv[1:]
# What it leaves behind: a process in its group, until the shim kills it.
left = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(os.path.join(run_dir, "left.pid"), "w").write(str(left.pid))
with open(os.path.join(run_dir, "result.json"), "w") as out:
    json.dump({"succeeded": outcome == "ok", "error": ""}, out)
os._exit(0)
"""


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("outcome", ["ok", "failed"])
def test_a_run_ends_with_its_worker_and_nothing_of_it_outlives_wait_ended(
    tmp_path: Path, outcome: str
) -> None:
    (tmp_path / "fake_worker.py").write_text(WORKER)
    argv = [sys.executable, str(tmp_path / "fake_worker.py"), str(tmp_path), outcome]
    run = RunProcess(tmp_path, poll=0.05, grace=5.0)
    run.adopt(spawn(argv, dict(os.environ), tmp_path, tmp_path / "run.log"))  # as a standby's
    assert run.watch(on_started=lambda: None) == 0
    result = worker.read_result(tmp_path)
    assert result is not None and result["succeeded"] is (outcome == "ok")
    left = int((tmp_path / "left.pid").read_text())
    if outcome == "failed":  # shown as ended only once nothing of it is left
        assert not alive(left)
    run.wait_ended()
    assert not alive(left)


def test_the_exit_of_a_process_that_is_not_a_child_is_seen() -> None:
    """`_only_child` finds the one child of a process (the shim's worker), and `_on_exit`
    sees it exit though it is not this process's child."""
    code = (
        "import subprocess, sys; "
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']).wait()"
    )
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        found = threading.Event()
        child, deadline = 0, time.monotonic() + 30
        while not found.wait(0.01):  # until the parent has started its child
            child = _only_child(parent.pid)
            if child:
                found.set()
            assert time.monotonic() < deadline, "the parent started no child"
        ended = threading.Event()
        _on_exit(child, ended)
        assert not ended.is_set() and alive(child)
        os.kill(child, 9)
        assert ended.wait(30)
    finally:
        parent.kill()
        parent.wait()
