"""The training loop in this process: accuracy, outputs, and resuming past a torn checkpoint."""

import json
import logging

from tests.trainer.conftest import assert_bitwise_equal, load_model, tiny_args, train_here
from vtp.trainer import tasks
from vtp.trainer.checkpoint import checkpoint_path, list_checkpoints
from vtp.trainer.config import parse_args
from vtp.trainer.evaluate import evaluate_checkpoint
from vtp.trainer.evaluate import main as evaluate_main
from vtp.trainer.export import export_checkpoint
from vtp.trainer.export import load_model as load_exported


def test_default_config_learns_digits_and_publishes_everything(tmp_path, metrics_file, capsys):
    out = {name: tmp_path / name for name in ("checkpoints", "model", "logs")}
    result = train_here([f"--{name}_dir={path}" for name, path in
                     [("checkpoint", out["checkpoints"]), ("model", out["model"]),
                      ("tensorboard", out["logs"])]])  # fmt: skip

    assert result.metrics["accuracy"] >= 0.95
    assert (result.step, result.preempted, result.resumed_from) == (440, False, 0)
    metrics = json.loads((out["model"] / "metrics.json").read_text())
    assert metrics["accuracy"] == result.metrics["accuracy"] and metrics["step"] == 440
    assert sum(map(sum, metrics["confusion_matrix"])) == metrics["examples"] == 360
    assert json.loads((out["model"] / "config.json").read_text())["learning_rate"] == 3e-3

    reports = [json.loads(line) for line in metrics_file.read_text().splitlines()]
    assert [int(r["global_step"]) for r in reports] == list(range(22, 441, 22))  # every epoch
    assert float(reports[-1]["accuracy"]) == result.metrics["accuracy"]
    assert list(out["logs"].glob("events.out.tfevents.*"))

    final = list_checkpoints(out["checkpoints"])[0]
    assert final.step == 440
    evaluated = evaluate_checkpoint(final.path, device="cpu")
    assert evaluated["accuracy"] == result.metrics["accuracy"]
    assert evaluated["confusion_matrix"] == metrics["confusion_matrix"]
    capsys.readouterr()
    assert evaluate_main([str(out["checkpoints"])]) == 0  # a directory: its newest checkpoint
    assert json.loads(capsys.readouterr().out)["step"] == 440

    exported = export_checkpoint(final.path, tmp_path / "exported")
    model, config = load_exported(exported)
    given = parse_args([f"--checkpoint_dir={out['checkpoints']}", f"--model_dir={out['model']}",
                        f"--tensorboard_dir={out['logs']}"])  # fmt: skip
    assert config == tasks.load(given)[1]  # as trained: the task's defaults resolved
    assert_bitwise_equal(model.state_dict(), load_model(tmp_path))


def test_truncated_newest_checkpoint_is_skipped_and_the_run_resumes_before_it(
    tmp_path, metrics_file, caplog, monkeypatch
):
    monkeypatch.setattr(logging.getLogger("trainer"), "propagate", True)
    args = tiny_args(tmp_path)
    uninterrupted = train_here(args)
    expected = load_model(tmp_path)
    steps = [info.step for info in list_checkpoints(tmp_path / "checkpoints")]
    assert steps == [24, 20], "keep_checkpoints=2, and the end of training is saved too"

    newest = checkpoint_path(tmp_path / "checkpoints", 24)
    newest.write_bytes(newest.read_bytes()[:1000])
    resumed = train_here(args)

    assert "skipping corrupt checkpoint" in caplog.text
    assert (resumed.resumed_from, resumed.step) == (20, 24)
    assert resumed.metrics == uninterrupted.metrics
    assert_bitwise_equal(load_model(tmp_path), expected)


def test_a_finished_run_started_again_changes_nothing(tmp_path, metrics_file):
    args = tiny_args(tmp_path, max_steps=8)
    first = train_here(args)
    expected = load_model(tmp_path)
    again = train_here(args)
    assert (again.resumed_from, again.step, again.metrics) == (8, 8, first.metrics)
    assert_bitwise_equal(load_model(tmp_path), expected)
