"""What the `custom_job` component does inside its container, as a plain function.

The component spec (`components/custom_job.py`) only declares inputs and outputs; this module
builds the CustomJob with the same library as `vtp custom-jobs create` (so the gcloud pool syntax
and every validation rule apply), places it (`place`: its output directory and re-attach key
depend on what it runs, so ParallelFor iterations get a job each), then hands it to
`lifecycle.run_job`.
"""

import os
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from google.cloud import aiplatform_v1

from vtp.vertex import lifecycle
from vtp.vertex.jobspec import JobFlags, build_custom_job

DEFAULT_TASK = "trainer.tasks.digits"
"""The trainer's task when no `--task=` is given (trainer.config.Config.task)."""


def task_name(args: Sequence[str], prefix: str = "vtp-") -> str:
    """`vtp-<last part of the task module>` for the trainer `args` (`--task=my_pkg.model`)."""
    task = next((a.split("=", 1)[1] for a in args if a.startswith("--task=")), DEFAULT_TASK)
    return prefix + task.rsplit(".", 1)[-1]


def trial_args(parameters: Mapping[str, Any]) -> list[str]:
    """Parameters as the flags Vertex appends to a trial's args: `--<id>=<value>`."""
    return [f"--{key}={_flag_value(value)}" for key, value in sorted(parameters.items())]


def build_job(
    display_name: str,
    worker_pool_specs: Sequence[str],
    job_spec: Mapping[str, Any],
    args: Sequence[str],
    parameters: Mapping[str, Any],
    **flags: Any,
) -> aiplatform_v1.CustomJob:
    """The validated CustomJob: pools from gcloud-style specs or a full spec, then args appended.

    An empty `display_name` follows the trainer's task: `vtp-<task>` (`--task=` in `args`)."""
    display_name = display_name or task_name(args)
    with tempfile.TemporaryDirectory() as scratch:
        config = None
        if job_spec:
            config = os.path.join(scratch, "job_spec.yaml")
            with open(config, "w") as stream:
                yaml.safe_dump(dict(job_spec), stream)
        job = build_custom_job(
            JobFlags(
                display_name=display_name,
                worker_pool_specs=tuple(worker_pool_specs),
                config=config,
                **{key: value for key, value in flags.items() if value not in ("", None)},
            )
        )
    extra = [*args, *trial_args(parameters)]
    for pool in job.job_spec.worker_pool_specs:
        for task in (pool.container_spec, pool.python_package_spec):
            if task:
                task.args.extend(extra)
    return job


def place(
    job: aiplatform_v1.CustomJob, output_root: str, pipeline_run: str, task_name: str
) -> lifecycle.TaskJob:
    """Where this task's job lives; the job's base output directory is set to that place."""
    task = lifecycle.task_job(output_root, pipeline_run, task_name, job)
    job.job_spec.base_output_directory.output_uri_prefix = task.output_dir
    return task


def run_custom_job(
    project: str,
    location: str,
    job: aiplatform_v1.CustomJob,
    task_key: str,
    gcp_resources: str,
    polling: lifecycle.Polling,
) -> aiplatform_v1.CustomJob:
    """Submit (or re-attach to) the job and wait for it; raise JobFailed if it does not succeed."""
    target = lifecycle.Target.resolve(project, location)
    return lifecycle.run_job(lifecycle.CUSTOM_JOB, target, job, task_key, gcp_resources, polling)


def _flag_value(value: Any) -> str:
    # Pipelines hand ints over as floats (1.0): give the trainer the integer it asked for.
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
