"""A task of a run with a training job that wants the fork server's torch.export stage waits for
it while it imports in the background, but only a while (`fork_server.EXPORT_WAIT_SECONDS`):
a stage starved by running jobs never holds the task for longer."""

import os
from pathlib import Path

import pytest

from vtp.engine import fork_server, fork_tasks
from vtp.engine.task_commands import Plan

pytestmark = pytest.mark.slow

TASK = """
import sys
print("torch.export preloaded" if "torch.export._trace" in sys.modules else "torch stage")
print("torch" in sys.modules)
"""


def test_a_task_waits_for_the_torch_export_stage_only_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stage's last import never ends here (as if jobs took every core from it): the task
    # still runs, forked from the torch stage, once it has waited its while.
    last = fork_server.STAGES[fork_server.TORCH_STAGE + 1][-1]
    (tmp_path / f"{last}.py").write_text("import threading\nthreading.Event().wait()\n")
    (tmp_path / "export_like_task.py").write_text(TASK)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with fork_tasks.serving() as server:
        assert server is not None
        server.decide(torch_first=True)
        imports = frozenset({"export_like_task", "vtp.trainer.export"})
        assert fork_server.wanted_stage(imports, server._stages) == fork_server.TORCH_STAGE + 1
        task = server.fork(Plan("export_like_task", [], {}, imports), dict(os.environ))
        try:
            lines = list(task.lines)
            assert task.wait() == 0
        finally:
            task.close()
    assert lines == ["torch stage\n", "True\n"]
