"""The per-phase trace of a local pipeline run, which `bench/pipeline_overhead.py` prints: every
phase is reported for a `vtp run train` run as a user runs it (the figures are the bench's)."""

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

from vtp.run import trace
from vtp.run.target import service_for


@pytest.mark.slow
def test_a_train_run_reports_every_phase_from_service_start_to_the_next_task(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    vtp = Path(sys.executable).parent / "vtp"
    started = time.time()
    result = subprocess.run(
        [str(vtp), "run", "train", "--state-dir", str(state),
         "--param", 'trainer_args=["--max_steps=1"]'],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    # The trainer says what it does before its imports: the job is never silent.
    assert "trainer: starting vtp.trainer.tasks.digits: importing PyTorch" in result.stdout

    with service_for(state, run_coming=False) as service:
        phases = trace.ServiceReader(service.url, service.token).run_phases(started)

    assert list(phases) == list(trace.PHASES)
    missing = [name for name, seconds in phases.items() if not math.isfinite(seconds)]
    assert not missing, phases
