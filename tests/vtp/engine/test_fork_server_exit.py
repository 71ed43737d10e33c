"""A task forked from the fork server's torch stage ends as a fresh interpreter would: its own
exit handlers, its own torch libraries' teardown, logging's flush and multiprocessing's exit
function run; what torch registered as the server imported it is not undone one operator at a
time. Its output ends as soon as it has finished, unless a process it started still holds it.
It collects its own garbage, and its collections skip what the server preloaded."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from vtp.engine import fork_tasks
from vtp.engine.task_commands import Plan

pytestmark = pytest.mark.slow

TASK = """
import atexit, logging, logging.handlers, os, subprocess, sys
import torch

out = sys.argv[1]
print("preloaded torch" if "torch.library" in sys.modules else "imported torch", flush=True)
with open(f"{out}/draw.txt", "w") as draw:
    draw.write(repr(torch.rand(4).tolist()))
# The task's own operator library: its exit removes it, as a fresh interpreter's would.
library = torch.library.Library("vtp_exit_test", "DEF")
library.define("twice(Tensor x) -> Tensor")
# Records that reach the file only when logging's exit handler flushes the buffer.
buffered = logging.handlers.MemoryHandler(
    1000, flushLevel=logging.CRITICAL + 1, target=logging.FileHandler(f"{out}/task.log")
)
team_log = logging.getLogger("team")
team_log.addHandler(buffered)
team_log.setLevel(logging.INFO)
team_log.info("written at exit")
# A process that writes to the task's output once the task's process has ended.
if sys.argv[2:] == ["--late"]:
    subprocess.Popen([sys.executable, "-c", LATE, str(os.getpid())])
# Memory the kernel frees as the process ends, after the task has finished.
ballast = b"x" * (128 << 20)

def record(frame, event, arg):
    if event == "call" and frame.f_code.co_name in WATCHED:
        with open(f"{out}/exit_calls.txt", "a") as calls:
            calls.write(frame.f_code.co_name + "\\n")

def watch_the_rest_of_the_exit():  # the task's own handler, registered last: it runs first
    print("the task's exit handler ran")
    sys.setprofile(record)

atexit.register(watch_the_rest_of_the_exit)
"""
HEADER = """
WATCHED = ("_del_library", "_exit_function", "shutdown")
LATE = '''
import os, select, sys
pidfd = os.pidfd_open(int(sys.argv[1]))
select.select([pidfd], [], [])
print("written after the task ended", flush=True)
'''
"""


@pytest.fixture(scope="module")
def server() -> Iterator[fork_tasks.TaskServer]:
    """A fork server whose torch stage imports at once, as for a run with a training job."""
    with fork_tasks.serving() as serving:
        assert serving is not None
        serving.decide(torch_first=True)
        yield serving


def _start(server: fork_tasks.TaskServer, folder: Path, *argv: str) -> fork_tasks.ForkedTask:
    """The team's task module in `folder`, forked from the torch stage (it imports torch)."""
    (folder / "team_exit_task.py").write_text(HEADER + TASK)
    imports = frozenset({"team_exit_task", "torch"})
    task = Plan("team_exit_task", [str(folder), *argv], {}, imports)
    return server.fork(task, {**os.environ, "PYTHONPATH": str(folder)})


def _at_end(fd: int) -> tuple[bool, bytes]:
    """Whether the pipe `fd` is at its end now (nothing of it still open for writing), and what
    it held."""
    os.set_blocking(fd, False)
    data = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return False, data
        if not chunk:
            return True, data
        data += chunk


def test_exit_runs_the_tasks_handlers_not_the_teardown_of_preloaded_torch(
    server: fork_tasks.TaskServer, tmp_path: Path
) -> None:
    task = _start(server, tmp_path, "--late")
    try:
        lines = list(task.lines)
        assert task.wait() == 0
    finally:
        task.close()
    assert lines[0] == "preloaded torch\n"
    assert "the task's exit handler ran\n" in lines
    assert lines[-1] == "written after the task ended\n"  # the output ended with that process
    assert (tmp_path / "task.log").read_text() == "written at exit\n"
    calls = (tmp_path / "exit_calls.txt").read_text().split()
    # One library torn down: the task's own. A fresh interpreter would tear down every one
    # torch registered as it was imported (over a hundred), one at a time.
    assert calls.count("_del_library") == 1
    # multiprocessing's and logging's exit functions ran (torch imports multiprocessing).
    assert {"_exit_function", "shutdown"} <= set(calls)


def test_the_output_ends_by_the_time_the_status_comes(
    server: fork_tasks.TaskServer, tmp_path: Path
) -> None:
    task = _start(server, tmp_path)
    try:
        assert task.wait() == 0
        # The task's process may still be ending (freeing its memory): its output has ended.
        ended, data = _at_end(task.lines.fileno())
    finally:
        task.close()
    assert ended
    assert data.decode().splitlines() == ["preloaded torch", "the task's exit handler ran"]


def test_each_task_draws_its_own_random_numbers_as_a_fresh_interpreter_does(
    server: fork_tasks.TaskServer, tmp_path: Path
) -> None:
    draws = []
    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        task = _start(server, tmp_path / name)
        try:
            first, *_ = task.lines
            assert first == "preloaded torch\n"
            assert task.wait() == 0
        finally:
            task.close()
        draws.append((tmp_path / name / "draw.txt").read_text())
    assert draws[0] != draws[1]  # torch seeds its generator afresh in every interpreter


GC_TASK = """
import gc, weakref
import torch

class Node: pass
node = Node(); node.self = node
gone = weakref.ref(node); del node
gc.collect()
print(gc.isenabled(), gc.get_freeze_count() > 100_000, gone() is None, flush=True)
"""


def test_a_task_collects_its_garbage_and_never_walks_what_the_server_preloaded(
    server: fork_tasks.TaskServer, tmp_path: Path
) -> None:
    """The stages import without the collector and freeze what they imported (`import_gc`):
    a task has it on, and its passes skip torch's objects (nor copy the pages they are on)."""
    (tmp_path / "team_gc_task.py").write_text(GC_TASK)
    task = server.fork(
        Plan("team_gc_task", [], {}, frozenset({"team_gc_task", "torch"})),
        {**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    try:
        lines = list(task.lines)
        assert task.wait() == 0
    finally:
        task.close()
    assert lines == ["True True True\n"]
