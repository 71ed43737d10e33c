"""The trainer's configuration: one frozen dataclass whose field names are its command-line flags.

Every field is a flag (`--learning_rate=0.01`) and, unchanged, a Vertex AI hyperparameter tuning
`parameterId`: Vertex appends `--<parameterId>=<value>` to a trial's arguments, so a study that
tunes `learning_rate` needs nothing else. The docstring under each field is its `--help` text.
A task's own flags (its `Flags` dataclass, vtp.trainer.tasks) are flags the same way; they are held
in `task_flags`, the one field that is not a flag itself.
Values are checked in `__post_init__`; errors name the flag. Output locations default to the
`AIP_*` directories that Vertex sets (see `output_dirs`).
"""

import argparse
import ast
import dataclasses
import inspect
import itertools
import os
import textwrap
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from vtp import storage

DEFAULT_OUTPUT_ROOT = "trainer_output"
"""Where outputs go when neither a flag nor an `AIP_*` variable names a directory."""


@dataclass(frozen=True)
class Config:
    """Everything that decides what a training run does."""

    # What to train.
    task: str = "vtp.trainer.tasks.digits"
    """Module that provides the model and data sets (see vtp.trainer.tasks for the contract)."""
    hidden_size: int = 128
    """Width of the model's hidden layers (tasks may read it)."""
    dropout: float = 0.0
    """Dropout probability in the model (tasks may read it)."""

    # How long and how.
    epochs: int = 20
    """Passes over the training set."""
    max_steps: int = 0
    """Stop after this many optimizer steps in total; 0 runs all epochs."""
    batch_size: int = 64
    """Global batch size, split evenly across all processes."""
    learning_rate: float = 3e-3
    """Peak learning rate of AdamW."""
    weight_decay: float = 0.01
    """AdamW decoupled weight decay."""
    lr_schedule: Literal["cosine", "constant"] = "cosine"
    """Learning-rate schedule after warm-up: cosine decay to zero, or constant."""
    warmup_steps: int = 0
    """Steps of linear learning-rate warm-up from zero."""
    max_grad_norm: float = 0.0
    """Clip the global gradient norm to this value; 0 disables clipping."""
    seed: int = 0
    """Seed of model initialisation, data order and every random number generator."""

    # Evaluation and metrics.
    eval_interval: int = 0
    """Evaluate every N optimizer steps; 0 evaluates at the end of every epoch."""
    hypertune_metric: str = ""
    """Evaluation metric reported to Vertex hyperparameter tuning, one the task reports (digits:
    accuracy, loss); its name is the metric tag. Empty: the task's first (accuracy)."""
    log_interval: int = 50
    """Print a progress line and write training scalars every N steps."""

    # Checkpoints and outputs.
    checkpoint_dir: str = ""
    """Checkpoint directory or gs:// URI; default $AIP_CHECKPOINT_DIR, else ./trainer_output."""
    checkpoint_interval: int = 100
    """Checkpoint every N optimizer steps; 0 saves only on SIGTERM and at the end."""
    keep_checkpoints: int = 3
    """How many of the newest checkpoints to keep."""
    model_dir: str = ""
    """Final model directory or gs:// URI; default $AIP_MODEL_DIR, else ./trainer_output."""
    tensorboard_dir: str = ""
    """TensorBoard log directory or gs:// URI; default $AIP_TENSORBOARD_LOG_DIR."""

    # Runtime.
    strategy: Literal["ddp", "fsdp"] = "ddp"
    """Data parallelism: ddp replicates the model; fsdp shards it per block (FSDP2) and saves
    sharded checkpoints that resume on any number of processes."""
    activation_checkpointing: bool = False
    """With --strategy=fsdp: recompute each block's activations in the backward pass."""
    nproc_per_node: int = 0
    """Processes per node (replica); 0 means one per GPU, else one per accelerator of the
    replica's pool (CLUSTER_SPEC), else one."""
    num_workers: int = 0
    """DataLoader worker processes per training process."""
    precision: Literal["bf16", "fp32"] = "bf16"
    """Compute precision on GPU (bf16 autocast); CPU always computes in fp32."""
    compile: bool = False
    """Compile the model with torch.compile."""
    dist_timeout: int = 600
    """Seconds to wait for peers to join and for any collective before failing."""

    # The task's own flags.
    task_flags: Any = dataclasses.field(default=None, metadata={"flag": False})
    """The task's `Flags` instance once the task is loaded (vtp.trainer.tasks.load), the values read
    from a config.json before that, None for a task without flags: not a flag itself."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            choices = _choices(field.name)
            if choices and getattr(self, field.name) not in choices:
                raise ValueError(f"--{field.name} must be one of {', '.join(choices)}")
        _check(self.task.strip() != "", "--task must name a module")
        _check(0.0 <= self.dropout < 1.0, "--dropout must be in [0, 1)")
        _check(self.learning_rate > 0, "--learning_rate must be > 0")
        for name in ("hidden_size", "epochs", "batch_size", "log_interval", "keep_checkpoints"):
            _check(getattr(self, name) >= 1, f"--{name} must be >= 1")
        for name in ("max_steps", "warmup_steps", "eval_interval", "checkpoint_interval"):
            _check(getattr(self, name) >= 0, f"--{name} must be >= 0")
        for name in ("weight_decay", "max_grad_norm"):
            _check(getattr(self, name) >= 0, f"--{name} must be >= 0")
        for name in ("nproc_per_node", "num_workers", "seed"):
            _check(getattr(self, name) >= 0, f"--{name} must be >= 0")
        _check(self.dist_timeout >= 1, "--dist_timeout must be >= 1 second")

    def to_args(self) -> list[str]:
        """The flags that reproduce this config (`parse_args(c.to_args()) == c`)."""
        return [f"--{name}={_format(value)}" for name, value in self.to_dict().items()]

    def to_dict(self) -> dict[str, Any]:
        """The config as a flat JSON-ready dict (what `config.json` holds), the task's own
        flags beside the trainer's."""
        values = {f.name: getattr(self, f.name) for f in flag_fields(Config)}
        return {**values, **_flag_values(self.task_flags)}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "Config":
        """A config from `to_dict()` output. Keys that are no trainer flag are the task's own,
        kept as they are until vtp.trainer.tasks.load types them (without importing the task)."""
        names = {f.name for f in flag_fields(cls)}
        own = {key: value for key, value in values.items() if key not in names}
        return cls(**{k: v for k, v in values.items() if k in names}, task_flags=own or None)


