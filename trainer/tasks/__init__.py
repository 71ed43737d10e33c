"""The task contract: how a user's own model and data plug into the trainer.

A task is a module named by `--task` (default `vtp.trainer.tasks.digits`) with three functions:

    def labels(config: Config) -> Sequence[str]
        Class names; the model predicts `len(labels)` classes and targets index into them.
        (A task with its own `metrics`, a regression, names its model's outputs instead.)

    def build_model(config: Config) -> torch.nn.Module
        A fresh model that maps a batch of inputs to logits of shape [batch, len(labels)].
        The trainer seeds torch before calling it, so initialisation is reproducible; it may read
        `config.hidden_size`, `config.dropout`, or any other field.

    def build_datasets(config: Config) -> tuple[Dataset, Dataset]
        The training and evaluation sets: map-style datasets of `(input, target)` pairs, where
        `target` is a class index. The trainer shards them across processes (DistributedSampler,
        reshuffled every epoch) and batches them; the loss is cross-entropy.

A task may also bring its own flags, loss, metrics and predictions (each optional; docs/tasks.md):

    @dataclass(frozen=True)
    class Flags:
        num_filters: int = 32
        # a string under a field is its --help text
        Fields become trainer flags (`--num_filters=16`), tuning parameterIds and pipeline
        parameters by the same name; typed as the trainer's own (int, float, str, bool,
        Literal), checked in `__post_init__`. The task reads them as `config.task_flags`.

    def loss(outputs: Tensor, targets: Tensor) -> Tensor
        The batch's mean loss, for training and evaluation; default cross-entropy.

    def metrics(outputs: Tensor, targets: Tensor) -> Mapping[str, float]
        Metrics of the whole evaluation set (every process's outputs, in dataset order);
        default accuracy and a confusion matrix. Declared with their goals in
        `GOALS = {"rmse": "MINIMIZE"}`; `loss` is always reported, MINIMIZE. Any of them can be
        the tuning metric (`--hypertune_metric`, default the first in GOALS).

    def predictions(outputs: Tensor) -> list[Any]
        What serving answers for a batch of the model's outputs, one JSON value per instance;
        default a classifier's `{"label", "index", "probabilities"}` (vtp.trainer.predict). A
        regression answers its number.

That is all: no base class to inherit. For resumed runs to be bit-identical to uninterrupted
ones, any randomness inside `__getitem__` (augmentation) should derive from the index.
Import the task from a package installed next to the trainer, or from the working directory.

Serving is stricter (`python -m vtp.trainer.serve`): a model's config.json names its task, and the
model directory may come from anyone, so serving imports only the tasks this package ships
(`builtin_tasks`) and the modules the operator lists in VTP_SERVING_MODULES (`serving_tasks`).
"""

import dataclasses
import functools
import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable, Mapping, Sequence, Sized
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset

from vtp.trainer.config import Config

REQUIRED = ("labels", "build_model", "build_datasets")
GOAL_NAMES = ("MAXIMIZE", "MINIMIZE")
CLASSIFICATION_GOALS: Mapping[str, str] = {"accuracy": "MAXIMIZE", "loss": "MINIMIZE"}
"""What a task without its own `metrics` reports: accuracy (and a confusion matrix) and loss."""
Loss = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
Metrics = Callable[[torch.Tensor, torch.Tensor], Mapping[str, float]]
Predictions = Callable[[torch.Tensor], list[Any]]
SERVING_MODULES_ENV = "VTP_SERVING_MODULES"
"""Comma-separated task modules that serving may import besides the built-in tasks."""


class Task(Protocol):
    """What a task module provides (modules satisfy Protocols structurally)."""

    def labels(self, config: Config) -> Sequence[str]: ...

    def build_model(self, config: Config) -> torch.nn.Module: ...

    def build_datasets(self, config: Config) -> tuple[Dataset, Dataset]: ...


def load_task(name: str) -> Task:
    """Import the task module `name`; errors name `--task` and what is missing."""
    name = renamed(name)
    try:
        module: ModuleType = importlib.import_module(name)
    except ImportError as exc:
        raise ValueError(f"--task={name}: cannot import it: {exc}") from exc
    missing = [attr for attr in REQUIRED if not callable(getattr(module, attr, None))]
    if missing:
        raise ValueError(
            f"--task={name}: the module lacks {', '.join(missing)} (see vtp.trainer.tasks)"
        )
    flags_class(module, name)
    goals(module, name)
    # The checks above are what make the module a Task: a ModuleType's attributes are Any.
    return module


