"""A user's own task, as autopackaging tests ship it: two Gaussian blobs told apart by an MLP.

It follows the trainer's task contract (`vtp.trainer.tasks`) and reads a data file that sits next
to it (`data/centers.json`), as code packaged with its data does. Tests copy it into a
temporary source tree as `blobs/task.py`; it is never imported from here.
"""

import json
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import TensorDataset


def labels(config) -> Sequence[str]:
    """The two blobs."""
    return ["left", "right"]


def build_model(config) -> nn.Module:
    """4 features -> hidden -> 2 logits."""
    return nn.Sequential(
        nn.Linear(4, config.hidden_size), nn.ReLU(), nn.Linear(config.hidden_size, 2)
    )


def build_datasets(config) -> tuple[TensorDataset, TensorDataset]:
    """256 training and 64 evaluation points around the two centres in data/centers.json."""
    centers = torch.tensor(
        json.loads((Path(__file__).parent / "data" / "centers.json").read_text())
    )
    generator = torch.Generator().manual_seed(0)

    def points(count: int) -> TensorDataset:
        targets = torch.randint(0, 2, (count,), generator=generator)
        inputs = centers[targets] + 0.5 * torch.randn(count, 4, generator=generator)
        return TensorDataset(inputs, targets)

    return points(256), points(64)
