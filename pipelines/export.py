"""The export pipeline: a run's checkpoints -> evaluation -> [good enough] export -> register."""

from kfp import dsl
from kfp.dsl import Artifact

from vtp.pipelines.stages import evaluate_and_register


@dsl.pipeline(name="vtp-export", description="Evaluate existing checkpoints, export the best.")
def export_pipeline(
    project: str,
    checkpoints_uri: str,
    location: str = "us-central1",
    metric: str = "accuracy",
    threshold: float = 0.0,
    last_k: int = 0,
    model_display_name: str = "",
    parent_model: str = "",
):
    """Evaluates the checkpoints of an earlier run and exports the best one.

    Args:
        project: Google Cloud project of the Model Registry.
        checkpoints_uri: Checkpoint directory of an earlier training job
            (gs://bucket/.../checkpoints, its AIP_CHECKPOINT_DIR).
        metric: accuracy (higher is better), loss (lower is better) or a metric of the task's
            own (its GOALS say which way).
        threshold: The best checkpoint is exported only if its metric is at least this good.
        location: Vertex AI region of the Model Registry.
        last_k: Evaluate only the newest K checkpoints; 0 evaluates all.
        model_display_name: Name of the registered model in the Model Registry; empty:
            vtp-<task> (the task the model was trained with).
        parent_model: A registered model to add this one to as a new version; empty
            registers a new model.
    """
    pipeline = dict(locals())  # the parameters by name, before any other local is made
    checkpoints = dsl.importer(
        artifact_uri=checkpoints_uri, artifact_class=Artifact, reimport=False
    )
    evaluate_and_register(checkpoints.output, pipeline)
