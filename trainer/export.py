"""The model directory: what a finished run leaves in `AIP_MODEL_DIR`, and what export adds.

    model.pt       the model's state_dict, CPU tensors only (torch.save; load with
                   weights_only=True on any machine, with or without a GPU)
    config.json    the Config that built it (`Config.from_dict`; also valid `--flag=value`s)
    metrics.json   its evaluation: accuracy, loss, examples, confusion_matrix, labels, step
    model.pt2      export only: the model as a `torch.export` ExportedProgram (torch.export.save)
    export.json    export only: format, torch version, step, metrics, input/output shapes, labels

Training writes the first three (`write_model_dir`). `export_checkpoint` turns a checkpoint (the
best one a pipeline picked) into the full directory; `load_model` rebuilds the eager model
through its task and loads model.pt with `weights_only=True`: what serving uses.

Trust: `torch.export.load` unpickles parts of a .pt2 archive, so loading model.pt2 can run code
that whoever wrote the file put there. Nothing in this project loads a model.pt2 it did not just
write itself (export's self-check loads the bytes it serialized a moment before); serving and
prediction load the weights. `load_program` is for a user's own, trusted files.

Why `torch.export` (`model.pt2`) is the portable artifact:

- It is PyTorch's supported way to capture a whole model ahead of time: a sound graph of ATen
  operators plus weights, loaded with `torch.export.load(path).module()` without the model's
  Python class or the task module that built it. A state_dict alone needs that code.
- The batch dimension is exported as dynamic (`Dim("batch")`), so any batch size is served.
- It is what the rest of the stack consumes: AOTInductor packaging, ExecuTorch, TensorRT and
  the dynamo ONNX exporter all start from an ExportedProgram.
- TorchScript (`torch.jit`) is deprecated, and pickling the module (`torch.save(model)`) needs
  the code, cannot be loaded with `weights_only=True`, and runs arbitrary code on load.

Caveats, recorded in `export.json`: the .pt2 serialization schema is versioned, so a reader
needs a torch release that reads this schema (in practice the same or a newer torch), and the
program is frozen in eval mode (dropout off; `.train()` does not turn it back on).
Export checks itself: the bytes it serialized are loaded back (never a file found on disk) and
must reproduce the eager model's outputs on the example batch before anything is written.
"""

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.export import Dim, ExportedProgram
from torch.utils.data import Dataset

from vtp import storage
from vtp.trainer import checkpoint
from vtp.trainer.config import Config
from vtp.trainer.tasks import dataset_size, load

MODEL_FILE = "model.pt"
CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.json"
PROGRAM_FILE = "model.pt2"
METADATA_FILE = "export.json"
FORMAT = "torch.export"
"""`export.json`'s `format`: the program is a torch.export ExportedProgram."""


class ExportMismatch(RuntimeError):
    """The exported program, loaded back, does not reproduce the eager model's outputs."""


def write_model_dir(
    model_dir: str | os.PathLike[str],
    model_state: dict[str, Any],
    config: Config,
    metrics: dict[str, Any],
) -> Path:
    """Write model.pt, config.json and metrics.json (each atomically); return the directory.

    model.pt is device-free (`device_free`), whatever device trained the model."""
    directory = storage.local_path(model_dir)
    buffer = io.BytesIO()
    torch.save(device_free(model_state), buffer)
    checkpoint.atomic_write(directory / MODEL_FILE, buffer.getbuffer())
    checkpoint.atomic_write(directory / CONFIG_FILE, _json(config.to_dict()))
    checkpoint.atomic_write(directory / METRICS_FILE, _json(metrics))
    return directory


def device_free(state: Any) -> Any:
    """`state` with every tensor a plain CPU `torch.Tensor`, detached.

    What the trainer writes for others is read with `torch.load(path, weights_only=True)` on
    any machine: a tensor saved from a GPU would be restored onto that GPU (and fail where there
    is none), and a tensor subclass (a DTensor, a parameter) is refused by `weights_only`."""
    if isinstance(state, torch.Tensor):
        return state.detach().to("cpu").as_subclass(torch.Tensor)
    if isinstance(state, dict):
        copy = type(state)((key, device_free(value)) for key, value in state.items())
        if hasattr(state, "_metadata"):  # a state_dict's module versions, for load_state_dict
            copy._metadata = state._metadata  # type: ignore[attr-defined]
        return copy
    if isinstance(state, list | tuple):
        return type(state)(device_free(value) for value in state)
    return state


