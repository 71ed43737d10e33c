"""Benchmark: what running the train pipeline costs beyond the training job it runs.

Runs `vtp run train` in-process (embedded local service + kfp.local), then reads the job's
create and end times back from the service. Prints one JSON line:

    pipeline_wall_s     wall time of the whole pipeline run
    jobs_s              sum over its Vertex jobs of (end_time - create_time)
    overhead_s          pipeline_wall_s - jobs_s: tasks, polling, evaluation, export
    tasks               pipeline tasks that ran
    overhead_per_task_s overhead_s / tasks

    python bench/pipeline_overhead.py [--trainer-arg=--epochs=5 ...]
"""

import argparse
import json
import tempfile
from pathlib import Path

from vtp.run.local_run import embedded_service, run_pipeline
from vtp.run.summary import latest_run, task_outputs
from vtp.vertex.client import job_client


def job_seconds(state_dir: Path) -> list[float]:
    """Create-to-end seconds of every CustomJob the run's service recorded."""
    with embedded_service(state_dir):
        client = job_client("us-central1", local=True)
        jobs = client.list_custom_jobs(parent="projects/local/locations/us-central1")
        return [(job.end_time - job.create_time).total_seconds() for job in jobs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainer-arg", action="append", default=[], dest="trainer_args")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        state_dir = Path(scratch)
        result = run_pipeline("train", {"trainer_args": options.trainer_args}, state_dir)
        if not result.succeeded:
            raise SystemExit(f"the pipeline failed: {result.error}")
        tasks = len(task_outputs(latest_run(result.pipeline_root)))
        jobs = job_seconds(state_dir)
    overhead = result.seconds - sum(jobs)
    figures = {
        "pipeline": "train",
        "pipeline_wall_s": round(result.seconds, 2),
        "jobs_s": round(sum(jobs), 2),
        "overhead_s": round(overhead, 2),
        "tasks": tasks,
        "overhead_per_task_s": round(overhead / tasks, 2),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
