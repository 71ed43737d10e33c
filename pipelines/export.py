"""The export pipeline: a run's checkpoints -> evaluation -> [good enough] export -> register."""

from kfp import dsl
from kfp.dsl import Artifact

from components.evaluate_checkpoints import evaluate_checkpoints
from components.export_model import export_model
from components.upload_model import upload_model


@dsl.pipeline(name="vtp-export", description="Evaluate existing checkpoints, export the best.")
def export_pipeline(
    project: str,
    checkpoints_uri: str,
    location: str = "us-central1",
    metric: str = "accuracy",
    threshold: float = 0.0,
    last_k: int = 0,
    model_display_name: str = "vtp-digits",
    parent_model: str = "",
):
    """Evaluates the checkpoints of an earlier run and exports the best one.

    Args:
        project: Google Cloud project of the Model Registry.
        checkpoints_uri: Checkpoint directory of an earlier training job
            (gs://bucket/.../checkpoints, its AIP_CHECKPOINT_DIR).
        metric: accuracy (higher is better) or loss (lower is better).
        threshold: The best checkpoint is exported only if its metric is at least this good.
        location: Vertex AI region of the Model Registry.
        last_k: Evaluate only the newest K checkpoints; 0 evaluates all.
        model_display_name: Name of the registered model in the Model Registry.
        parent_model: A registered model to add this one to as a new version; empty
            registers a new model.
    """
    checkpoints = dsl.importer(
        artifact_uri=checkpoints_uri, artifact_class=Artifact, reimport=False
    )
    evaluation = evaluate_checkpoints(
        checkpoints=checkpoints.output, metric=metric, threshold=threshold, last_k=last_k
    )
    with dsl.If(evaluation.outputs["passed"] == True, name="metric-passes"):  # noqa: E712
        exported = export_model(checkpoint=evaluation.outputs["best_checkpoint"])
        upload_model(
            project=project,
            location=location,
            display_name=model_display_name,
            model=exported.outputs["model"],
            parent_model=parent_model,
        )
