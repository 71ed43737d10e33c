"""`vtp run` forks each task from a warm process: a team's own components, in a folder of their
own, still get their own process, environment, working directory, random state and exit status,
and the start-up hook's settings; with VTP_TASK_FORK=0 every task is a fresh interpreter."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PIPELINE = """
from kfp import dsl


@dsl.component(base_image="python:3.11")
def where(tag: str, out: str):
    import json, os, pathlib
    import numpy as np
    import threadpoolctl
    from google.cloud import aiplatform
    blas = threadpoolctl.ThreadpoolController().select(internal_api="openblas").info()
    report = {
        "pid": os.getpid(), "ppid": os.getppid(), "cwd": os.getcwd(),
        "team_tag": os.environ.get("TEAM_TAG", ""), "draw": float(np.random.rand()),
        "sdk_endpoint": aiplatform.initializer.global_config.api_endpoint,
        "local_endpoint": os.environ["VTP_LOCAL_API_ENDPOINT"],
        "blas_threads": blas[0]["num_threads"],
    }
    pathlib.Path(out, tag + ".json").write_text(json.dumps(report))


@dsl.pipeline(name="forked")
def forked(out: str):
    first = where(tag="first", out=out)
    first.set_env_variable(name="TEAM_TAG", value="set-on-the-task")
    first.set_env_variable(name="OMP_NUM_THREADS", value="1")
    where(tag="second", out=out).after(first)
"""

KILLED = """
from kfp import dsl


@dsl.component(base_image="python:3.11")
def vanish():
    import os, signal
    os.kill(os.getpid(), signal.SIGKILL)


@dsl.pipeline(name="killed")
def killed():
    vanish()
"""

pytestmark = pytest.mark.slow


def _vtp_run(folder: Path, *args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "vtp", "run", *args], cwd=folder, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **env},
    )  # fmt: skip


def _run_forked(folder: Path, **env: str) -> tuple[int, str, dict, dict]:
    (folder / "team_pipeline.py").write_text(PIPELINE)
    (folder / "out").mkdir(exist_ok=True)
    process = _vtp_run(folder, "team_pipeline.py", "--param", f"out={folder / 'out'}", **env)
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 0, output
    reports = [json.loads((folder / "out" / f"{t}.json").read_text()) for t in ("first", "second")]
    return process.pid, output, *reports


def _fresh_blas_threads(**env: str) -> int:
    """numpy's BLAS threads in a fresh interpreter with this environment and `env`."""
    code = "import numpy, threadpoolctl as t; print(t.threadpool_info()[0]['num_threads'])"
    run = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True
    )
    return int(run.stdout)


def test_tasks_fork_from_a_warm_process_and_keep_their_own_state(tmp_path: Path) -> None:
    vtp_pid, output, first, second = _run_forked(tmp_path)
    assert "fresh interpreter" not in output
    # Children of the fork server (one of its stages), not of vtp or of a shell it started.
    assert first["ppid"] not in (vtp_pid, first["pid"]) and first["pid"] != second["pid"]
    assert first["team_tag"] == "set-on-the-task" and second["team_tag"] == ""
    assert first["cwd"] == second["cwd"] == str(tmp_path)
    assert first["draw"] != second["draw"]  # numpy reseeded per task, as a fresh process is
    # The server imports numpy with one BLAS thread (so it can fork); each task has the
    # threads its own environment gives a fresh interpreter.
    assert first["blas_threads"] == _fresh_blas_threads(OMP_NUM_THREADS="1")
    assert second["blas_threads"] == _fresh_blas_threads()
    # The start-up hook took the task's settings after the fork: the SDK talks to the service.
    assert first["sdk_endpoint"] == first["local_endpoint"] != "aiplatform.googleapis.com"


def test_with_forking_off_every_task_is_a_fresh_interpreter(tmp_path: Path) -> None:
    # A `python3` first on PATH that is not this environment's (CI's is the system one): the
    # command's `python3` is the interpreter the service runs, as it is the image's on Vertex.
    other = tmp_path / "other-bin"
    other.mkdir()
    (other / "python3").write_text("#!/bin/sh\necho 'the wrong python3' >&2\nexit 3\n")
    (other / "python3").chmod(0o755)
    path = f"{other}{os.pathsep}{os.environ['PATH']}"
    _, _, first, second = _run_forked(tmp_path, VTP_TASK_FORK="0", PATH=path)
    assert first["team_tag"] == "set-on-the-task" and second["team_tag"] == ""
    assert first["sdk_endpoint"] == first["local_endpoint"]
    assert first["ppid"] != second["ppid"]  # each under a shell of its own


def test_a_task_killed_by_a_signal_fails_the_run_and_says_so(tmp_path: Path) -> None:
    (tmp_path / "killed.py").write_text(KILLED)
    process = _vtp_run(tmp_path, "killed.py")
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 1
    assert "ended without an exit status" in output
    assert "Traceback" not in output
