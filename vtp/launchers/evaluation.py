"""Evaluate a run's checkpoints and pick the best: the body of `evaluate_checkpoints`.

Each checkpoint is verified against its manifest and evaluated with the trainer's own task (the
config saved inside it rebuilds model and data), so evaluation needs nothing but the checkpoint
directory. Corrupt checkpoints are skipped with a warning, as the trainer skips them on resume.
"""

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_log = logging.getLogger(__name__)

HIGHER_IS_BETTER = {"accuracy": True, "loss": False}
"""The metrics evaluation reports for a task without metrics of its own, and which way is
better; a task's own metrics come with their goals (the result's `goals`)."""


@dataclass(frozen=True)
class Evaluation:
    """One checkpoint's evaluation."""

    uri: str
    """The checkpoint file, under the directory URI it was found in."""
    step: int
    result: dict[str, Any]
    """`vtp.trainer.evaluate.evaluate_checkpoint`'s result: accuracy, loss, confusion matrix, ..."""


def evaluate_directory(directory_uri: str, last_k: int = 0) -> list[Evaluation]:
    """Evaluate the newest `last_k` checkpoints (all when 0) under a directory or gs:// URI."""
    # torch comes in with these: imported here, so `vtp run`'s parameter check stays quick.
    from vtp.trainer import checkpoint
    from vtp.trainer.evaluate import evaluate_checkpoint

    infos = checkpoint.list_checkpoints(directory_uri)
    if last_k > 0:
        infos = infos[:last_k]
    evaluations = []
    for info in infos:
        try:
            result = evaluate_checkpoint(info.path)
        except checkpoint.CorruptCheckpoint as exc:
            _log.warning("skipping corrupt checkpoint: %s", exc)
            continue
        uri = f"{directory_uri.rstrip('/')}/{info.path.name}"
        shown = " ".join(f"{name} {value:.4f}" for name, value in scores(result).items())
        _log.info("step %d: %s", info.step, shown)
        evaluations.append(Evaluation(uri, info.step, result))
    if not evaluations:
        raise FileNotFoundError(f"no valid checkpoint to evaluate in {directory_uri}")
    return evaluations


def write_json(path: str, value: dict[str, Any]) -> None:
    """Write `value` as JSON at an artifact's local path (its directories made first)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(value, indent=1) + "\n")


def scores(result: dict[str, Any]) -> dict[str, float]:
    """The metrics of an evaluation result (accuracy and loss, or the task's own and loss)."""
    return {name: value for name, value in result.items() if isinstance(value, float)}


def higher_is_better(result: dict[str, Any], metric: str) -> bool:
    """Which way `metric` is better, by the goals the task declared; ValueError naming the
    metrics the result has when it has no `metric`."""
    default = {name: "MAXIMIZE" if up else "MINIMIZE" for name, up in HIGHER_IS_BETTER.items()}
    goals = result.get("goals") or default
    if metric not in goals:
        raise ValueError(f"metric must be one of {sorted(goals)} (the task's), not {metric!r}")
    return bool(goals[metric] == "MAXIMIZE")


def best(evaluations: list[Evaluation], metric: str) -> Evaluation:
    """The best evaluation by `metric`; ties go to the later step."""
    sign = 1 if higher_is_better(evaluations[0].result, metric) else -1
    return max(evaluations, key=lambda e: (sign * e.result[metric], e.step))


def passes(evaluation: Evaluation, metric: str, threshold: float) -> bool:
    """Whether the evaluation reaches `threshold` in `metric`'s better direction."""
    value = evaluation.result[metric]
    return value >= threshold if higher_is_better(evaluation.result, metric) else value <= threshold
