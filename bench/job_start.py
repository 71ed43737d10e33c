"""Benchmark: what a one-replica CustomJob costs next to its script run bare.

The script is a team's smallest PyTorch job: it imports torch, takes one AdamW step on a tiny
model and prints its loss. It runs bare (`python step.py`, a fresh interpreter), then as the
command of a one-replica CustomJob on a local service (our image, so a host process), created
and waited for over REST as a client would. The service is started once, and its first job
(which starts the preloaded server that warm replicas fork from, `vtp/local/runtime/warm.py`)
is reported on its own; the others are what every later job of a test suite or a `vtp local
serve` costs. Prints one JSON line on stdout:

    bare_script_s          `python step.py` from start to exit, median of RUNS
    job_s                  a job's create request to its end read back (JOB_STATE_SUCCEEDED),
                           median of RUNS after the first job
    job_over_bare_script   job_s / bare_script_s (the goal: at most 1.0)
    first_job_s            the service's first job, the same way
    start_to_first_line_s  from the service's note that the replica starts to the script's
                           first line, median over the same jobs
    warm                   the jobs whose replica forked from the preloaded server (the rest
                           started cold: VTP_LOCAL_WARM_REPLICAS=off shows the cold figures)
    commit                 the commit measured

    python bench/job_start.py [--runs 5]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from google.cloud import aiplatform_v1

from vtp.images import COMPONENT_IMAGE
from vtp.run import trace
from vtp.run.job import PARENT
from vtp.run.target import service_for

STEP = """\
import torch

model = torch.nn.Linear(16, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
loss = model(torch.randn(8, 16)).pow(2).mean()
loss.backward()
optimizer.step()
print(f"one step: loss {loss.item():.4f}")
"""
ENDED = {
    aiplatform_v1.JobState.JOB_STATE_SUCCEEDED,
    aiplatform_v1.JobState.JOB_STATE_FAILED,
    aiplatform_v1.JobState.JOB_STATE_CANCELLED,
}


def bare(script: Path, runs: int) -> float:
    """Median wall seconds of `python script` (its output is checked, then dropped)."""
    walls = []
    for _ in range(runs):
        started = time.monotonic()
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
        walls.append(time.monotonic() - started)
        if done.returncode or "one step" not in done.stdout:
            raise SystemExit(f"the bare script failed: {done.stderr}")
    return statistics.median(walls)


def job(reader: trace.ServiceReader, script: Path, attempt: int) -> tuple[float, float, bool]:
    """Seconds from a job's create request to its end seen; from its replica's start note to
    the script's first line; whether the replica forked warm."""
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": 1,
        "containerSpec": {"imageUri": COMPONENT_IMAGE, "command": ["python", str(script)]},
    }
    body = {"displayName": f"job-start-{attempt}", "jobSpec": {"workerPoolSpecs": [pool]}}
    started = time.monotonic()
    name = reader.jobs.create_custom_job(
        parent=PARENT, custom_job=aiplatform_v1.CustomJob.from_json(json.dumps(body))
    ).name
    while (done := reader.jobs.get_custom_job(name=name)).state not in ENDED:
        time.sleep(0.02)
    wall = time.monotonic() - started
    if done.state != aiplatform_v1.JobState.JOB_STATE_SUCCEEDED:
        raise SystemExit(f"job {name} ended {done.state.name}: {done.error.message}")
    entries = reader.entries(done)
    lines = trace.job_lines(done, entries)
    warm = any("starts warm" in e.get("textPayload", "") for e in entries)
    return wall, lines.first_line - lines.started, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="vtp-job-start-") as tmp:
        script = Path(tmp, "step.py")
        script.write_text(STEP)
        bare_s = bare(script, runs)
        with service_for(Path(tmp, "state"), run_coming=False) as service:
            reader = trace.ServiceReader(service.url, service.token)
            first_s, first_line, _ = job(reader, script, 0)
            measured = [job(reader, script, attempt) for attempt in range(1, runs + 1)]
    job_s = statistics.median(m[0] for m in measured)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
        cwd=Path(__file__).parent,
    ).stdout.strip()  # fmt: skip
    figures = {
        "bare_script_s": round(bare_s, 3),
        "job_s": round(job_s, 3),
        "job_over_bare_script": round(job_s / bare_s, 3),
        "first_job_s": round(first_s, 3),
        "start_to_first_line_s": round(statistics.median(m[1] for m in measured), 3),
        "first_job_start_to_first_line_s": round(first_line, 3),
        "warm": sum(m[2] for m in measured),
        "runs": runs,
        "commit": commit,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
