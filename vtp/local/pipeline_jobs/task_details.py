"""A local run's tasks as Vertex reports them (`PipelineJob.jobDetail.taskDetails`), read from
the engine's journal (`vtp/engine/journal.py`, `RUN_DIR/tasks.jsonl`).

Every task is there: the pipeline's root DAG (named after the pipeline), executor tasks, and
the DAGs of conditions, nested pipelines, loops and each loop iteration, each with its
`parent_task_id`, and `task_unique_name` its path of task names. Input parameters as the task
used them (defaults included) and output parameters go into the task's execution metadata as
`input:<name>` / `output:<name>`, where Vertex puts them;
output artifacts into `outputs`. A task answered from the cache is SKIPPED with its execution
CACHED, as Vertex reports one. An iteration's execution metadata holds its `iteration` index and
its `item`. The pipeline's own execution is `system.Run`, named after the job (its inputs are
the run's parameters, where `aiplatform.get_experiment_df` reads them), an executor task's
`system.ContainerExecution`, every other DAG's `system.DAGExecution`; each execution and output
artifact carries the name ML Metadata knows it by (`lineage.py` records them there).
"""

import hashlib
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
_SCHEMAS = {"pipeline": "system.Run", "executor": "system.ContainerExecution"}
"""An execution's schema by task kind; DAGs (pipeline, condition, loop, iteration) otherwise."""
_EXECUTION = {
    "RUNNING": ExecutionState.RUNNING,
    "SUCCEEDED": ExecutionState.COMPLETE,
    "FAILED": ExecutionState.FAILED,
    "CANCELLED": ExecutionState.CANCELLED,
}


def task_details(
    run_log: Path, job_name: str, over: bool = False
) -> list[aiplatform_v1.PipelineTaskDetail]:
    """The tasks of the run `job_name` whose log is `run_log` (its journal sits beside it), in
    the order they started; `over`: the run has ended (`journal.read`)."""
    return [_detail(record, job_name) for record in journal.read(run_log.parent, over)]


def metadata_store(job_name: str) -> str:
    """The metadata store a run of `job_name` records into: its location's `default`."""
    return job_name.split("/pipelineJobs/")[0] + "/metadataStores/default"


def execution(record: dict[str, Any], job_name: str) -> aiplatform_v1.Execution:
    """The execution of one task of the run `job_name`, named as ML Metadata holds it."""
    cached = bool(record.get("cached"))
    state = "SKIPPED" if cached else record.get("state", "RUNNING")
    metadata = {f"input:{k}": v for k, v in (record.get("inputs") or {}).items() if _plain(v)}
    metadata.update({f"output:{k}": v for k, v in (record.get("outputs") or {}).items()})
    if record.get("kind") == "iteration":
        metadata.update(iteration=record.get("iteration", 0), item=record.get("item"))
    execution_state = ExecutionState.CACHED if cached else _EXECUTION.get(state)
    digest = hashlib.sha256(f"{job_name}/{record['id']}".encode()).hexdigest()[:20]
    kind = record.get("kind", "")
    return aiplatform_v1.Execution(
        name=f"{metadata_store(job_name)}/executions/{digest}",
        display_name=job_name.rpartition("/")[2] if kind == "pipeline" else record.get("name", ""),
        schema_title=_SCHEMAS.get(kind, "system.DAGExecution"),
        state=execution_state or ExecutionState.STATE_UNSPECIFIED,
        metadata=_struct(metadata),
    )


def artifacts(
    by_name: dict[str, list[dict[str, Any]]] | None,
) -> dict[str, list[aiplatform_v1.Artifact]]:
    """Journal artifact records (by output or input name) as Artifacts; only those the engine
    named (`.../metadataStores/default/artifacts/ID`) have a name."""
    return {
        name: [
            aiplatform_v1.Artifact(
                name=a["name"] if str(a.get("name", "")).startswith("projects/") else "",
                display_name=name,
                uri=a.get("uri", ""),
                schema_title=a.get("schema", ""),
                schema_version=a.get("schema_version", ""),
                metadata=_struct(a.get("metadata")),
            )
            for a in items
            if isinstance(a, dict) and "uri" in a
        ]
        for name, items in (by_name or {}).items()
        if isinstance(items, list)
    }


def input_artifacts(record: dict[str, Any]) -> dict[str, list[aiplatform_v1.Artifact]]:
    """The artifacts a task took as inputs, by input name."""
    inputs = record.get("inputs") or {}
    return artifacts({k: v for k, v in inputs.items() if not _plain(v)})


def _detail(record: dict[str, Any], job_name: str) -> aiplatform_v1.PipelineTaskDetail:
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
    detail.execution = execution(record, job_name)
    for name, made in artifacts(record.get("artifacts")).items():
        detail.outputs[name] = aiplatform_v1.PipelineTaskDetail.ArtifactList(artifacts=made)
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
