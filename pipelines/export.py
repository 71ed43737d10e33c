"""The export pipeline: an existing run's checkpoints -> evaluation -> export if good enough."""

from kfp import dsl
from kfp.dsl import Artifact

from components.evaluate_checkpoints import evaluate_checkpoints
from components.export_model import export_model


@dsl.pipeline(name="vtp-export", description="Evaluate existing checkpoints, export the best.")
def export_pipeline(
    checkpoints_uri: str,
    metric: str = "accuracy",
    threshold: float = 0.0,
    last_k: int = 0,
):
    """Evaluates the checkpoints of an earlier run and exports the best one.

    Args:
        checkpoints_uri: Checkpoint directory of an earlier training job
            (gs://bucket/.../checkpoints, its AIP_CHECKPOINT_DIR).
        metric: accuracy (higher is better) or loss (lower is better).
        threshold: The best checkpoint is exported only if its metric is at least this good.
        last_k: Evaluate only the newest K checkpoints; 0 evaluates all.
    """
    checkpoints = dsl.importer(
        artifact_uri=checkpoints_uri, artifact_class=Artifact, reimport=False
    )
    evaluation = evaluate_checkpoints(
        checkpoints=checkpoints.output, metric=metric, threshold=threshold, last_k=last_k
    )
    with dsl.If(evaluation.outputs["passed"] == True, name="metric-passes"):  # noqa: E712
        export_model(checkpoint=evaluation.outputs["best_checkpoint"])
