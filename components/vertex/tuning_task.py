"""What the `hyperparameter_tuning` component does inside its container, as plain functions.

The trial job is built with the same library as the `custom_job` component (gcloud pool syntax,
every validation rule), the study with `components.vertex.study`; the result is read back from
the finished job's trials, since Google's pipeline components no longer ship best-trial helpers.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.cloud import aiplatform_v1
from google.protobuf import json_format

from components.vertex import custom_job_task, lifecycle
from components.vertex.study import tuning_job_from_dict

Trial = aiplatform_v1.Trial


@dataclass(frozen=True)
class BestTrial:
    """The best trial of a finished study, in the types a pipeline passes on."""

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
    """The validated tuning job whose trials run `trial_job`'s spec."""
    spec = json_format.MessageToDict(aiplatform_v1.CustomJobSpec.pb(trial_job.job_spec))
    return tuning_job_from_dict(
        {
            "displayName": display_name,
            "studySpec": dict(study_spec),
            "maxTrialCount": max_trial_count,
            "parallelTrialCount": parallel_trial_count,
            "maxFailedTrialCount": max_failed_trial_count,
            "trialJobSpec": spec,
        }
    )


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
    return BestTrial(trial.id, parameter_values(trial), value)


def final_value(trial: Trial, metric_id: str) -> float | None:
    """The trial's final measurement of `metric_id`, if it has one."""
    for metric in trial.final_measurement.metrics:
        if metric.metric_id == metric_id:
            return metric.value
    return None


def parameter_values(trial: Trial) -> dict[str, Any]:
    """A trial's parameters as plain values (numbers or strings)."""
    return {p.parameter_id: p.value for p in trial.parameters}


def trials_summary(job: aiplatform_v1.HyperparameterTuningJob) -> list[dict[str, Any]]:
    """Every trial as REST JSON (id, state, parameters, measurements), for the trials artifact."""
    return [json_format.MessageToDict(Trial.pb(trial)) for trial in job.trials]


def run_tuning_job(
    project: str,
    location: str,
    job: aiplatform_v1.HyperparameterTuningJob,
    task_key: str,
    gcp_resources: str,
    polling: lifecycle.Polling,
) -> aiplatform_v1.HyperparameterTuningJob:
    """Submit (or re-attach to) the tuning job and wait for it to end."""
    target = lifecycle.Target.resolve(project, location)
    return lifecycle.run_job(lifecycle.TUNING_JOB, target, job, task_key, gcp_resources, polling)


def trial_job(
    worker_pool_specs: Sequence[str], job_spec: Mapping[str, Any], args: Sequence[str], **flags: Any
) -> aiplatform_v1.CustomJob:
    """The CustomJob every trial runs (its spec becomes `trialJobSpec`)."""
    return custom_job_task.build_job("trial", worker_pool_specs, job_spec, args, {}, **flags)
