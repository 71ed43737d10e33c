"""The few lines `vtp run` ends with: did it work, how good is the model, where is it."""

import json
from pathlib import Path
from typing import Any

from vtp.run.local_run import RunResult

_TASKS = (
    "custom-job",
    "hyperparameter-tuning",
    "evaluate-checkpoints",
    "export-model",
    "upload-model",
)


def task_outputs(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Each finished task's executor output in a kfp.local run directory, by task name."""
    found = {}
    for output in sorted(run_dir.glob("**/executor_output.json")):
        found[output.parent.name] = json.loads(output.read_text())
    return found


def latest_run(pipeline_root: Path) -> Path | None:
    """The newest run directory under a kfp.local pipeline root."""
    runs = [path for path in pipeline_root.glob("*") if path.is_dir()]
    return max(runs, key=lambda path: path.stat().st_mtime, default=None)


def summarize(result: RunResult) -> str:
    """A short, human summary of a local run."""
    status = "SUCCEEDED" if result.succeeded else "FAILED"
    lines = [f"Pipeline {result.pipeline} {status} in {result.seconds:.0f}s"]
    if result.error:
        first, *cause = result.error.splitlines()
        lines.append(f"  error: {first}")
        if cause:
            lines.append("  the failed task's last lines:")
            lines.extend(f"    {line}" for line in cause)
    run_dir = latest_run(result.pipeline_root)
    outputs = task_outputs(run_dir) if run_dir else {}
    for task in _TASKS:
        if task in outputs:
            lines.extend(f"  {line}" for line in _describe(task, outputs[task]))
    if run_dir:
        lines.append(f"  outputs of every task: {run_dir}")
    return "\n".join(lines)


def _describe(task: str, output: dict[str, Any]) -> list[str]:
    params = output.get("parameterValues", {})
    artifacts = {name: group["artifacts"][0] for name, group in output.get("artifacts", {}).items()}
    if task == "evaluate-checkpoints":
        best = artifacts.get("best_checkpoint", {})
        return [
            f"best checkpoint: step {params.get('step')}, metric {params.get('metric_value'):.4f}"
            f" ({'passes' if params.get('passed') else 'below'} the threshold)",
            f"  {best.get('uri')}",
        ]
    if task == "export-model":
        return [f"exported model: {artifacts.get('model', {}).get('uri')}"]
    if task == "upload-model":
        registered = artifacts.get("vertex_model", {}).get("metadata", {})
        return [f"registered model: {registered.get('resourceName')}"]
    if task == "hyperparameter-tuning":
        return [f"best trial: {params.get('best_parameters')} -> {params.get('best_metric')}"]
    return [f"model directory: {artifacts.get('model', {}).get('uri')}"]
