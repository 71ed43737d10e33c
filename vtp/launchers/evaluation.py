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
"""The metrics evaluation reports, and which way is better."""


@dataclass(frozen=True)
class Evaluation:
    """One checkpoint's evaluation."""

    uri: str
    """The checkpoint file, under the directory URI it was found in."""
    step: int
    result: dict[str, Any]
    """`trainer.evaluate.evaluate_checkpoint`'s result: accuracy, loss, confusion matrix, ..."""


def evaluate_directory(directory_uri: str, last_k: int = 0) -> list[Evaluation]:
    """Evaluate the newest `last_k` checkpoints (all when 0) under a directory or gs:// URI."""
    # torch comes in with these: imported here, so `vtp run`'s parameter check stays quick.
    from trainer import checkpoint
    from trainer.evaluate import evaluate_checkpoint

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
        _log.info("step %d: accuracy %.4f loss %.4f", info.step, result["accuracy"], result["loss"])
        evaluations.append(Evaluation(uri, info.step, result))
    if not evaluations:
        raise FileNotFoundError(f"no valid checkpoint to evaluate in {directory_uri}")
    return evaluations


def write_json(path: str, value: dict[str, Any]) -> None:
    """Write `value` as JSON at an artifact's local path (its directories made first)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(value, indent=1) + "\n")


def best(evaluations: list[Evaluation], metric: str) -> Evaluation:
    """The best evaluation by `metric`; ties go to the later step."""
    if metric not in HIGHER_IS_BETTER:
        raise ValueError(f"metric must be one of {sorted(HIGHER_IS_BETTER)}, not {metric!r}")
    sign = 1 if HIGHER_IS_BETTER[metric] else -1
    return max(evaluations, key=lambda e: (sign * e.result[metric], e.step))


def passes(evaluation: Evaluation, metric: str, threshold: float) -> bool:
    """Whether the evaluation reaches `threshold` in `metric`'s better direction."""
    value = evaluation.result[metric]
    return value >= threshold if HIGHER_IS_BETTER[metric] else value <= threshold
