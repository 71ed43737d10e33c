"""Built-in task: handwritten digits (8x8 images, 10 classes) from scikit-learn, no download.

1797 images, split 80/20 with a fixed seed (so every trial evaluates on the same images), pixel
values scaled to [0, 1]; the model is an MLP with two hidden layers of `hidden_size` units.

Loading does not import scikit-learn, which takes over a second, in every replica and every
evaluation: the images are read from the file scikit-learn ships (`datasets/data/digits.csv.gz`)
the way `load_digits` reads it, and the split is `digits_split.json`, the indices that
`train_test_split(test_size=0.2, random_state=SPLIT_SEED, stratify=targets)` returns, in its
order (a test recomputes them with scikit-learn).

The file is parsed once per process (`_parsed`): evaluating several checkpoints in one process
(the `evaluate_checkpoints` task) builds the data sets once per checkpoint, and the parse is
most of that. Callers get their own copies, so nothing they do changes what the next one gets.
"""

import functools
import importlib.util
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.utils.data import TensorDataset

from vtp.trainer.config import Config

SPLIT_SEED = 0
"""The train/eval split is fixed, independent of `--seed`."""


def labels(config: Config) -> Sequence[str]:
    """The digits 0 to 9."""
    return [str(digit) for digit in range(10)]


def build_model(config: Config) -> nn.Module:
    """An MLP: 64 pixels -> hidden -> hidden -> 10 logits."""
    return nn.Sequential(
        nn.Linear(64, config.hidden_size),
        nn.ReLU(),
        nn.Dropout(config.dropout),
        nn.Linear(config.hidden_size, config.hidden_size),
        nn.ReLU(),
        nn.Dropout(config.dropout),
        nn.Linear(config.hidden_size, 10),
    )


SPLIT_FILE = Path(__file__).with_name("digits_split.json")


def build_datasets(config: Config) -> tuple[TensorDataset, TensorDataset]:
    """1437 training and 360 evaluation images."""
    images, targets = _parsed()  # read-only: indexing with a list below makes new arrays
    split = _split()

    def tensors(indices: list[int]) -> TensorDataset:
        x, y = images[indices], targets[indices]
        return TensorDataset(torch.tensor(x / 16.0, dtype=torch.float32), torch.tensor(y))

    return tensors(split["train"]), tensors(split["eval"])


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 1797 images (flattened, 0 to 16) and their labels: `load_digits(return_X_y=True)`.
    The caller's own (writable) copies of the arrays parsed once per process."""
    images, targets = _parsed()
    return images.copy(), targets.copy()


@functools.cache
def _split() -> dict[str, list[int]]:
    """`digits_split.json`: the "train" and "eval" indices (callers do not change them)."""
    return json.loads(SPLIT_FILE.read_text())


@functools.cache
def _parsed() -> tuple[np.ndarray, np.ndarray]:
    """The images and labels parsed from scikit-learn's file, once; read-only, so a caller that
    would change them in place fails instead of changing every later caller's data."""
    spec = importlib.util.find_spec("sklearn")  # finds the package without importing it
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("the digits task reads its data from scikit-learn's package")
    data = np.loadtxt(
        Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz", delimiter=","
    )
    images, targets = data[:, :-1], data[:, -1].astype(int)
    images.flags.writeable = targets.flags.writeable = False
    return images, targets
