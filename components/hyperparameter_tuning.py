"""The `hyperparameter_tuning` component: run a Vertex AI tuning job, output its best trial."""

# mypy: disable-error-code="valid-type"
# (kfp's own annotations, OutputPath(str) and NamedTuple("Outputs", [...]), are calls, not types)

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Artifact, Model, Output, OutputPath

from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def hyperparameter_tuning(
    project: str,
    location: str,
    display_name: str,
    output_root: str,
    study_spec: dict,
    trials: Output[Artifact],
    best_model: Output[Model],
    gcp_resources: OutputPath(str),
    worker_pool_specs: list = [],
    job_spec: dict = {},
    args: list = [],
    max_trial_count: int = 8,
    parallel_trial_count: int = 2,
    max_failed_trial_count: int = 0,
    timeout: str = "",
    restart_job_on_worker_restart: bool = False,
    scheduling_strategy: str = "",
    service_account: str = "",
    poll_interval_seconds: float = 10.0,
    pipeline_run: str = dsl.PIPELINE_JOB_ID_PLACEHOLDER,
    task_name: str = dsl.PIPELINE_TASK_NAME_PLACEHOLDER,
) -> NamedTuple("Outputs", [("best_parameters", dict), ("best_metric", float)]):
    """Runs a hyperparameter tuning job and returns its best trial.

    Args:
        project: Google Cloud project that runs the job.
        location: Vertex AI region (e.g. us-central1), multi-region (us, eu) or global.
        display_name: Name shown for the tuning job in the Vertex AI console.
        output_root: Cloud Storage prefix (gs://bucket/path); trial N writes its model and
            checkpoints under <output_root>/<pipeline run>/<task>-<digest of the job>/N/.
        study_spec: The StudySpec (REST field names): metrics, parameters, algorithm, early
            stopping. Parameter ids are trainer flags; the trainer gets --hypertune_metric.
        trials: Every trial (parameters, measurements, state) as a JSON list.
        best_model: Model directory of the best trial.
        gcp_resources: The tuning job's resource, for the console link and cancellation.
        worker_pool_specs: Worker pools of each trial, in gcloud's --worker-pool-spec syntax.
        job_spec: A full CustomJobSpec (REST field names) for each trial instead of the pools.
        args: Arguments for every replica of every trial; trial parameters are appended.
        max_trial_count: Trials to run in all.
        parallel_trial_count: Trials that may run at once.
        max_failed_trial_count: Failed trials tolerated before the job fails (0: Vertex decides).
        timeout: Maximum run time of each trial, e.g. "1h".
        restart_job_on_worker_restart: Restart every worker of a trial when one restarts.
        scheduling_strategy: STANDARD, SPOT or FLEX_START for the trials.
        service_account: Service account the trials run as.
        poll_interval_seconds: First wait between two status checks; it grows up to 60 s.
        pipeline_run: Filled in by the pipeline: ties the job to this run for re-attachment.
        task_name: Filled in by the pipeline: ties the job to this task for re-attachment.

    Returns:
        best_parameters: The best trial's parameters, by parameter id.
        best_metric: The best trial's final value of the study's metric.
    """
    import json
    import logging
    from collections import namedtuple

    from vtp.launchers import tuning as launcher
    from vtp.vertex import lifecycle

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    trial_job = launcher.trial_job(
        worker_pool_specs,
        job_spec,
        args,
        timeout=timeout,
        restart_job_on_worker_restart=restart_job_on_worker_restart,
        scheduling_strategy=scheduling_strategy,
        service_account=service_account,
    )
    job = launcher.build_tuning_job(
        display_name,
        study_spec,
        max_trial_count,
        parallel_trial_count,
        max_failed_trial_count,
        trial_job,
    )
    task = lifecycle.place(lifecycle.TUNING_JOB, job, output_root, pipeline_run, task_name)
    target = lifecycle.Target.resolve(project, location)
    polling = lifecycle.Polling(initial=poll_interval_seconds)
    final = lifecycle.run_job(lifecycle.TUNING_JOB, target, job, task.key, gcp_resources, polling)
    best = launcher.best_trial(final)
    with open(trials.path, "w") as stream:
        json.dump(launcher.trials_summary(final), stream, indent=1)
    trials.metadata.update({"tuning_job": final.name, "best_trial": best.trial_id})
    best_model.uri = f"{task.output_dir}/{best.trial_id}/model"
    best_model.metadata.update({"trial": best.trial_id, "metric": best.metric, **best.parameters})
    Outputs = namedtuple("Outputs", ["best_parameters", "best_metric"])
    return Outputs(best.parameters, best.metric)
