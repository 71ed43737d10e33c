"""`evaluate_checkpoints` and `export_model` bodies on the checkpoints of a real trainer run."""

from pathlib import Path

import pytest
import torch
from kfp.dsl import Artifact, ClassificationMetrics, Metrics, Model

from tests.fixtures import train_digits
from vtp.components.evaluate_checkpoints import evaluate_checkpoints
from vtp.components.export_model import export_model
from vtp.trainer import checkpoint
from vtp.trainer.evaluate import evaluate_checkpoint
from vtp.trainer.export import load_model


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short digits run with three checkpoints kept."""
    out = tmp_path_factory.mktemp("run")
    return train_digits(out, max_steps=60, checkpoint_interval=20, keep_checkpoints=3)


def evaluate(directory: Path, tmp_path: Path, **kwargs: object) -> tuple:
    """Run the component body; return its outputs and output artifacts."""
    metrics = Metrics(uri=str(tmp_path / "metrics"))
    confusion = ClassificationMetrics(uri=str(tmp_path / "confusion"))
    best = Model(uri=str(tmp_path / "best"))
    outputs = evaluate_checkpoints.python_func(
        checkpoints=Artifact(uri=str(directory)),
        metrics=metrics,
        classification_metrics=confusion,
        best_checkpoint=best,
        **kwargs,
    )
    return outputs, metrics, confusion, best


def test_picks_the_most_accurate_checkpoint(run_dir: Path, tmp_path: Path) -> None:
    outputs, metrics, confusion, best = evaluate(run_dir / "checkpoints", tmp_path)
    scores = {
        info.step: evaluate_checkpoint(info.path)["accuracy"]
        for info in checkpoint.list_checkpoints(run_dir / "checkpoints")
    }
    assert sorted(scores) == [20, 40, 60]
    top = max(scores.values())
    assert outputs.metric_value == top
    assert outputs.step == max(step for step, value in scores.items() if value == top)
    assert best.uri == f"{run_dir / 'checkpoints'}/step_{outputs.step:08d}.pt"
    assert best.metadata == {"step": outputs.step, "metric": "accuracy", "accuracy": top}
    assert metrics.metadata["checkpoints_evaluated"] == 3
    rows = confusion.metadata["confusionMatrix"]["rows"]
    assert len(rows) == 10
    assert sum(sum(row["row"]) for row in rows) == evaluate_checkpoint(best.uri)["examples"]


def test_threshold_decides_passed_in_the_metric_direction(run_dir: Path, tmp_path: Path) -> None:
    outputs, *_ = evaluate(run_dir / "checkpoints", tmp_path, threshold=1.01)
    assert outputs.passed is False
    outputs, *_ = evaluate(run_dir / "checkpoints", tmp_path, threshold=0.0)
    assert outputs.passed is True
    loss, *_ = evaluate(run_dir / "checkpoints", tmp_path, metric="loss", threshold=0.0)
    assert loss.passed is False


def test_last_k_and_corrupt_checkpoints_are_skipped(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "checkpoints"
    copy.mkdir()
    for source in (run_dir / "checkpoints").iterdir():
        (copy / source.name).write_bytes(source.read_bytes())
    newest = checkpoint.list_checkpoints(copy)[0].path
    newest.write_bytes(newest.read_bytes()[:100])  # truncated mid-write
    outputs, metrics, _, best = evaluate(copy, tmp_path, last_k=2)
    assert metrics.metadata["checkpoints_evaluated"] == 1
    assert outputs.step == 40 and best.metadata["step"] == 40


def test_no_valid_checkpoint_fails_with_the_directory(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="empty"):
        evaluate(tmp_path / "empty", tmp_path)


def test_export_reloads_with_the_checkpoint_predictions(run_dir: Path, tmp_path: Path) -> None:
    _, _, _, best = evaluate(run_dir / "checkpoints", tmp_path)
    exported = Model(uri=str(tmp_path / "exported"))
    export_model.python_func(checkpoint=best, model=exported)
    model, config = load_model(exported.path)
    state = checkpoint.read_state(best.uri)
    assert config.to_dict() == state.config
    assert exported.metadata["step"] == best.metadata["step"]
    inputs = torch.randn(8, 64)
    reference, _ = load_model(exported.path)
    reference.load_state_dict(state.model)
    torch.testing.assert_close(model.eval()(inputs), reference.eval()(inputs), rtol=0, atol=0)