def load(config: Config) -> tuple[Task, Config]:
    """The config's task, and the config with its `task_flags` typed by the task's `Flags`
    (defaults filled in) and its `hypertune_metric` resolved; ValueError names the flag."""
    task = load_task(config.task)
    kind = flags_class(task, config.task)
    given = config.task_flags
    if kind is None and given:
        names = ", ".join(f"--{name}" for name in _values(given))
        raise ValueError(f"--task={config.task} declares no flags (no Flags class): {names}")
    task_flags = None if kind is None else _typed(kind, given)
    reported = goals(task, config.task)
    metric = config.hypertune_metric or next(iter(reported))
    if metric not in reported:
        raise ValueError(
            f"--hypertune_metric={metric}: --task={config.task} reports {', '.join(reported)}"
        )
    return task, dataclasses.replace(config, task_flags=task_flags, hypertune_metric=metric)


def flags_class(task: object, name: str = "") -> type | None:
    """The task's `Flags` dataclass (its own trainer flags), or None; ValueError if malformed."""
    kind = getattr(task, "Flags", None)
    if kind is None:
        return None
    if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
        raise ValueError(f"--task={name}: Flags must be a dataclass (see vtp.trainer.tasks)")
    clashes = {f.name for f in dataclasses.fields(kind)} & {
        f.name for f in dataclasses.fields(Config)
    }
    if clashes:
        raise ValueError(
            f"--task={name}: Flags.{sorted(clashes)[0]} is already a trainer flag; rename it"
        )
    return kind


def goals(task: object, name: str = "") -> dict[str, str]:
    """The metrics a task reports, each with its goal (MAXIMIZE or MINIMIZE), `loss` last."""
    declared = getattr(task, "GOALS", None)
    if not callable(getattr(task, "metrics", None)):
        return dict(CLASSIFICATION_GOALS)
    if not isinstance(declared, Mapping) or not declared:
        raise ValueError(f"--task={name}: a task with metrics declares GOALS = {{name: goal}}")
    for metric, goal in declared.items():
        if goal not in GOAL_NAMES or not isinstance(metric, str) or not metric.isidentifier():
            raise ValueError(f"--task={name}: GOALS[{metric!r}] must be MAXIMIZE or MINIMIZE")
    return {**declared, "loss": "MINIMIZE"}


def loss_function(task: object) -> Loss:
    """The task's `loss`, or cross-entropy (the mean over the batch)."""
    own = getattr(task, "loss", None)
    return own if callable(own) else F.cross_entropy


def metrics_function(task: object) -> Metrics | None:
    """The task's own `metrics`, or None for the built-in classification metrics."""
    own = getattr(task, "metrics", None)
    return own if callable(own) else None


def task_predictions(task: object) -> Predictions | None:
    """The task's own `predictions` (what serving answers), or None for a classifier's."""
    own = getattr(task, "predictions", None)
    return own if callable(own) else None


def _values(given: object) -> dict[str, Any]:
    if given is None:
        return {}
    if dataclasses.is_dataclass(given) and not isinstance(given, type):
        return dataclasses.asdict(given)
    if isinstance(given, Mapping):
        return dict(given)
    raise TypeError(f"task_flags must be the task's Flags or a dict, not {type(given).__name__}")


def _typed(kind: type, given: object) -> Any:
    """`given` (a Flags, a dict read from config.json, or None) as an instance of `kind`."""
    if isinstance(given, kind):
        return given
    values = _values(given)
    unknown = set(values) - {f.name for f in dataclasses.fields(kind)}
    if unknown:
        raise ValueError(f"the task declares no flag --{sorted(unknown)[0]}")
    return kind(**values)


def builtin_tasks() -> frozenset[str]:
    """The tasks this package ships (`vtp.trainer.tasks.<module>`), found without importing any."""
    return frozenset(f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__) if not m.ispkg)


def renamed(name: str) -> str:
    """A built-in task by its name before the project's modules moved under `vtp`
    (`trainer.tasks.digits`, in specs compiled before), as it is named now, saying so once;
    where a `trainer` package of the team's own is importable, `name` is the team's and kept."""
    current = f"vtp.{name}"
    if not name.startswith("trainer.tasks.") or current not in builtin_tasks():
        return name
    found = importlib.util.find_spec("trainer")
    ours = Path(__file__).resolve().parents[1] / "__init__.py"  # a checkout's top folder is ours
    if found is not None and (found.origin is None or Path(found.origin).resolve() != ours):
        return name
    _say_renamed(name, current)
    return current


@functools.cache
def _say_renamed(old: str, new: str) -> None:
    print(f"--task={old} is now --task={new} (renamed; the old name goes in a later release)",
          file=sys.stderr)  # fmt: skip


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
