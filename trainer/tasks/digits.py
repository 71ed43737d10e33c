"""Built-in task: handwritten digits (8x8 images, 10 classes) from scikit-learn, no download.

1797 images, split 80/20 with a fixed seed (so every trial evaluates on the same images), pixel
values scaled to [0, 1]; the model is an MLP with two hidden layers of `hidden_size` units.
"""

from collections.abc import Sequence

import torch
from torch import nn
from torch.utils.data import TensorDataset

from trainer.config import Config

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


def build_datasets(config: Config) -> tuple[TensorDataset, TensorDataset]:
    """1437 training and 360 evaluation images."""
    # scikit-learn takes a second to import: only processes that load data pay for it.
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    images, targets = load_digits(return_X_y=True)
    train_x, eval_x, train_y, eval_y = train_test_split(
        images, targets, test_size=0.2, random_state=SPLIT_SEED, stratify=targets
    )

    def tensors(x, y) -> TensorDataset:
        return TensorDataset(torch.tensor(x / 16.0, dtype=torch.float32), torch.tensor(y))

    return tensors(train_x, train_y), tensors(eval_x, eval_y)
