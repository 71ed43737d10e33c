"""Benchmark: what running the train pipeline costs beyond the training job it runs.

Runs the train pipeline in-process (`run_pipeline`: a pipeline job on a local service of the
run's own, run by its worker with the fork server), then reads the job's create and end times
back from the service; then `vtp run train` itself, as a command, from start to exit. For
reference, in the same run: the train pipeline with every task in a fresh interpreter
(VTP_TASK_FORK=0, as before the fork server), and a trivial 4-task pipeline (each task returns
at once) under plain kfp.local (a fresh interpreter per task, no service) and under `vtp run`.
Prints one JSON line on stdout (what the runs print goes to stderr):

    pipeline_wall_s        the run's own `seconds`: from the pipeline job's creation to its end
                           seen and read back (the figure #40's goals and earlier figures use)
    jobs_s                 sum over its Vertex jobs of (end_time - create_time)
    overhead_s             pipeline_wall_s - jobs_s: tasks, evaluation, export, registration
    tasks                  pipeline tasks that ran
    overhead_per_task_s    overhead_s / tasks
    wall_over_jobs         pipeline_wall_s / jobs_s
    call_wall_s            the whole `run_pipeline` call: the service's start and stop, and the
                           job's creation, too
    call_overhead_per_task_s  (call_wall_s - jobs_s) / tasks
    vtp_run_wall_s         `vtp run train` from start to exit (interpreter, CLI and file load too)
    vtp_run_wall_over_jobs vtp_run_wall_s / that run's jobs_s
    rerun_wall_s           the same `vtp run train` again on the same state directory: every
                           task is a cache hit (the job, its evaluation, export, registration)
    rerun_wall_over_first  rerun_wall_s / vtp_run_wall_s (goal: at most 0.15)
    fresh_pipeline_wall_s, fresh_jobs_s   the in-process run with VTP_TASK_FORK=0
    kfp_local_per_task_s   trivial pipeline, plain kfp.local: wall / 4
    vtp_run_trivial_per_task_s  the same pipeline under vtp run (service start included): wall / 4
    first_trainer_line_s   from a CustomJob's creation to its replicas' first line of their own,
                           median over 5 jobs of the train pipeline's pools (--max_steps=1)
    first_step_s           from the same jobs' creation to the trainer's first step, median
    trace                  the in-process train run, phase by phase (`vtp.run.trace.PHASES`:
                           service start, task start, job create, replica environment,
                           interpreter and imports, rendezvous, first step, training, job end
                           seen, task end, next task), in seconds
    vtp_run_trace          the same phases of `vtp run train` as a command

    python bench/pipeline_overhead.py [--trainer-arg=--epochs=5 ...]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google.oauth2.credentials import Credentials
from google.protobuf import json_format
from kfp import dsl, local

from vtp.images import COMPONENT_IMAGE
from vtp.pipelines import catalog
from vtp.run import trace
from vtp.run.job import PARENT
from vtp.run.local_run import RunResult, run_pipeline
from vtp.run.summary import dag_tasks, shown_tasks
from vtp.run.target import service_for

FIRST_LINE_JOBS = 5


def job_seconds(state_dir: Path) -> list[float]:
    """Create-to-end seconds of every CustomJob the run's service recorded."""
    with service_for(state_dir, run_coming=False) as service:
        client = aiplatform_v1.JobServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=service.url),
            credentials=Credentials(service.token),
        )
        jobs = client.list_custom_jobs(parent="projects/local/locations/us-central1")
        return [(job.end_time - job.create_time).total_seconds() for job in jobs]


def run(name: str, pipeline: object, arguments: dict, state_dir: Path) -> RunResult:
    """`pipeline` run as `vtp run` runs it, quietly; fails unless it succeeded."""
    spec = json_format.MessageToDict(pipeline.pipeline_spec)  # type: ignore[attr-defined]
    result = run_pipeline(name, spec, arguments, state_dir, report=lambda _result: None)
    if result is None or not result.succeeded:
        raise SystemExit(f"{name} failed: {result and result.job.error.message}")
    return result


@dsl.component(base_image="python:3.11")
def step(x: int) -> int:
    return x + 1


@dsl.pipeline(name="trivial")
def trivial(x: int = 0):
    step(x=step(x=step(x=step(x=x).output).output).output)


def kfp_local_seconds(root: Path) -> float:
    """Wall time of the trivial pipeline under plain kfp.local."""
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(root))
    started = time.monotonic()
    trivial()
    return time.monotonic() - started


def train(state_dir: Path, trainer_args: list[str]) -> tuple[float, float, float, int, dict]:
    """The train pipeline in-process: the run's seconds, the whole call's, the jobs' seconds,
    tasks, and its trace."""
    entry = catalog.entry("train")
    arguments = {**entry.local_params, "trainer_args": trainer_args}
    pipeline = entry.load()
    started, call_started = time.time(), time.monotonic()
    result = run("train", pipeline, arguments, state_dir)
    call = time.monotonic() - call_started
    tasks = len(shown_tasks(list(result.job.job_detail.task_details), dag_tasks(result.job)))
    jobs = sum(job_seconds(state_dir))
    return result.seconds, call, jobs, tasks, run_trace(state_dir, started)


