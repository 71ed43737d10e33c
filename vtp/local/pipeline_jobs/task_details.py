"""A local run's tasks as Vertex reports them (`PipelineJob.jobDetail.taskDetails`), read from
the engine's journal (`vtp/engine/journal.py`, `RUN_DIR/tasks.jsonl`).

Every task is there: the pipeline's root DAG (named after the pipeline), executor tasks, and
the DAGs of conditions, nested pipelines, loops and each loop iteration, each with its
`parent_task_id`, and `task_unique_name` its path of task names. Input parameters as the task
used them (defaults included) and output parameters go into the task's execution metadata as
`input:<name>` / `output:<name>`, where Vertex puts them;
output artifacts into `outputs`. A task answered from the cache is SKIPPED with its execution
CACHED, as Vertex reports one. An iteration's execution metadata holds its `iteration` index and
its `item`.
"""

from datetime import datetime
from pathlib import Path
from typing import Any

from google.cloud import aiplatform_v1
from google.protobuf import struct_pb2
from google.rpc import status_pb2

from vtp.engine import journal

TaskState = aiplatform_v1.PipelineTaskDetail.State
ExecutionState = aiplatform_v1.Execution.State
_STATES = {
    "PENDING": TaskState.PENDING,
    "RUNNING": TaskState.RUNNING,
    "SUCCEEDED": TaskState.SUCCEEDED,
    "FAILED": TaskState.FAILED,
    "SKIPPED": TaskState.SKIPPED,
    "CANCELLED": TaskState.CANCELLED,
    "NOT_TRIGGERED": TaskState.NOT_TRIGGERED,
}
_SCHEMAS = {"executor": "system.ContainerExecution"}
"""An execution's schema by task kind; DAGs (pipeline, condition, loop, iteration) otherwise."""
_EXECUTION = {
    "RUNNING": ExecutionState.RUNNING,
    "SUCCEEDED": ExecutionState.COMPLETE,
    "FAILED": ExecutionState.FAILED,
    "CANCELLED": ExecutionState.CANCELLED,
}


def task_details(run_log: Path, run_root: Path) -> list[aiplatform_v1.PipelineTaskDetail]:
    """The tasks of the run whose log is `run_log` (its journal sits beside it), in the order
    they started. `run_root` (the run's folder under the pipeline root) is not read: every
    output is in the journal."""
    return [_detail(record) for record in journal.read(run_log.parent)]


def _detail(record: dict[str, Any]) -> aiplatform_v1.PipelineTaskDetail:
    cached = bool(record.get("cached"))
    state = "SKIPPED" if cached else record.get("state", "RUNNING")
    detail = aiplatform_v1.PipelineTaskDetail(
        task_id=record["id"],
        parent_task_id=record.get("parent", 0),
        task_name=record.get("name", ""),
        task_unique_name=record.get("path", ""),
        state=_STATES.get(state, TaskState.STATE_UNSPECIFIED),
    )
    for field, key in (("create_time", "start"), ("start_time", "start"), ("end_time", "end")):
        if record.get(key):
            setattr(detail, field, datetime.fromisoformat(record[key].replace("Z", "+00:00")))
    if record.get("error"):
        detail.error = status_pb2.Status(code=9, message=record["error"])
    metadata = {f"input:{k}": v for k, v in (record.get("inputs") or {}).items() if _plain(v)}
    metadata.update({f"output:{k}": v for k, v in (record.get("outputs") or {}).items()})
    if record.get("kind") == "iteration":
        metadata.update(iteration=record.get("iteration", 0), item=record.get("item"))
    execution_state = ExecutionState.CACHED if cached else _EXECUTION.get(state)
    detail.execution = aiplatform_v1.Execution(
        display_name=record.get("name", ""),
        schema_title=_SCHEMAS.get(record.get("kind", ""), "system.DAGExecution"),
        state=execution_state or ExecutionState.STATE_UNSPECIFIED,
        metadata=_struct(metadata),
    )
    for name, artifacts in (record.get("artifacts") or {}).items():
        detail.outputs[name] = aiplatform_v1.PipelineTaskDetail.ArtifactList(
            artifacts=[
                aiplatform_v1.Artifact(
                    name=a["name"] if str(a.get("name", "")).startswith("projects/") else "",
                    display_name=name,
                    uri=a.get("uri", ""),
                    schema_title=a.get("schema", ""),
                    metadata=_struct(a.get("metadata")),
                )
                for a in artifacts
            ]
        )
    return detail


def _plain(value: Any) -> bool:
    """Whether `value` is a parameter (artifacts are listed as outputs of their producer)."""
    first = value[0] if isinstance(value, list) and value else None
    return not (isinstance(first, dict) and "uri" in first)


def _struct(value: Any) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    if isinstance(value, dict):
        struct.update(value)
    return struct
