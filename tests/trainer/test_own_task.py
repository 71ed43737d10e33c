"""A team's own task, from a folder of its own outside this repository: its flag (`num_filters`),
its loss (a regression's mean squared error) and its metric (`rmse`, MINIMIZE) reach
`python -m vtp.trainer`, the tuning report and the model directory; a bad value of its flag is one
line and exit 2 before anything trains. The shipped regression example trains the same way."""

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.fixtures import team_folder
from tests.trainer.conftest import CPU_ONLY
from vtp.trainer import tasks
from vtp.trainer.config import Config, parse_args

MY_TASK = '''
"""The team's task: a small convolution over the diabetes features, scored by rmse."""
from dataclasses import dataclass

import torch
from torch import nn

from vtp.trainer.tasks.diabetes import build_datasets, labels  # the data: 10 features, 1 target


@dataclass(frozen=True)
class Flags:
    num_filters: int = 32
    """Filters of the convolution."""

    def __post_init__(self):
        if self.num_filters < 1:
            raise ValueError("--num_filters must be >= 1")


GOALS = {"rmse": "MINIMIZE"}


def build_model(config):
    filters = config.task_flags.num_filters
    return nn.Sequential(
        nn.Unflatten(1, (1, 10)), nn.Conv1d(1, filters, 3, padding=1), nn.ReLU(),
        nn.Flatten(), nn.Linear(filters * 10, 1),
    )


def loss(outputs, targets):
    return nn.functional.mse_loss(outputs, targets)


def metrics(outputs, targets):
    return {"rmse": torch.sqrt(((outputs - targets) ** 2).mean()).item()}
'''


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """The team's folder, outside the repository, with its task module."""
    return team_folder(tmp_path, MY_TASK)


def trainer(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`python -m vtp.trainer ARGS` typed in `folder` (on the CPU), its tuning reports in
    folder/hypertune."""
    env = {**os.environ, **CPU_ONLY, "CLOUD_ML_HP_METRIC_FILE": str(folder / "hypertune")}
    for name in ("AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR", "AIP_TENSORBOARD_LOG_DIR"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "vtp.trainer", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_the_tasks_flag_loss_and_metric_train_and_report(team: Path) -> None:
    result = trainer(team, "--task=my_task", "--num_filters=16", "--epochs=2", "--batch_size=32")
    assert result.returncode == 0, result.stderr[-3000:]
    model_dir = team / "trainer_output" / "model"
    config = json.loads((model_dir / "config.json").read_text())
    assert config["num_filters"] == 16 and isinstance(config["num_filters"], int)
    assert config["hypertune_metric"] == "rmse"  # the task's first metric, by default
    metrics = json.loads((model_dir / "metrics.json").read_text())
    assert metrics["goals"] == {"rmse": "MINIMIZE", "loss": "MINIMIZE"}
    assert 0 < metrics["rmse"] < 2 and metrics["examples"] == 88  # standardised target
    assert "accuracy" not in metrics and "confusion_matrix" not in metrics
    reports = [json.loads(line) for line in (team / "hypertune").read_text().splitlines()]
    assert reports and all("rmse" in report for report in reports)
    assert float(reports[-1]["rmse"]) == pytest.approx(metrics["rmse"])
    assert "| rmse " in result.stdout  # the evaluation line names the task's metric


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--num_filters=1.5", "argument --num_filters: invalid integer value: '1.5'"),
        ("--num_filters=0", "--num_filters must be >= 1"),
        (
            "--hypertune_metric=accuracy",
            "--hypertune_metric=accuracy: --task=my_task reports rmse, loss",
        ),
    ],
)
def test_a_bad_value_of_the_tasks_flag_is_one_line_before_training(
    team: Path, flag: str, message: str
) -> None:
    result = trainer(team, "--task=my_task", flag)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [f"python -m vtp.trainer: error: {message}"]
    assert not (team / "trainer_output").exists()


def test_the_help_lists_the_tasks_flags(team: Path) -> None:
    result = trainer(team, "--task=my_task", "--help")
    assert result.returncode == 0
    assert "--num_filters NUM_FILTERS" in result.stdout
    assert "Filters of the convolution. (default: 32)" in result.stdout


def test_the_shipped_regression_task_trains(tmp_path: Path) -> None:
    result = trainer(tmp_path, "--task=vtp.trainer.tasks.diabetes", "--num_layers=1", "--epochs=2")
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "trainer_output/model/metrics.json").read_text())
    assert set(metrics["goals"]) == {"rmse", "r2", "loss"} and metrics["rmse"] > 0


def test_the_task_types_its_flags_from_a_config_json() -> None:
    """config.json holds the task's flags beside the trainer's; reading it imports nothing, and
    loading the task types them (defaults filled in)."""
    config = parse_args(["--task=vtp.trainer.tasks.diabetes", "--num_layers=3"])
    assert config.to_dict()["num_layers"] == 3 and "--num_layers=3" in config.to_args()
    read = Config.from_dict(config.to_dict())
    assert read.task_flags == {"num_layers": 3}
    _, loaded = tasks.load(read)
    assert loaded.task_flags == config.task_flags and loaded.hypertune_metric == "rmse"
    _, defaults = tasks.load(Config(task="vtp.trainer.tasks.diabetes"))
    assert defaults.task_flags.num_layers == 2


def module(**attributes: object) -> ModuleType:
    """A task module made of `attributes` (and the three functions every task has)."""
    made = ModuleType("made_task")
    for name in tasks.REQUIRED:
        setattr(made, name, lambda config: None)
    made.__dict__.update(attributes)
    return made


@dataclasses.dataclass
class Clashing:
    hidden_size: int = 3


def test_a_malformed_task_is_refused_naming_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"Flags.hidden_size is already a trainer flag"):
        tasks.flags_class(module(Flags=Clashing), "made_task")
    with pytest.raises(ValueError, match=r"Flags must be a dataclass"):
        tasks.flags_class(module(Flags=dict), "made_task")
    with pytest.raises(ValueError, match=r"declares GOALS"):
        tasks.goals(module(metrics=lambda o, t: {}), "made_task")
    with pytest.raises(ValueError, match=r"GOALS\['rmse'\] must be MAXIMIZE or MINIMIZE"):
        tasks.goals(module(metrics=lambda o, t: {}, GOALS={"rmse": "LOWER"}), "made_task")


GC_TASK = """
import gc

from my_task import *  # noqa: F403
from my_task import build_model as build_my_model


def build_model(config):
    print("collector on:", gc.isenabled(), "torch frozen:", gc.get_freeze_count() > 100_000)
    return build_my_model(config)
"""


def test_training_collects_its_garbage_and_never_walks_pytorchs_objects(team: Path) -> None:
    """The trainer imports PyTorch without the collector and freezes it (`vtp.import_gc`):
    the collector is on by the time the task builds its model, and its passes skip torch."""
    (team / "gc_task.py").write_text(GC_TASK)
    result = trainer(team, "--task=gc_task", "--max_steps=1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "collector on: True torch frozen: True" in result.stdout
