"""The fork server imports the full SDK (its last stage) only for a run that may want it
(`fork_tasks.wants_sdk`): told that no task of the run imports it, the stage before it starts
no process for it, and the run's jobs do not lose CPU to an import nobody uses."""

import os
import time
from pathlib import Path

import pytest

from tests.vtp.testing.test_team_suite import descendants
from vtp.engine import fork_server, fork_tasks
from vtp.engine.task_commands import Plan

pytestmark = pytest.mark.slow

TASK = """
import os, sys
print(os.getpid(), "torch.export._trace" in sys.modules, flush=True)
"""


@pytest.mark.parametrize("sdk_stage", [False, True], ids=["not wanted", "wanted"])
def test_the_sdk_stage_exists_only_when_the_run_may_want_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sdk_stage: bool
) -> None:
    (tmp_path / "stage_probe.py").write_text(TASK)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with fork_tasks.serving() as server:
        assert server is not None
        server.decide(torch_first=True, sdk_stage=sdk_stage)
        imports = frozenset({"stage_probe", "vtp.trainer.export"})
        tasks: set[int] = set()
        deadline = time.monotonic() + 120
        while True:  # a task waits for the torch.export stage a while: until one finds it
            task = server.fork(Plan("stage_probe", [], {}, imports), dict(os.environ))
            try:
                pid, export_stage = task.lines.readline().split()
                assert task.wait() == 0
            finally:
                task.close()
            tasks.add(int(pid))
            if export_stage == "True":
                break
            assert time.monotonic() < deadline, "the torch.export stage never came"
        # That stage served the task, so it has decided on (and started) the next by now.
        assert server._process is not None
        server_pid = server._process.pid
        stages = {server_pid, *descendants(server_pid)} - tasks
    assert len(stages) == fork_server.SDK_STAGE + sdk_stage  # stages 0..4, and the SDK's
