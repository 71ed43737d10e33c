"""`vtp run` prints each tuning trial as it starts and as it ends (issue #51: no silence).

The engine follows the HyperparameterTuningJob a task records in its `gcp_resources`
(`vtp.engine.job_lines.TrialLines`). The run below tunes a user's script whose trials each wait
on a FIFO of their own; the test opens trial 1's only once the run has printed that trial 1
started, and trial 2's (the study runs one trial at a time) only once it has printed how trial 1
ended. Lines that came only when the task ended would leave the run waiting: the test fails on
its deadline instead of passing.
"""

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from vtp.engine.job_lines import TrialLines

PIPELINE = """
from kfp import dsl

from vtp.components.hyperparameter_tuning import hyperparameter_tuning

TRIAL = {trial!r}
IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"


@dsl.pipeline(name="gated-tuning")
def gated_tuning():
    hyperparameter_tuning(
        project="local",
        location="us-central1",
        display_name="gated",
        output_root="gs://team-tuning/runs",
        study_spec={{
            "metrics": [{{"metricId": "score", "goal": "MAXIMIZE"}}],
            "parameters": [{{"parameterId": "x", "discreteValueSpec": {{"values": [0.25, 0.5]}}}}],
            "algorithm": "GRID_SEARCH",
        }},
        job_spec={{"workerPoolSpecs": [{{
            "machineSpec": {{"machineType": "n1-standard-4"}},
            "replicaCount": 1,
            "containerSpec": {{"imageUri": IMAGE, "command": ["python", TRIAL]}},
        }}]}},
        max_trial_count=2,
        parallel_trial_count=1,
        poll_interval_seconds=0.5,
    )
"""

TRIAL = """
import os, sys
import hypertune

x = float(next(a for a in sys.argv if a.startswith("--x=")).split("=", 1)[1])
gate = os.path.join({folder!r}, "gate-" + os.environ["CLOUD_ML_TRIAL_ID"])
with open(gate) as fifo:  # until the test has seen what it waits for
    fifo.read()
hypertune.HyperTune().report_hyperparameter_tuning_metric("score", x)
"""

DEADLINE = 300.0
"""Seconds the test waits for the next line it needs before it fails."""


@pytest.mark.slow
def test_trials_are_printed_as_they_start_and_end(tmp_path: Path) -> None:
    (tmp_path / "trial.py").write_text(TRIAL.format(folder=str(tmp_path)))
    pipeline = PIPELINE.format(trial=str(tmp_path / "trial.py"))
    (tmp_path / "gated.py").write_text(pipeline)
    for trial in ("1", "2"):
        os.mkfifo(tmp_path / f"gate-{trial}")
    run = subprocess.Popen(
        [sys.executable, "-m", "vtp", "run", "gated.py"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert run.stdout is not None
    output = run.stdout
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in output:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []

    def wait_for(start: str) -> str:
        while True:
            try:
                line = lines.get(timeout=DEADLINE)
            except queue.Empty:
                run.kill()
                pytest.fail(f"no line {start!r} in {DEADLINE} s:\n" + "".join(seen[-40:]))
            seen.append(line)
            if line.startswith(start):
                return line.rstrip("\n")

    def release(trial: str) -> None:
        """Let the trial go once it opens its gate (in a thread: the deadline above still holds
        if it never does)."""

        def write() -> None:
            with open(tmp_path / f"gate-{trial}", "w") as fifo:
                fifo.write("go")

        threading.Thread(target=write, daemon=True).start()

    try:
        task = "[hyperparameter-tuning] "
        first = wait_for(f"{task}trial 1 started: ")
        release("1")
        first_end = wait_for(f"{task}trial 1 SUCCEEDED: ")
        second = wait_for(f"{task}trial 2 started: ")
        release("2")
        second_end = wait_for(f"{task}trial 2 SUCCEEDED: ")
        assert run.wait(timeout=DEADLINE) == 0, "".join(seen[-40:])
    finally:
        run.kill()
    assert first.startswith(f"{task}trial 1 started: x=0.25 (job ") and first.endswith(")")
    assert first_end == f"{task}trial 1 SUCCEEDED: x=0.25 -> score 0.25"
    assert second.startswith(f"{task}trial 2 started: x=0.5 (job ")
    assert second_end == f"{task}trial 2 SUCCEEDED: x=0.5 -> score 0.5"


def test_each_trial_is_one_start_and_one_end_whatever_the_polls_see() -> None:
    active = {"id": "1", "state": "ACTIVE", "parameters": [{"parameterId": "lr", "value": 0.01}]}
    done = {**active, "state": "SUCCEEDED", "finalMeasurement": {"metrics": [{"metricId": "acc"}]}}
    failed = {
        "id": "2", "state": "INFEASIBLE", "customJob": "projects/p/locations/l/customJobs/7",
        "parameters": [{"parameterId": "lr", "value": 1.0}, {"parameterId": "act", "value": "on"}],
        "infeasibleReason": "The trial's CustomJob failed.",
    }  # fmt: skip
    lines = TrialLines(session=None, url="")  # only `lines`, the pure part, is called
    assert lines.lines([]) == []
    assert lines.lines([active]) == ["trial 1 started: lr=0.01"]
    # trial 2 started and failed between two polls: both its lines; a metric of 0.0 (left out
    # of proto3 JSON) is 0
    assert lines.lines([done, failed]) == [
        "trial 1 SUCCEEDED: lr=0.01 -> acc 0",
        "trial 2 started: lr=1, act=on (job 7)",
        "trial 2 INFEASIBLE: lr=1, act=on -> no metric (The trial's CustomJob failed.)",
    ]
    assert lines.lines([done, failed]) == []
