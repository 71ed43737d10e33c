"""Export: a trained checkpoint becomes a torch.export program that predicts exactly as it did."""

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from vtp.trainer import train
from vtp.trainer.checkpoint import list_checkpoints, read_state
from vtp.trainer.config import Config, parse_args
from vtp.trainer.distributed import Runtime
from vtp.trainer.evaluate import evaluate_checkpoint
from vtp.trainer.export import (
    ExportMismatch,
    check_program,
    export_checkpoint,
    export_program,
    load_model,
    load_program,
    read_metadata,
    serialize_program,
)
from vtp.trainer.predict import ModelError, Predictor
from vtp.trainer.tasks import digits

ONE_PROCESS = Runtime(rank=0, world_size=1, local_rank=0, device=torch.device("cpu"))

# Loads model.pt2 where the trainer cannot be imported: the program needs torch and nothing else.
STANDALONE = """
import sys
import torch
sys.modules["vtp"] = None
program = torch.export.load(sys.argv[1]).module()
inputs = torch.load(sys.argv[2], weights_only=True)
with torch.no_grad():
    torch.save(program(inputs), sys.argv[3])
"""


@pytest.fixture(scope="module")
def best_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The newest checkpoint of a short digits run (with dropout, so eval mode matters)."""
    out = tmp_path_factory.mktemp("run")
    argv = [f"--{key}={value}" for key, value in {
        "hidden_size": 32, "dropout": 0.2, "max_steps": 90, "checkpoint_interval": 45,
        "eval_interval": 45, "checkpoint_dir": out / "checkpoints", "model_dir": out / "model",
        "tensorboard_dir": out / "logs",
    }.items()]  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLOUD_ML_HP_METRIC_FILE", str(out / "hypertune.metrics"))
        train.run(parse_args(argv), ONE_PROCESS)
    torch.set_num_threads(threads)
    return list_checkpoints(out / "checkpoints")[0].path


def checkpoint_logits(path: Path, inputs: torch.Tensor) -> torch.Tensor:
    """What the checkpointed model, rebuilt by its task, predicts for `inputs`."""
    state = read_state(path)
    model = digits.build_model(Config.from_dict(state.config))
    model.load_state_dict(state.model)
    with torch.no_grad():
        return model.eval()(inputs)


def eval_inputs() -> torch.Tensor:
    """Every image of the digits evaluation set, as one batch."""
    return digits.build_datasets(Config())[1].tensors[0]


@pytest.mark.slow
def test_exported_program_reloads_with_identical_predictions_on_the_eval_set(
    best_checkpoint: Path, tmp_path: Path
) -> None:
    model_dir = export_checkpoint(best_checkpoint, tmp_path / "model")
    inputs = eval_inputs()
    torch.save(inputs, tmp_path / "inputs.pt")
    subprocess.run(
        [sys.executable, "-c", STANDALONE, str(model_dir / "model.pt2"),
         str(tmp_path / "inputs.pt"), str(tmp_path / "logits.pt")],
        check=True, env={"OMP_NUM_THREADS": "1", "PATH": "", "CUDA_VISIBLE_DEVICES": ""},
    )  # fmt: skip
    exported = torch.load(tmp_path / "logits.pt", weights_only=True)

    assert exported.shape == (360, 10)
    assert torch.equal(exported, checkpoint_logits(best_checkpoint, inputs))
    evaluated = evaluate_checkpoint(best_checkpoint, device="cpu")
    accuracy = (exported.argmax(1) == digits.build_datasets(Config())[1].tensors[1]).float()
    assert accuracy.mean().item() == pytest.approx(evaluated["accuracy"])
    assert evaluated["accuracy"] > 0.5  # a trained model, not chance (0.1)


def test_model_directory_holds_weights_config_metrics_and_metadata(
    best_checkpoint: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VTP_GCS_ROOT", str(tmp_path / "gcs"))
    metrics = {"step": 90, "metric": "accuracy", "accuracy": 0.75}
    export_checkpoint(best_checkpoint, "gs://bucket/exported", metrics)
    directory = tmp_path / "gcs" / "bucket" / "exported"

    metadata = read_metadata("gs://bucket/exported")
    assert metadata == {
        "format": "torch.export",
        "program": "model.pt2",
        "state_dict": "model.pt",
        "torch_version": torch.__version__,
        "task": "vtp.trainer.tasks.digits",
        "inputs": [{"name": "input", "shape": [None, 64], "dtype": "float32"}],
        "outputs": [{"name": "logits", "shape": [None, 10], "dtype": "float32"}],
        "labels": [str(digit) for digit in range(10)],
        "step": 90,
        "metrics": metrics,
    }
    assert json.loads((directory / "metrics.json").read_text()) == metrics
    rebuilt, config = load_model(directory)
    assert config.hidden_size == 32 and config.dropout == 0.2
    inputs = eval_inputs()[:7]
    with torch.no_grad():
        assert torch.equal(load_program(directory)(inputs), rebuilt.eval()(inputs))


def test_program_serves_any_batch_size_and_ignores_dropout(best_checkpoint: Path) -> None:
    state = read_state(best_checkpoint)
    model = digits.build_model(Config.from_dict(state.config))
    model.load_state_dict(state.model)
    program = export_program(model, eval_inputs()[:2]).module()
    for size in (1, 3, 64):
        batch = eval_inputs()[:size]
        assert torch.equal(program(batch), program(batch))  # no dropout left
        assert program(batch).shape == (size, 10)


def test_check_program_refuses_bytes_that_do_not_reproduce_the_model() -> None:
    torch.manual_seed(0)
    model, other = digits.build_model(Config()), digits.build_model(Config())
    example = eval_inputs()[:2]
    data = serialize_program(export_program(other, example))
    with pytest.raises(ExportMismatch, match=r"differs from the model by up to .* \[2, 64\]"):
        check_program(data, model, example)


class _Payload:
    """Unpickling this runs `touch`: what a crafted model file would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (os.system, (f"touch {self.marker}",))


def test_serving_runs_no_code_from_a_crafted_model_directory(
    best_checkpoint: Path, tmp_path: Path
) -> None:
    directory = export_checkpoint(best_checkpoint, tmp_path / "model")
    marker = tmp_path / "ran"
    # A model.pt2 that runs code when unpickled: serving never loads it.
    (directory / "model.pt2").write_bytes(pickle.dumps(_Payload(marker)))
    predictor = Predictor.load(directory)
    assert len(predictor.predict({"instances": eval_inputs()[:2].tolist()})) == 2
    # Weights that run code when unpickled: refused by weights_only, nothing runs.
    torch.save({"x": _Payload(marker)}, directory / "model.pt")
    with pytest.raises(ModelError, match="cannot load the model"):
        Predictor.load(directory)
    assert not marker.exists()
