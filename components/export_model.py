"""The `export_model` component: turn a checkpoint into a model directory others can load."""

from kfp import dsl
from kfp.dsl import Input, Model, Output

from components.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def export_model(checkpoint: Input[Model], model: Output[Model]):
    """Exports a checkpoint as a model directory: weights, the config that built them, metrics.

    Args:
        checkpoint: A checkpoint file, e.g. evaluate_checkpoints' `best_checkpoint`.
        model: The exported model directory (model.pt, config.json, metrics.json), which
            `trainer.export.load_model` loads back.
    """
    from trainer.export import export_checkpoint

    metrics = {key: value for key, value in checkpoint.metadata.items()}
    export_checkpoint(checkpoint.uri, model.path, metrics or None)
    model.metadata.update(metrics)
    model.metadata["framework"] = "pytorch"
