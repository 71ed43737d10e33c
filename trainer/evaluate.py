"""Evaluation: accuracy, loss and confusion matrix of a model on the task's evaluation set, or
the task's own metrics and loss (vtp.trainer.tasks).

`evaluate` runs inside training (each process takes a shard; the sums are all-reduced).
`evaluate_checkpoint(path)` is the API for pipelines: it rebuilds the model from the config saved
in the checkpoint (or a given one) and evaluates it in this process. From a shell:

    python -m vtp.trainer.evaluate gs://bucket/run/checkpoints/step_00000100.pt   # or a directory
prints the result as one JSON object.
"""

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset, Subset

from vtp import storage
from vtp.trainer import checkpoint
from vtp.trainer.config import Config
from vtp.trainer.distributed import Runtime
from vtp.trainer.tasks import Metrics, dataset_size, goals, load, loss_function, metrics_function


@torch.no_grad()
def evaluate(
    model: nn.Module,
    dataset: Dataset,
    labels: Sequence[str],
    batch_size: int,
    runtime: Runtime,
    precision: str = "fp32",
    task: object = None,
) -> dict[str, Any]:
    """Evaluate on every process's shard and combine. A task with its own `metrics` gets them
    and loss (and `goals`); others accuracy, loss, confusion matrix and labels."""
    own_metrics = metrics_function(task)
    if own_metrics is not None:
        return _own_metrics(model, dataset, batch_size, runtime, precision, task, own_metrics)
    classes = len(labels)
    own_loss = getattr(task, "loss", None)
    shard = Subset(dataset, range(runtime.rank, dataset_size(dataset), runtime.world_size))
    # A generator of its own: creating a DataLoader iterator draws a seed from it, and drawing
    # from the global generator would shift the random stream that training (dropout) uses.
    loader = DataLoader(shard, batch_size=batch_size, generator=torch.Generator())
    totals = torch.zeros(1 + classes * classes, dtype=torch.float64, device=runtime.device)
    was_training = model.training
    model.eval()
    for inputs, targets in loader:
        inputs, targets = inputs.to(runtime.device), targets.to(runtime.device)
        with runtime.autocast(precision):
            logits = model(inputs)
        if callable(own_loss):
            totals[0] += own_loss(logits.float(), targets) * len(targets)
        else:
            totals[0] += F.cross_entropy(logits.float(), targets, reduction="sum")
        pairs = targets * classes + logits.argmax(dim=1)
        totals[1:] += torch.bincount(pairs, minlength=classes * classes)
    model.train(was_training)
    runtime.all_reduce_sum(totals)
    confusion = totals[1:].view(classes, classes).round().long()
    count = max(int(confusion.sum()), 1)
    return {
        "accuracy": int(confusion.trace()) / count,
        "loss": float(totals[0]) / count,
        "examples": int(confusion.sum()),
        "confusion_matrix": confusion.tolist(),
        "labels": list(labels),
    }


def _own_metrics(
    model: nn.Module,
    dataset: Dataset,
    batch_size: int,
    runtime: Runtime,
    precision: str,
    task: object,
    metrics: Metrics,
) -> dict[str, Any]:
    """The task's metrics on the whole evaluation set: every process's outputs and targets put
    in dataset order on every process (a sum of zero-padded copies), then `metrics` on them."""
    size = dataset_size(dataset)
    shard = Subset(dataset, range(runtime.rank, size, runtime.world_size))
    loader = DataLoader(shard, batch_size=batch_size, generator=torch.Generator())
    loss_of = loss_function(task)
    loss_sum = torch.zeros((), dtype=torch.float64, device=runtime.device)
    outputs, targets = [], []
    was_training = model.training
    model.eval()
    for batch_inputs, batch_targets in loader:
        batch_targets = batch_targets.to(runtime.device)
        with runtime.autocast(precision):
            batch_outputs = model(batch_inputs.to(runtime.device)).float()
        loss_sum += loss_of(batch_outputs, batch_targets) * len(batch_targets)
        outputs.append(batch_outputs)
        targets.append(batch_targets)
    model.train(was_training)
    runtime.all_reduce_sum(loss_sum)
    every_output = _in_dataset_order(torch.cat(outputs), size, runtime)
    every_target = _in_dataset_order(torch.cat(targets), size, runtime)
    values = {name: float(value) for name, value in metrics(every_output, every_target).items()}
    return {
        **values,
        "loss": float(loss_sum) / max(size, 1),
        "examples": size,
        "goals": goals(task),
    }


def _in_dataset_order(local: torch.Tensor, size: int, runtime: Runtime) -> torch.Tensor:
    """This process's rows (dataset indices rank, rank + world, ...) among everyone's."""
    every = torch.zeros((size, *local.shape[1:]), dtype=local.dtype, device=local.device)
    every[runtime.rank :: runtime.world_size] = local
    return runtime.all_reduce_sum(every)


def evaluate_checkpoint(
    path: str | os.PathLike[str],
    config: Config | None = None,
    device: str | torch.device | None = None,
) -> dict[str, Any]:
    """Evaluate a checkpoint file (or a directory's newest valid one) on its task's eval set.

    Returns {"accuracy", "loss", "examples", "confusion_matrix" (rows: true, columns: predicted),
    "labels", "step", "checkpoint"}, or for a task with its own metrics {<its metrics>, "loss",
    "examples", "goals", "step", "checkpoint"}: plain numbers and lists, whatever device ran
    it. `config` defaults to the one saved in the checkpoint; `device` to the first GPU when
    there is one (with the config's --precision), else the CPU.
    """
    local = storage.local_path(path)
    if local.is_dir():
        found = checkpoint.latest_state(local)
        if found is None:
            raise FileNotFoundError(f"no valid checkpoint in {path}")
        local, state = found[0].path, found[1]
    else:
        state = checkpoint.read_state(local)
    task, config = load(config or Config.from_dict(state.config))
    model = task.build_model(config)
    model.load_state_dict(state.model)
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    runtime = Runtime(rank=0, world_size=1, local_rank=0, device=device)
    _, eval_set = task.build_datasets(config)
    result = evaluate(
        model.to(device),
        eval_set,
        task.labels(config),
        config.batch_size,
        runtime,
        config.precision,
        task,
    )
    return {**result, "step": state.step, "checkpoint": str(local)}


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m vtp.trainer.evaluate CHECKPOINT`: print the evaluation as JSON."""
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m vtp.trainer.evaluate CHECKPOINT_FILE_OR_DIR", file=sys.stderr)
        return 2
    print(json.dumps(evaluate_checkpoint(args[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
