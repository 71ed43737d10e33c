"""A local run's tasks as Vertex reports them (`PipelineJob.jobDetail.taskDetails`), read from
what kfp.local leaves behind: the run's log and each task's `executor_output.json`.

kfp.local logs `Executing task 'T'`, `Task 'T' finished with status S` and `Skipping conditional
task T`; those give each task's state. A finished task's executor output holds its output
artifacts (URI and metadata) and parameters; the parameters go into the task's execution
metadata as `output:<name>`, where Vertex puts them.
"""

import json
import re
from pathlib import Path
from typing import Any

from google.cloud import aiplatform_v1
from google.protobuf import struct_pb2

TaskState = aiplatform_v1.PipelineTaskDetail.State
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_STARTED = re.compile(r"Executing task '([^']+)'")
_FINISHED = re.compile(r"Task '([^']+)' finished with status (\w+)")
_SKIPPED = re.compile(r"Skipping conditional task (\S+)")
_STATES = {"SUCCESS": TaskState.SUCCEEDED, "FAILURE": TaskState.FAILED}


def task_details(run_log: Path, run_root: Path) -> list[aiplatform_v1.PipelineTaskDetail]:
    """The tasks the run has reached so far, in the order they started."""
    states: dict[str, int] = {}  # TaskState members, the ints mypy sees proto-plus enums as
    text = run_log.read_text(errors="replace") if run_log.exists() else ""
    for line in _ANSI.sub("", text).splitlines():
        if found := _STARTED.search(line):
            states[found[1]] = TaskState.RUNNING
        elif found := _FINISHED.search(line):
            states[found[1]] = _STATES.get(found[2], TaskState.FAILED)
        elif found := _SKIPPED.search(line):
            states[found[1]] = TaskState.SKIPPED
    outputs = _executor_outputs(run_root)
    return [_detail(name, state, outputs.get(name, {})) for name, state in states.items()]


def _executor_outputs(run_root: Path) -> dict[str, dict[str, Any]]:
    """Each task's executor output, by task name (`<root>/<run>/<task>/executor_output.json`)."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(run_root.glob("*/*/executor_output.json")) if run_root.is_dir() else []:
        try:
            found[path.parent.name] = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
    return found


def _detail(name: str, state: int, output: dict[str, Any]) -> aiplatform_v1.PipelineTaskDetail:
    detail = aiplatform_v1.PipelineTaskDetail(task_name=name, state=state)
    for key, value in (output.get("artifacts") or {}).items():
        artifacts = [
            aiplatform_v1.Artifact(uri=a.get("uri", ""), metadata=_struct(a.get("metadata")))
            for a in value.get("artifacts", [])
            if isinstance(a, dict)
        ]
        detail.outputs[key] = aiplatform_v1.PipelineTaskDetail.ArtifactList(artifacts=artifacts)
    parameters = output.get("parameterValues") or {}
    if parameters:
        metadata = {f"output:{key}": value for key, value in parameters.items()}
        detail.execution = aiplatform_v1.Execution(metadata=_struct(metadata))
    return detail


def _struct(value: Any) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    if isinstance(value, dict):
        struct.update(value)
    return struct
