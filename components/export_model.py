"""The `export_model` component: turn the best checkpoint into a portable model directory.

The directory's heart is `model.pt2`, a `torch.export` program that loads with torch alone (see
`vtp.trainer.export` for the format and why); `upload_model` registers the directory.
"""

from kfp import dsl
from kfp.dsl import Input, Model, Output

from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def export_model(checkpoint: Input[Model], model: Output[Model]):
    """Exports a checkpoint as a torch.export program plus its weights, config and metrics.

    Args:
        checkpoint: A checkpoint file, e.g. evaluate_checkpoints' `best_checkpoint`; its metadata
            (step, metric and value) is carried over.
        model: The model directory: model.pt2 (load with torch.export.load(path).module(); the
            batch dimension is dynamic), model.pt (state_dict), config.json, metrics.json and
            export.json (torch version, input and output shapes, labels, step, metrics).
    """
    from vtp.trainer.export import export_checkpoint, read_metadata

    metrics = {key: value for key, value in checkpoint.metadata.items()}
    directory = export_checkpoint(checkpoint.uri, model.path, metrics or None)
    exported = read_metadata(directory)
    model.metadata.update(metrics)
    model.metadata.update(
        framework="pytorch",
        format=exported["format"],
        program=exported["program"],
        torch_version=exported["torch_version"],
        step=exported["step"],
    )
