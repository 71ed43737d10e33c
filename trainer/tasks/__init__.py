"""The task contract: how a user's own model and data plug into the trainer.

A task is a module named by `--task` (default `trainer.tasks.digits`) with three functions:

    def labels(config: Config) -> Sequence[str]
        Class names; the model predicts `len(labels)` classes and targets index into them.

    def build_model(config: Config) -> torch.nn.Module
        A fresh model that maps a batch of inputs to logits of shape [batch, len(labels)].
        The trainer seeds torch before calling it, so initialisation is reproducible; it may read
        `config.hidden_size`, `config.dropout`, or any other field.

    def build_datasets(config: Config) -> tuple[Dataset, Dataset]
        The training and evaluation sets: map-style datasets of `(input, target)` pairs, where
        `target` is a class index. The trainer shards them across processes (DistributedSampler,
        reshuffled every epoch) and batches them; the loss is cross-entropy.

That is all: no base class to inherit. For resumed runs to be bit-identical to uninterrupted
ones, any randomness inside `__getitem__` (augmentation) should derive from the index.
Import the task from a package installed next to the trainer, or from the working directory.

Serving is stricter (`python -m trainer.serve`): a model's config.json names its task, and the
model directory may come from anyone, so serving imports only the tasks this package ships
(`builtin_tasks`) and the modules the operator lists in VTP_SERVING_MODULES (`serving_tasks`).
"""

import importlib
import pkgutil
from collections.abc import Mapping, Sequence, Sized
from types import ModuleType
from typing import Protocol

import torch
from torch.utils.data import Dataset

from trainer.config import Config

REQUIRED = ("labels", "build_model", "build_datasets")
SERVING_MODULES_ENV = "VTP_SERVING_MODULES"
"""Comma-separated task modules that serving may import besides the built-in tasks."""


class Task(Protocol):
    """What a task module provides (modules satisfy Protocols structurally)."""

    def labels(self, config: Config) -> Sequence[str]: ...

    def build_model(self, config: Config) -> torch.nn.Module: ...

    def build_datasets(self, config: Config) -> tuple[Dataset, Dataset]: ...


def load_task(name: str) -> Task:
    """Import the task module `name`; errors name `--task` and what is missing."""
    try:
        module: ModuleType = importlib.import_module(name)
    except ImportError as exc:
        raise ValueError(f"--task={name}: cannot import it: {exc}") from exc
    missing = [attr for attr in REQUIRED if not callable(getattr(module, attr, None))]
    if missing:
        raise ValueError(
            f"--task={name}: the module lacks {', '.join(missing)} (see trainer.tasks)"
        )
    # The check above is what makes the module a Task: a ModuleType's attributes are Any.
    return module


def builtin_tasks() -> frozenset[str]:
    """The tasks this package ships (`trainer.tasks.<module>`), found without importing any."""
    return frozenset(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__) if not m.ispkg)


def serving_tasks(environ: Mapping[str, str]) -> frozenset[str]:
    """The task modules a serving process may import: the built-in tasks and the names the
    operator lists in `environ`'s VTP_SERVING_MODULES."""
    listed = environ.get(SERVING_MODULES_ENV, "").split(",")
    return builtin_tasks() | {name.strip() for name in listed if name.strip()}


def servable_task(name: object, allowed: frozenset[str]) -> str:
    """`name` if serving may import it; ValueError saying why not (nothing is imported)."""
    if isinstance(name, str) and name in allowed:
        return name
    raise ValueError(
        f"config.json names task {name!r}, which serving does not import: it imports the "
        f"built-in tasks ({', '.join(sorted(builtin_tasks()))}) and the modules listed in "
        f"{SERVING_MODULES_ENV} only"
    )


def dataset_size(dataset: Dataset) -> int:
    """The number of examples in a task's map-style dataset.

    torch's `Dataset` declares no `__len__` (iterable datasets have none), but the contract asks
    for map-style datasets, which have one; a dataset without it is refused here, by name.
    """
    if not isinstance(dataset, Sized):
        raise TypeError(f"{type(dataset).__name__} has no __len__: tasks return map-style datasets")
    return len(dataset)
