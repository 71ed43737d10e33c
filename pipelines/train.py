"""The train pipeline: a distributed CustomJob, checkpoint evaluation, export if good enough.

with_task (--task=<task> ahead of trainer_args) -> custom_job (pool 0 + pool 1, DDP)
    -> evaluate_checkpoints
    -> [metric passes] export_model -> upload_model -> [deploy] deploy_model
"""

from kfp import dsl

from vtp.components.custom_job import custom_job
from vtp.images import COMPONENT_IMAGE
from vtp.pipelines.stages import evaluate_and_register, inputs_for, with_task
from vtp.trainer.config import Config

DEFAULT_POOLS = [
    f"machine-type=n1-standard-8,replica-count=1,container-image-uri={COMPONENT_IMAGE}",
    f"machine-type=n1-standard-8,replica-count=1,container-image-uri={COMPONENT_IMAGE}",
]
"""Primary plus one worker running the trainer: the smallest real DDP job."""


@dsl.pipeline(name="vtp-train", description="Train with DDP, evaluate checkpoints, export.")
def train_pipeline(
    project: str,
    output_root: str,
    location: str = "us-central1",
    display_name: str = "",
    task: str = Config.task,
    worker_pool_specs: list = DEFAULT_POOLS,
    trainer_args: list = [],
    restart_job_on_worker_restart: bool = True,
    scheduling_strategy: str = "",
    timeout: str = "",
    metric: str = "accuracy",
    threshold: float = 0.95,
    last_k: int = 0,
    poll_interval_seconds: float = 10.0,
    model_display_name: str = "",
    parent_model: str = "",
    deploy: bool = False,
    endpoint: str = "",
):
    """Trains, picks the best checkpoint, and exports it when it passes the threshold.

    Args:
        project: Google Cloud project that runs the jobs.
        output_root: Cloud Storage prefix (gs://bucket/path) for models and checkpoints.
        location: Vertex AI region.
        display_name: Name of the training job in the console; empty: vtp-<task>.
        task: The trainer's task module (--task), e.g. my_task in your folder or image.
        worker_pool_specs: Worker pools in gcloud's --worker-pool-spec syntax.
        trainer_args: Trainer flags for every replica, e.g. ["--epochs=30"], after --task=<task>;
            a --task here must be the same task.
        restart_job_on_worker_restart: Restart all workers together (what DDP needs).
        scheduling_strategy: STANDARD, SPOT or FLEX_START; empty for Vertex's default.
        timeout: Maximum run time of the training job, e.g. "4h".
        metric: accuracy (higher is better), loss (lower is better) or a metric of the task's
            own (its GOALS say which way).
        threshold: The best checkpoint is exported only if its metric is at least this good.
        last_k: Evaluate only the newest K checkpoints; 0 evaluates all.
        poll_interval_seconds: First wait between two status checks of the job.
        model_display_name: Name of the registered model in the Model Registry; empty:
            vtp-<task> (the task the model was trained with).
        parent_model: A registered model to add this one to as a new version; empty
            registers a new model.
        deploy: Deploy the registered model to an endpoint and send it one example.
        endpoint: The endpoint (resource name or ID) to deploy to; empty creates one.
    """
    pipeline = dict(locals())  # the parameters by name, before any other local is made
    flags = with_task(task=task, args=trainer_args)
    job = custom_job(**inputs_for(custom_job, pipeline, args=flags.output))
    evaluate_and_register(job.outputs["checkpoints"], pipeline)
