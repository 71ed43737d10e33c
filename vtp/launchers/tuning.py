"""What the `hyperparameter_tuning` component does inside its container, as plain functions.

The trial job is built with the same library as the `custom_job` component (gcloud pool syntax,
every validation rule), the study with `vtp.vertex.study`; the result is read back from
the finished job's trials, since Google's pipeline components no longer ship best-trial helpers.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp.images import TRAINER_METRICS, is_project_image
from vtp.launchers import custom_job
from vtp.trainer.config import Config
from vtp.vertex.protodict import SpecError
from vtp.vertex.study import tuning_job_from_dict, typed_values
from vtp.vertex.task_flags import named_tasks

Trial = aiplatform_v1.Trial
METRIC_FLAG = "--hypertune_metric"
"""The trainer's flag that picks the metric it reports to the study."""


@dataclass(frozen=True)
class BestTrial:
    """The best trial of a finished study, in the types a pipeline passes on: an INTEGER
    parameter (or a DISCRETE one of whole numbers) as an int, a DOUBLE as a float."""

    trial_id: str
    parameters: dict[str, Any]
    metric: float


def build_tuning_job(
    display_name: str,
    study_spec: Mapping[str, Any],
    max_trial_count: int,
    parallel_trial_count: int,
    max_failed_trial_count: int,
    trial_job: aiplatform_v1.CustomJob,
) -> aiplatform_v1.HyperparameterTuningJob:
    """The validated tuning job whose trials run `trial_job`'s spec, told the study's metric."""
    spec = json_format.MessageToDict(aiplatform_v1.CustomJobSpec.pb(trial_job.job_spec))
    job = tuning_job_from_dict(
        {
            "displayName": display_name,
            "studySpec": dict(study_spec),
            "maxTrialCount": max_trial_count,
            "parallelTrialCount": parallel_trial_count,
            "maxFailedTrialCount": max_failed_trial_count,
            "trialJobSpec": spec,
        }
    )
    report_study_metric(job)
    return job


def report_study_metric(job: aiplatform_v1.HyperparameterTuningJob) -> None:
    """Make every pool that runs the project's trainer report the study's metric.

    The trainer reports one metric (`--hypertune_metric`, accuracy by default); a study on
    another one would mark every trial INFEASIBLE after all of them ran. So the flag is added
    where the args leave it out, and a metric the built-in task cannot report fails here, before
    anything is submitted (a `--task` of the team's own may report its own metrics: the trainer
    checks the flag against the task when each trial starts).
    """
    metric = job.study_spec.metrics[0].metric_id
    for index, pool in enumerate(job.trial_job_spec.worker_pool_specs):
        if not runs_trainer(pool):
            continue
        given = flag_value(pool.container_spec.args, METRIC_FLAG)
        if given is None and (metric in TRAINER_METRICS or own_task(pool.container_spec.args)):
            pool.container_spec.args.append(f"{METRIC_FLAG}={metric}")
        elif given is None:
            raise SpecError(
                "study_spec.metrics[0].metricId",
                f"{metric!r} is not a metric the trainer reports (pool {index} runs it); "
                f"use one of {', '.join(TRAINER_METRICS)}",
            )
        elif given != metric:
            raise SpecError(
                "args",
                f"{METRIC_FLAG}={given} makes the trainer report {given!r}, but "
                f"study_spec.metrics[0].metricId is {metric!r}; make them agree",
            )


def own_task(args: Sequence[str]) -> bool:
    """True when `args` name a trainer task other than the built-in digits task, one that may
    report metrics of its own."""
    return any(task != Config.task for task in named_tasks(args))


def runs_trainer(pool: aiplatform_v1.WorkerPoolSpec) -> bool:
    """True when the pool runs `python -m vtp.trainer`: the project's image with no command."""
    spec = pool.container_spec
    return bool(spec.image_uri) and not spec.command and is_project_image(spec.image_uri)


def flag_value(args: Sequence[str], flag: str) -> str | None:
    """The value the last `flag=V` or `flag V` in `args` gives (argparse's rule), if any."""
    value = None
    for index, arg in enumerate(args):
        if arg.startswith(f"{flag}="):
            value = arg.partition("=")[2]
        elif arg == flag and index + 1 < len(args):
            value = args[index + 1]
    return value


def best_trial(job: aiplatform_v1.HyperparameterTuningJob) -> BestTrial:
    """The succeeded trial with the best final value of the study's (first) metric."""
    metric = job.study_spec.metrics[0]
    maximize = metric.goal == aiplatform_v1.StudySpec.MetricSpec.GoalType.MAXIMIZE
    scored = [
        (value, trial)
        for trial in job.trials
        if trial.state == Trial.State.SUCCEEDED
        and (value := final_value(trial, metric.metric_id)) is not None
    ]
    if not scored:
        raise RuntimeError(f"{job.name}: no trial succeeded with a final {metric.metric_id}")
    value, trial = (max if maximize else min)(scored, key=lambda pair: pair[0])
    return BestTrial(trial.id, typed_values(job.study_spec, parameter_values(trial)), value)


def final_value(trial: Trial, metric_id: str) -> float | None:
    """The trial's final measurement of `metric_id`, if it has one."""
    for metric in trial.final_measurement.metrics:
        if metric.metric_id == metric_id:
            return metric.value
    return None


def parameter_values(trial: Trial) -> dict[str, Any]:
    """A trial's parameters as plain values (numbers as the doubles Vertex returns, or strings);
    `best_trial` types them by the study spec (`vtp.vertex.study.typed_values`)."""
    return {p.parameter_id: p.value for p in trial.parameters}


def trials_summary(job: aiplatform_v1.HyperparameterTuningJob) -> list[dict[str, Any]]:
    """Every trial as REST JSON (id, state, parameters, measurements), for the trials artifact."""
    return [json_format.MessageToDict(Trial.pb(trial)) for trial in job.trials]


def trial_job(
    worker_pool_specs: Sequence[str], job_spec: Mapping[str, Any], args: Sequence[str], **flags: Any
) -> aiplatform_v1.CustomJob:
    """The CustomJob every trial runs (its spec becomes `trialJobSpec`)."""
    return custom_job.build_job("trial", worker_pool_specs, job_spec, args, {}, **flags)
