"""Example regression task: scikit-learn's diabetes data (442 patients, 10 features), no download.

The task to copy for a model of your own that is not a classifier: it declares its own flag
(`--num_layers`, also a tuning parameterId), its own loss (mean squared error), its own
metrics (`rmse` and `r2`, with their goals) and what serving answers (`predictions`: the
predicted progression, a number), beside the three functions every task has.

    python -m vtp.trainer --task=vtp.trainer.tasks.diabetes --num_layers=3 --hypertune_metric=rmse

The target (disease progression a year on, 25 to 346) is standardised with the training set's
mean and deviation, so the model learns at the trainer's default learning rate; `rmse` is in the
target's own units. The split is 80/20 by a fixed permutation, as in the digits task. The files
are read from scikit-learn's package without importing it (see vtp.trainer.tasks.digits).
"""

import importlib.util
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.data import TensorDataset

from vtp.trainer.config import Config

SPLIT_SEED = 0
EVAL_FRACTION = 0.2


@dataclass(frozen=True)
class Flags:
    """The task's own flags: `--num_layers=3`."""

    num_layers: int = 2
    """Hidden layers of the MLP, each `--hidden_size` wide."""

    def __post_init__(self) -> None:
        if self.num_layers < 1:
            raise ValueError("--num_layers must be >= 1")


GOALS = {"rmse": "MINIMIZE", "r2": "MAXIMIZE"}
"""The metrics `metrics` returns, each with its goal; the first is the default tuning metric."""


def labels(config: Config) -> Sequence[str]:
    """The model's one output."""
    return ["progression"]


def build_model(config: Config) -> nn.Module:
    """An MLP: 10 features -> `num_layers` x `hidden_size` -> 1 standardised target."""
    flags: Flags = config.task_flags
    layers: list[nn.Module] = []
    width = 10
    for _ in range(flags.num_layers):
        layers += [nn.Linear(width, config.hidden_size), nn.ReLU(), nn.Dropout(config.dropout)]
        width = config.hidden_size
    return nn.Sequential(*layers, nn.Linear(width, 1))


def build_datasets(config: Config) -> tuple[TensorDataset, TensorDataset]:
    """353 training and 89 evaluation patients: standardised features, standardised target."""
    features, target = load_diabetes()
    train, held_out = split()
    center, spread = features[train].mean(axis=0), features[train].std(axis=0)
    mean, deviation = target_scale()

    def tensors(rows: np.ndarray) -> TensorDataset:
        x = (features[rows] - center) / spread
        y = (target[rows] - mean) / deviation
        return TensorDataset(
            torch.tensor(x, dtype=torch.float32), torch.tensor(y, dtype=torch.float32)[:, None]
        )

    return tensors(train), tensors(held_out)


def loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean squared error of the standardised target."""
    return nn.functional.mse_loss(outputs, targets)


def metrics(outputs: torch.Tensor, targets: torch.Tensor) -> Mapping[str, float]:
    """Root mean squared error in the target's units, and the coefficient of determination."""
    squared = float(((outputs - targets) ** 2).sum())
    spread = float(((targets - targets.mean()) ** 2).sum())
    return {
        "rmse": math.sqrt(squared / len(targets)) * target_scale()[1],
        "r2": 1.0 - squared / spread if spread else 0.0,
    }


def predictions(outputs: torch.Tensor) -> list[float]:
    """What serving answers: each patient's predicted progression, in the target's own units."""
    mean, deviation = target_scale()
    return (outputs[:, 0] * deviation + mean).tolist()


@cache
def target_scale() -> tuple[float, float]:
    """Mean and standard deviation of the training set's target."""
    train = load_diabetes()[1][split()[0]]
    return float(train.mean()), float(train.std())


@cache
def split() -> tuple[np.ndarray, np.ndarray]:
    """The training and evaluation rows: a fixed permutation cut 80/20."""
    order = np.random.default_rng(SPLIT_SEED).permutation(len(load_diabetes()[1]))
    cut = len(order) - round(len(order) * EVAL_FRACTION)
    return order[:cut], order[cut:]


@cache
def load_diabetes() -> tuple[np.ndarray, np.ndarray]:
    """The raw features and target: `load_diabetes(return_X_y=True, scaled=False)`."""
    spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("the diabetes task reads its data from scikit-learn's package")
    data = Path(spec.origin).parent / "datasets" / "data"
    features = np.loadtxt(data / "diabetes_data_raw.csv.gz")
    return features, np.loadtxt(data / "diabetes_target.csv.gz")
