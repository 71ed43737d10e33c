"""The tune pipeline: tune, retrain with the best parameters, evaluate, export if good enough.

hyperparameter_tuning -> custom_job(best parameters) -> evaluate_checkpoints
(trials and the final job train the same `task`: --task=<task> ahead of their args)
    -> [metric passes] export_model -> upload_model
"""

from kfp import dsl

from vtp.components.custom_job import custom_job
from vtp.components.hyperparameter_tuning import hyperparameter_tuning
from vtp.images import COMPONENT_IMAGE
from vtp.pipelines.stages import evaluate_and_register, inputs_for, with_task
from vtp.pipelines.train import DEFAULT_POOLS
from vtp.trainer.config import Config

TRIAL_POOLS = [f"machine-type=n1-standard-8,replica-count=1,container-image-uri={COMPONENT_IMAGE}"]
"""One replica per trial: trials are many and short, so they gain more from running in parallel."""

DEFAULT_STUDY = {
    "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": [
        {
            "parameterId": "learning_rate",
            "doubleValueSpec": {"minValue": 1e-4, "maxValue": 3e-2},
            "scaleType": "UNIT_LOG_SCALE",
        },
        {"parameterId": "hidden_size", "discreteValueSpec": {"values": [32, 64, 128, 256]}},
    ],
    "measurementSelectionType": "BEST_MEASUREMENT",
}
"""Learning rate and width of the digits model; ids are the trainer's flags."""


@dsl.pipeline(name="vtp-tune", description="Tune, retrain with the best trial, evaluate, export.")
def tune_pipeline(
    project: str,
    output_root: str,
    location: str = "us-central1",
    task: str = Config.task,
    study_spec: dict = DEFAULT_STUDY,
    trial_pool_specs: list = TRIAL_POOLS,
    trial_args: list = ["--epochs=5", "--eval_interval=50"],
    max_trial_count: int = 4,
    parallel_trial_count: int = 2,
    max_failed_trial_count: int = 1,
    worker_pool_specs: list = DEFAULT_POOLS,
    trainer_args: list = [],
    metric: str = "accuracy",
    threshold: float = 0.95,
    poll_interval_seconds: float = 10.0,
    model_display_name: str = "",
    parent_model: str = "",
):
    """Finds good hyperparameters, trains a final model with them, and exports it.

    Args:
        project: Google Cloud project that runs the jobs.
        output_root: Cloud Storage prefix (gs://bucket/path) for trials, models, checkpoints.
        location: Vertex AI region.
        task: The trainer's task module (--task) of the trials and the final training, e.g.
            my_task in your folder or image.
        study_spec: The StudySpec (REST field names); parameter ids are trainer flags.
        trial_pool_specs: Worker pools of each trial, in gcloud's --worker-pool-spec syntax.
        trial_args: Trainer flags for every trial (shorter runs than the final training), after
            --task=<task>; a --task here must be the same task.
        max_trial_count: Trials to run in all.
        parallel_trial_count: Trials that may run at once.
        max_failed_trial_count: Failed trials tolerated before the tuning job fails.
        worker_pool_specs: Worker pools of the final training job.
        trainer_args: Trainer flags of the final training job, after --task=<task>; the best
            parameters follow them.
        metric: accuracy (higher is better), loss (lower is better) or a metric of the task's
            own (its GOALS say which way) for the final model.
        threshold: The final model is exported only if its metric is at least this good.
        poll_interval_seconds: First wait between two status checks of each job.
        model_display_name: Name of the registered model in the Model Registry; empty:
            vtp-<task> (the task the model was trained with).
        parent_model: A registered model to add this one to as a new version; empty
            registers a new model.
    """
    pipeline = dict(locals())  # the parameters by name, before any other local is made
    trial_flags = with_task(task=task, args=trial_args).set_display_name("trial-flags")
    final_flags = with_task(task=task, args=trainer_args).set_display_name("final-flags")
    tuning = hyperparameter_tuning(
        **inputs_for(
            hyperparameter_tuning,
            pipeline,
            display_name="vtp-tune",
            worker_pool_specs=trial_pool_specs,
            args=trial_flags.output,
        )
    )
    final = custom_job(
        **inputs_for(
            custom_job,
            pipeline,
            display_name="vtp-tune-final",
            args=final_flags.output,
            parameters=tuning.outputs["best_parameters"],
            restart_job_on_worker_restart=True,
        )
    )
    evaluate_and_register(final.outputs["checkpoints"], pipeline)
