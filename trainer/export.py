"""The model directory: what a finished run leaves in `AIP_MODEL_DIR` for serving and pipelines.

    model.pt       the model's state_dict (torch.save; load with weights_only=True)
    config.json    the Config that built it (`Config.from_dict`; also valid `--flag=value`s)
    metrics.json   its evaluation: accuracy, loss, examples, confusion_matrix, labels, step

`export_checkpoint` makes the same directory from a checkpoint (e.g. the best one a pipeline
picked); `load_model` rebuilds the model from a directory.
"""

import io
import json
import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

import storage
from trainer import checkpoint
from trainer.config import Config
from trainer.tasks import load_task

MODEL_FILE = "model.pt"
CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.json"


def write_model_dir(
    model_dir: str | os.PathLike[str],
    model_state: dict[str, Any],
    config: Config,
    metrics: dict[str, Any],
) -> Path:
    """Write model.pt, config.json and metrics.json (each atomically); return the directory."""
    directory = storage.local_path(model_dir)
    buffer = io.BytesIO()
    torch.save(model_state, buffer)
    checkpoint.atomic_write(directory / MODEL_FILE, buffer.getbuffer())
    checkpoint.atomic_write(directory / CONFIG_FILE, _json(config.to_dict()))
    checkpoint.atomic_write(directory / METRICS_FILE, _json(metrics))
    return directory


def export_checkpoint(
    checkpoint_file: str | os.PathLike[str],
    model_dir: str | os.PathLike[str],
    metrics: dict[str, Any] | None = None,
) -> Path:
    """Write a model directory from a (verified) checkpoint; `metrics` defaults to {"step": N}."""
    state = checkpoint.load_checkpoint(checkpoint_file)
    config = Config.from_dict(state["config"])
    return write_model_dir(model_dir, state["model"], config, metrics or {"step": state["step"]})


def load_model(model_dir: str | os.PathLike[str]) -> tuple[nn.Module, Config]:
    """The model in a model directory, rebuilt by its task, and its config."""
    directory = storage.local_path(model_dir)
    config = Config.from_dict(json.loads((directory / CONFIG_FILE).read_text()))
    model = load_task(config.task).build_model(config)
    state = torch.load(directory / MODEL_FILE, map_location="cpu", weights_only=True)
    model.load_state_dict(state)
    return model, config


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=1) + "\n").encode()
