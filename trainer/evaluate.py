"""Evaluation: accuracy, loss and confusion matrix of a model on the task's evaluation set.

`evaluate` runs inside training (each process takes a shard; the sums are all-reduced).
`evaluate_checkpoint(path)` is the API for pipelines: it rebuilds the model from the config saved
in the checkpoint (or a given one) and evaluates it in this process. From a shell:

    python -m trainer.evaluate gs://bucket/run/checkpoints/step_00000100.pt   # or a directory
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

from trainer import checkpoint
from trainer.config import Config
from trainer.distributed import Runtime
from trainer.tasks import dataset_size, load_task
from vtp import storage


@torch.no_grad()
def evaluate(
    model: nn.Module,
    dataset: Dataset,
    labels: Sequence[str],
    batch_size: int,
    runtime: Runtime,
    precision: str = "fp32",
) -> dict[str, Any]:
    """Evaluate on every process's shard and combine: accuracy, loss, confusion matrix, labels."""
    classes = len(labels)
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


def evaluate_checkpoint(
    path: str | os.PathLike[str], config: Config | None = None
) -> dict[str, Any]:
    """Evaluate a checkpoint file (or a directory's newest valid one) on its task's eval set.

    Returns {"accuracy", "loss", "examples", "confusion_matrix" (rows: true, columns: predicted),
    "labels", "step", "checkpoint"}. `config` defaults to the one saved in the checkpoint.
    """
    local = storage.local_path(path)
    if local.is_dir():
        found = checkpoint.latest_state(local)
        if found is None:
            raise FileNotFoundError(f"no valid checkpoint in {path}")
        local, state = found[0].path, found[1]
    else:
        state = checkpoint.read_state(local)
    config = config or Config.from_dict(state.config)
    task = load_task(config.task)
    model = task.build_model(config)
    model.load_state_dict(state.model)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    runtime = Runtime(rank=0, world_size=1, local_rank=0, device=device)
    _, eval_set = task.build_datasets(config)
    result = evaluate(
        model.to(device),
        eval_set,
        task.labels(config),
        config.batch_size,
        runtime,
        config.precision,
    )
    return {**result, "step": state.step, "checkpoint": str(local)}


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m trainer.evaluate CHECKPOINT`: print the evaluation as JSON."""
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m trainer.evaluate CHECKPOINT_FILE_OR_DIR", file=sys.stderr)
        return 2
    print(json.dumps(evaluate_checkpoint(args[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
