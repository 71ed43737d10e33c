"""The `evaluate_checkpoints` component: score a run's checkpoints, output the best as a Model."""

# mypy: disable-error-code="valid-type"
# (kfp's own annotations, OutputPath(str) and NamedTuple("Outputs", [...]), are calls, not types)

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Artifact, ClassificationMetrics, Input, Metrics, Model, Output

from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def evaluate_checkpoints(
    checkpoints: Input[Artifact],
    metrics: Output[Metrics],
    classification_metrics: Output[ClassificationMetrics],
    best_checkpoint: Output[Model],
    last_k: int = 0,
    metric: str = "accuracy",
    threshold: float = 0.0,
) -> NamedTuple("Outputs", [("metric_value", float), ("step", int), ("passed", bool)]):
    """Evaluates every checkpoint of a run (or the newest few) and picks the best one.

    Args:
        checkpoints: Checkpoint directory of a training job (the custom_job's `checkpoints`).
        metrics: Accuracy (or the task's own metrics), loss and step of the best checkpoint,
            shown in the Vertex console.
        classification_metrics: Confusion matrix of the best checkpoint on the evaluation set
            (empty for a task with metrics of its own).
        best_checkpoint: The best checkpoint file; its metadata names its step and metric.
        last_k: Evaluate only the newest K checkpoints; 0 evaluates all of them.
        metric: What "best" means: accuracy (higher is better), loss (lower is better), or a
            metric of the task's own, better as the task's GOALS say.
        threshold: The value `metric` must reach (at least, or at most for loss) to pass.

    Returns:
        metric_value: The best checkpoint's value of `metric`.
        step: The training step of the best checkpoint.
        passed: Whether the best checkpoint reaches the threshold.
    """
    import logging
    from collections import namedtuple

    from vtp.launchers import evaluation

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    evaluations = evaluation.evaluate_directory(checkpoints.uri, last_k)
    top = evaluation.best(evaluations, metric)
    for key, value in evaluation.scores(top.result).items():
        metrics.log_metric(key, value)
    metrics.log_metric("step", top.step)
    metrics.log_metric("checkpoints_evaluated", len(evaluations))
    if "confusion_matrix" in top.result:
        classification_metrics.log_confusion_matrix(
            list(top.result["labels"]), top.result["confusion_matrix"]
        )
    # The metadata is what the console shows; the files let a person open them too.
    evaluation.write_json(metrics.path, dict(metrics.metadata))
    evaluation.write_json(classification_metrics.path, dict(classification_metrics.metadata))
    best_checkpoint.uri = top.uri
    best_checkpoint.metadata.update(
        {"step": top.step, "metric": metric, metric: top.result[metric]}
    )
    passed = evaluation.passes(top, metric, threshold)
    Outputs = namedtuple("Outputs", ["metric_value", "step", "passed"])
    return Outputs(float(top.result[metric]), top.step, passed)
