"""The lines `vtp run` ends with: did it work, how good is the model, and where everything is.

Every artifact is named twice: as the `gs://` URI the pipeline would use on Vertex, and as the
local path it is at (`gs://BUCKET/PATH` is `<storage root>/BUCKET/PATH`). A training job's
TensorBoard logs come with the command that opens them.
"""

import json
from pathlib import Path
from typing import Any

from vtp import storage
from vtp.run.local_run import RunResult
from vtp.vertex.humanize import readable


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
    for task, output in (task_outputs(run_dir) if run_dir else {}).items():
        lines.extend(f"  {line}" for line in _task(task, output, result.storage_root))
    lines.append(f"  local Cloud Storage: gs://BUCKET/PATH is {result.storage_root}/BUCKET/PATH")
    if run_dir:
        lines.append(f"  outputs of every task: {run_dir}")
    return "\n".join(lines)


def _task(task: str, output: dict[str, Any], root: Path) -> list[str]:
    lines = [f"{task}:"]
    params = output.get("parameterValues", {})
    if params:
        values = ", ".join(f"{name} {readable(value)}" for name, value in sorted(params.items()))
        lines.append(f"  {values}")
    for name, group in sorted(output.get("artifacts", {}).items()):
        artifact = group["artifacts"][0]
        resource = artifact.get("metadata", {}).get("resourceName")
        lines.append(f"  {name}: {resource or where(artifact['uri'], root)}")
        if name == "model" and task.startswith("custom-job"):
            logs = where(artifact["uri"].rstrip("/").rsplit("/", 1)[0] + "/logs", root)
            local = logs.split(" (", 1)[-1].rstrip(")") if " (" in logs else logs
            lines.append(f"  tensorboard logs: {logs}")
            lines.append(f"    open them: tensorboard --logdir {local}")
    return lines


def where(uri: str, root: Path) -> str:
    """`gs://... (local path)` for an artifact URI, whichever of the two it was written as."""
    try:
        if storage.is_gcs_uri(uri):
            return f"{uri} ({storage.path_under(root, uri)})"
        path = Path(uri)
        relative = path.resolve().relative_to(root.resolve())
        return f"gs://{relative.as_posix()} ({path})"
    except ValueError:
        return uri