@dataclass(frozen=True)
class OutputDirs:
    """Local paths of the run's outputs (gs:// URIs already mapped through `storage`)."""

    checkpoints: Path
    model: Path
    tensorboard: Path


def output_dirs(config: Config, env: Mapping[str, str] | None = None) -> OutputDirs:
    """Output directories: each flag, else Vertex's `AIP_*` variable, else ./trainer_output."""
    env = os.environ if env is None else env

    def pick(flag_value: str, variable: str, default: str) -> Path:
        chosen = flag_value or env.get(variable) or f"{DEFAULT_OUTPUT_ROOT}/{default}"
        return storage.local_path(chosen)

    return OutputDirs(
        checkpoints=pick(config.checkpoint_dir, "AIP_CHECKPOINT_DIR", "checkpoints"),
        model=pick(config.model_dir, "AIP_MODEL_DIR", "model"),
        tensorboard=pick(config.tensorboard_dir, "AIP_TENSORBOARD_LOG_DIR", "logs"),
    )


def build_parser(
    prog: str = "python -m vtp.trainer", task_flags: type | None = None, add_help: bool = True
) -> argparse.ArgumentParser:
    """An argparse parser with one `--<field>` flag per config field, and per field of the
    task's `Flags` dataclass when given."""
    parser = _Parser(prog=prog, allow_abbrev=False, description=Config.__doc__, add_help=add_help)
    _add_flags(parser, Config)
    if task_flags is not None:
        _add_flags(parser.add_argument_group("the task's own flags"), task_flags)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> Config:
    """Parse flags into a Config; bad flags or values exit with status 2 and name the flag.

    The task is imported only when flags remain that the trainer does not know (the task's own,
    or --help): then its `Flags` make them known and typed."""
    parser = build_parser(add_help=False)
    namespace, rest = parser.parse_known_args(argv)
    kind = None
    if rest:
        kind = _task_flags_class(namespace.task, parser)
        parser = build_parser(task_flags=kind)
        namespace = parser.parse_args(argv)
    values = vars(namespace)
    own = {f.name: values.pop(f.name) for f in flag_fields(kind)} if kind else {}
    try:
        return Config(**values, task_flags=kind(**own) if kind else None)
    except ValueError as exc:
        parser.error(str(exc))


