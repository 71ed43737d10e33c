"""What the `custom_job` component does inside its container, as a plain function.

The component spec (`components/custom_job.py`) only declares inputs and outputs; this module
builds the CustomJob with the same library as `vtp custom-jobs create` (so the gcloud pool syntax
and every validation rule apply); the component then places it (`lifecycle.place`: its output
directory and re-attach key depend on what it runs, so ParallelFor iterations get a job each)
and hands it to `lifecycle.run_job`.
"""

import os
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from google.cloud import aiplatform_v1

from vtp.vertex.jobspec import JobFlags, build_custom_job
from vtp.vertex.trial_args import append_args, numbers_as_text, trial_args

DEFAULT_TASK = "vtp.trainer.tasks.digits"
"""The trainer's task when no `--task=` is given (vtp.trainer.config.Config.task)."""


def task_name(args: Sequence[str], prefix: str = "vtp-") -> str:
    """`vtp-<last part of the task module>` for the trainer `args` (`--task=my_pkg.model`)."""
    task = next((a.split("=", 1)[1] for a in args if a.startswith("--task=")), DEFAULT_TASK)
    return prefix + task.rsplit(".", 1)[-1]


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
                yaml.safe_dump(numbers_as_text(job_spec), stream)
        job = build_custom_job(
            JobFlags(
                display_name=display_name,
                worker_pool_specs=tuple(worker_pool_specs),
                config=config,
                **{key: value for key, value in flags.items() if value not in ("", None)},
            )
        )
    append_args(job.job_spec, [*args, *trial_args(dict(sorted(parameters.items())))])
    return job