def run_trace(state_dir: Path, started: float) -> dict[str, float]:
    """The phases of the only pipeline run in `state_dir`, whose command started at `started`."""
    with service_for(state_dir, run_coming=False) as service:
        return trace.ServiceReader(service.url, service.token).run_phases(started)


def first_lines(state_dir: Path) -> tuple[float, float]:
    """Medians over FIRST_LINE_JOBS CustomJobs of the train pipeline's pools, each run to its
    first step: seconds from creation to the first line of its replicas, and to the first step."""
    pool = {
        "machineSpec": {"machineType": "n1-standard-8"},
        "replicaCount": 1,
        "containerSpec": {
            "imageUri": COMPONENT_IMAGE,
            "args": ["--task=vtp.trainer.tasks.digits", "--max_steps=1"],
        },
    }
    spec = {
        "workerPoolSpecs": [pool, pool],
        "baseOutputDirectory": {"outputUriPrefix": "gs://vtp-local/bench-first-lines"},
    }
    firsts, steps = [], []
    with service_for(state_dir, run_coming=False) as service:
        reader = trace.ServiceReader(service.url, service.token)
        for attempt in range(FIRST_LINE_JOBS):
            body = {"displayName": f"first-line-{attempt}", "jobSpec": spec}
            job = aiplatform_v1.CustomJob.from_json(json.dumps(body))
            name = reader.jobs.create_custom_job(parent=PARENT, custom_job=job).name
            while (job := reader.jobs.get_custom_job(name=name)).state not in ENDED:
                time.sleep(0.2)
            lines = trace.job_lines(job, reader.entries(job))
            firsts.append(lines.first_line - lines.created)
            steps.append(lines.training - lines.created)
    return statistics.median(firsts), statistics.median(steps)


ENDED = {
    aiplatform_v1.JobState.JOB_STATE_SUCCEEDED,
    aiplatform_v1.JobState.JOB_STATE_FAILED,
    aiplatform_v1.JobState.JOB_STATE_CANCELLED,
}


def vtp_run_seconds(state_dir: Path, trainer_args: list[str]) -> tuple[float, float]:
    """`vtp run train` as a user runs it, from start to exit; and its start (epoch seconds)."""
    params = [f"--param=trainer_args={json.dumps(trainer_args)}"] if trainer_args else []
    argv = [sys.executable, "-m", "vtp", "run", "train", "--state-dir", str(state_dir), *params]
    started, wall = time.monotonic(), time.time()
    subprocess.run(argv, check=True, capture_output=True)
    return time.monotonic() - started, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trainer-arg", action="append", default=[], dest="trainer_args")
    options = parser.parse_args()
    # What the runs print (their tasks' logs, kfp.local's) goes to stderr: stdout is the JSON.
    sys.stdout.flush()
    stdout = os.dup(1)
    os.dup2(2, 1)
    with tempfile.TemporaryDirectory() as scratch:
        wall, call, jobs, tasks, phases = train(Path(scratch) / "train", options.trainer_args)
        command_wall, command_started = vtp_run_seconds(
            Path(scratch) / "command", options.trainer_args
        )
        command_jobs = sum(job_seconds(Path(scratch) / "command"))
        command_phases = run_trace(Path(scratch) / "command", command_started)
        rerun_wall, _ = vtp_run_seconds(Path(scratch) / "command", options.trainer_args)
        if len(job_seconds(Path(scratch) / "command")) != 1:
            raise SystemExit("the identical rerun started a training job: its cache missed")
        first_line, first_step = first_lines(Path(scratch) / "train")
        os.environ["VTP_TASK_FORK"] = "0"
        fresh_wall, _, fresh_jobs, _, _ = train(Path(scratch) / "fresh", options.trainer_args)
        del os.environ["VTP_TASK_FORK"]
        reference = kfp_local_seconds(Path(scratch) / "kfp-local")
        ours = run("trivial", trivial, {}, Path(scratch) / "trivial")
    sys.stdout.flush()
    os.dup2(stdout, 1)
    os.close(stdout)
    overhead = wall - jobs
    figures = {
        "pipeline": "train",
        "pipeline_wall_s": round(wall, 2),
        "jobs_s": round(jobs, 2),
        "overhead_s": round(overhead, 2),
        "tasks": tasks,
        "overhead_per_task_s": round(overhead / tasks, 2),
        "wall_over_jobs": round(wall / jobs, 2),
        "call_wall_s": round(call, 2),
        "call_overhead_per_task_s": round((call - jobs) / tasks, 2),
        "vtp_run_wall_s": round(command_wall, 2),
        "vtp_run_wall_over_jobs": round(command_wall / command_jobs, 2),
        "rerun_wall_s": round(rerun_wall, 2),
        "rerun_wall_over_first": round(rerun_wall / command_wall, 3),
        "fresh_pipeline_wall_s": round(fresh_wall, 2),
        "fresh_jobs_s": round(fresh_jobs, 2),
        "kfp_local_per_task_s": round(reference / 4, 2),
        "vtp_run_trivial_per_task_s": round(ours.seconds / 4, 2),
        "first_trainer_line_s": round(first_line, 2),
        "first_step_s": round(first_step, 2),
        "trace": phases,
        "vtp_run_trace": command_phases,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