def flag_fields(kind: type | None) -> list[dataclasses.Field[Any]]:
    """The fields of dataclass `kind` that are flags (all but Config's `task_flags`)."""
    if kind is None:
        return []
    return [f for f in dataclasses.fields(kind) if f.metadata.get("flag", True)]


@cache
def field_docs(kind: type | None = None) -> dict[str, str]:
    """The docstring written under each field of `kind` (default Config), read from its source
    (none when the source cannot be read)."""
    try:
        source = inspect.getsource(kind or Config)
    except (OSError, TypeError):
        return {}
    (class_def,) = ast.parse(textwrap.dedent(source)).body
    assert isinstance(class_def, ast.ClassDef)
    docs = {}
    for node, following in itertools.pairwise(class_def.body):
        match node, following:
            case ast.AnnAssign(target=ast.Name(id=name)), ast.Expr(ast.Constant(str(doc))):
                docs[name] = doc
    return docs


class _Parser(argparse.ArgumentParser):
    """Errors are one line naming the flag (no usage block: `--help` has it); exit status 2."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _choices(name: str, owner: type | None = None) -> tuple[str, ...]:
    kind = _type_hints(owner or Config)[name]
    return typing.get_args(kind) if typing.get_origin(kind) is Literal else ()


@cache
def _type_hints(owner: type) -> dict[str, Any]:
    """`typing.get_type_hints(owner)`, evaluated once per class (callers only read it): every
    Config checks each field's choices, and evaluating the hints took longer than the checks."""
    return typing.get_type_hints(owner)


def _add_flags(parser: argparse._ActionsContainer, owner: type) -> None:
    docs = field_docs(owner)
    hints = _type_hints(owner)
    for field in flag_fields(owner):
        kind = hints[field.name]
        default = field.default
        help_text = f"{docs.get(field.name, '')} (default: {_format(default)})".lstrip()
        options: dict[str, Any] = {"default": default, "help": help_text}
        if kind is bool:
            options.update(nargs="?", const=True, type=_parse_bool, metavar="BOOL")
        elif _choices(field.name, owner):
            options.update(choices=_choices(field.name, owner))
        elif kind in (int, float, str):
            options.update(type=_parse_int if kind is int else kind)
        else:
            raise ValueError(f"--{field.name}: a flag is an int, float, str, bool or Literal")
        parser.add_argument(f"--{field.name}", **options)


def _task_flags_class(task: str, parser: argparse.ArgumentParser) -> type | None:
    """The `Flags` of the task module `task` (imported); errors end the parse, naming --task."""
    from vtp.trainer import tasks  # the task contract imports this module

    try:
        kind = tasks.flags_class(tasks.load_task(task), task)
        build_parser(task_flags=kind)  # every field a flag of a type the trainer parses
    except ValueError as exc:
        parser.error(str(exc))
    return kind


def _flag_values(task_flags: object) -> dict[str, Any]:
    if task_flags is None:
        return {}
    if dataclasses.is_dataclass(task_flags) and not isinstance(task_flags, type):
        return dataclasses.asdict(task_flags)
    return dict(task_flags) if isinstance(task_flags, Mapping) else {}


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _parse_int(text: str) -> int:
    # Vertex sends DISCRETE parameter values as doubles ("64.0"); accept any integral number.
    value = float(text)
    if not value.is_integer():
        raise ValueError(text)
    return int(value)


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


_parse_int.__name__ = "integer"  # argparse names the type in "invalid integer value: '1.5'"
_parse_bool.__name__ = "boolean"


def _format(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