def export_checkpoint(
    checkpoint_file: str | os.PathLike[str],
    model_dir: str | os.PathLike[str],
    metrics: dict[str, Any] | None = None,
) -> Path:
    """Export a (verified) checkpoint as a full model directory; `metrics` default to {"step"}.

    The program is traced on the first examples of the task's evaluation set; export.json is
    written last, so a directory that has it is complete.
    """
    state = checkpoint.read_state(checkpoint_file)
    task, config = load(Config.from_dict(state.config))
    model = task.build_model(config)
    model.load_state_dict(state.model)
    _, eval_set = task.build_datasets(config)
    example = example_batch(eval_set)
    program = export_program(model, example)
    data = serialize_program(program)
    check_program(data, model, example)
    metrics = metrics or {"step": state.step}
    directory = write_model_dir(model_dir, state.model, config, metrics)
    checkpoint.atomic_write(directory / PROGRAM_FILE, data)
    metadata = export_metadata(program, model, example, config, list(task.labels(config)))
    metadata.update(step=state.step, metrics=metrics)
    checkpoint.atomic_write(directory / METADATA_FILE, _json(metadata))
    return directory


def example_batch(dataset: Dataset, size: int = 2) -> torch.Tensor:
    """The first `size` inputs of `dataset` stacked into a batch (repeated if it is smaller).

    A batch of at least two keeps the batch dimension symbolic: torch.export specializes
    dimensions of size 0 and 1.
    """
    count = dataset_size(dataset)
    if count == 0:
        raise ValueError("the task's evaluation set is empty: export needs an example input")
    return torch.stack([dataset[i % count][0] for i in range(size)])


def export_program(model: nn.Module, example: torch.Tensor) -> ExportedProgram:
    """`model` in eval mode as an ExportedProgram whose first (batch) dimension is dynamic."""
    model.eval()
    with torch.no_grad():
        return torch.export.export(model, (example,), dynamic_shapes=({0: Dim("batch")},))


def serialize_program(program: ExportedProgram) -> bytes:
    """The bytes `torch.export.save` writes for `program` (what model.pt2 holds)."""
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    return buffer.getvalue()


def check_program(data: bytes, model: nn.Module, example: torch.Tensor) -> None:
    """Load serialized program `data` back; raise ExportMismatch unless it reproduces `model`."""
    loaded = torch.export.load(io.BytesIO(data)).module()
    model.eval()
    with torch.no_grad():
        for batch in (example, example[:1]):  # a second batch size proves the dynamic batch
            expected, got = model(batch), loaded(batch)
            # Exported graphs may fuse or reorder float ops: allow rounding, nothing more.
            if not torch.allclose(expected, got, rtol=1e-5, atol=1e-6):
                difference = (expected - got).abs().max().item()
                raise ExportMismatch(
                    f"the exported program differs from the model by up to {difference:.3g} "
                    f"on a batch of shape {list(batch.shape)}"
                )


def export_metadata(
    program: ExportedProgram,
    model: nn.Module,
    example: torch.Tensor,
    config: Config,
    labels: list[str],
) -> dict[str, Any]:
    """What a serving stack needs to know about the program besides the program itself."""
    with torch.no_grad():
        output = model.eval()(example)
    (input_name,) = program.graph_signature.user_inputs
    return {
        "format": FORMAT,
        "program": PROGRAM_FILE,
        "state_dict": MODEL_FILE,
        "torch_version": torch.__version__,
        "task": config.task,
        "inputs": [_tensor_spec(input_name, example)],
        "outputs": [_tensor_spec("logits", output)],
        "labels": labels,
    }


def load_program(model_dir: str | os.PathLike[str]) -> nn.Module:
    """The exported program in a model directory, callable on a batch; needs only torch.

    Unpickles: call it only on a directory you trust (serving uses `load_model`)."""
    return torch.export.load(storage.local_path(model_dir) / PROGRAM_FILE).module()


def read_metadata(model_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """export.json of an exported model directory."""
    return json.loads((storage.local_path(model_dir) / METADATA_FILE).read_text())


def load_model(
    model_dir: str | os.PathLike[str], allowed: Callable[[str], object] | None = None
) -> tuple[nn.Module, Config]:
    """The model in a model directory, rebuilt by its task, and its config. `allowed`, when
    given, sees the task config.json names before it is imported (and raises to refuse it):
    the check and the import read the same file once, so a file swapped in between gains
    nothing."""
    directory = storage.local_path(model_dir)
    config = Config.from_dict(json.loads((directory / CONFIG_FILE).read_text()))
    if allowed is not None:
        allowed(config.task)
    task, config = load(config)  # imported only now, once `allowed` has seen its name
    model = task.build_model(config)
    state = torch.load(directory / MODEL_FILE, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    return model, config


def _tensor_spec(name: str, tensor: torch.Tensor) -> dict[str, Any]:
    # The batch dimension is dynamic: `null`, as in an ONNX or TF signature.
    shape = [None, *tensor.shape[1:]]
    return {"name": name, "shape": shape, "dtype": str(tensor.dtype).removeprefix("torch.")}


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=1) + "\n").encode()
