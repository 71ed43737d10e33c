"""The lines `vtp run` ends with: did it work, how good is the model, and where everything is.

Read from the pipeline job and its task details, as the console reads them: the tasks in the
order they started (each ParallelFor iteration on its own, named by its place), each with its
state when it did not simply succeed (`cached` for a cache hit, which Vertex reports as a
SKIPPED task whose execution is CACHED), its output parameters and artifacts. Every artifact is
named twice: as the `gs://` URI the pipeline would use on Vertex, and as the local path it is at
(`gs://BUCKET/PATH` is `<storage root>/BUCKET/PATH`). The jobs a task started (its
`gcp_resources` output) are named with their display names. A training job's TensorBoard logs
come with the command that opens them. Then the run's console page and, when it failed, why: the
job's error, whose first line names the failed task, once (not again under that task), then the
error's own next lines unless the run's log already showed that task's last lines as it went
(`follow.TaskLines`): each error is printed once.
"""

import json
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp import storage
from vtp.vertex.humanize import readable

if TYPE_CHECKING:  # local_run reads the jobs' names from here (`task_resources`)
    from vtp.run.local_run import RunResult

Task = aiplatform_v1.PipelineTaskDetail
TaskState = Task.State
_DAG = "system.DAGExecution"
GCP_RESOURCES = "gcp_resources"
"""The output in which a task records the Vertex resources it started (shown as names)."""


def summarize(result: "RunResult") -> str:
    """A short, human summary of a local run."""
    job = result.job
    state = job.state.name.removeprefix("PIPELINE_STATE_")
    lines = [f"Pipeline {result.pipeline} {state} in {result.seconds:.0f}s"]
    shown = shown_tasks(list(job.job_detail.task_details), dag_tasks(job))
    said = job.error.message.partition("\n")[0] if not result.interrupted else ""
    for task in shown:
        lines.extend(f"  {line}" for line in _task(task, result, said))
    root = result.storage_root
    lines.append(f"  local Cloud Storage: gs://BUCKET/PATH is {root}/BUCKET/PATH")
    outputs = job.runtime_config.gcs_output_directory
    if outputs:
        lines.append(f"  outputs of every task: {where(f'{outputs}/{_id(job.name)}', root)}")
    lines.append(f"  pipeline job: {job.name}")
    lines.extend(f"  {line}" for line in _console(result))
    if result.notes:
        lines.append("  stopped with the run:")
        lines.extend(f"    {note}" for note in result.notes)
    if job.error.message and not result.interrupted:
        first, *cause = job.error.message.splitlines()
        lines.append(f"  error: {first}")
        if cause and not _failed_tail(shown, result.tails):  # else the log showed it above
            lines.append("  the failed task's last lines:")
            lines.extend(f"    {line}" for line in cause)
    return "\n".join(lines)


def shown_tasks(tasks: list[Task], dags: frozenset[str] = frozenset()) -> list[tuple[str, Task]]:
    """The executor tasks (not the pipeline, its conditions, loops or iterations: a task
    with children, the root, a DAG execution, or one of the `dags` names), each with the name
    it is shown by, in the order they started (those not started yet last)."""
    parents = {t.parent_task_id for t in tasks if t.parent_task_id}
    executors = [
        t
        for t in tasks
        if not (t.task_id and (t.task_id in parents or not t.parent_task_id))
        and t.execution.schema_title != _DAG
        and t.task_name not in dags
    ]
    order = sorted(range(len(executors)), key=lambda i: (_started(executors[i]), i))
    counts: dict[str, int] = {}
    for task in executors:
        counts[task.task_name] = counts.get(task.task_name, 0) + 1
    by_id = {t.task_id: t for t in tasks if t.task_id}
    seen: dict[str, int] = {}
    shown = []
    for task in (executors[i] for i in order):
        name = task.task_name
        if counts[name] > 1:  # a task of a ParallelFor: one per iteration
            seen[name] = seen.get(name, 0) + 1
            name = task.task_unique_name or f"{name} [{seen[name]}]"
            item = _item(task, by_id)
            name += f" (item {item})" if item else ""
        shown.append((name, task))
    return shown


def _item(task: Task, by_id: dict[int, Task]) -> str:
    """The loop item of the iteration `task` runs in (its nearest ancestor's `item`), or ""."""
    parent, visited = by_id.get(task.parent_task_id), set()
    while parent is not None and parent.task_id not in visited:
        visited.add(parent.task_id)
        metadata = json_format.MessageToDict(aiplatform_v1.Execution.pb(parent.execution).metadata)
        if "item" in metadata:
            return readable(metadata["item"])
        parent = by_id.get(parent.parent_task_id)
    return ""


def dag_tasks(job: aiplatform_v1.PipelineJob) -> frozenset[str]:
    """Names of the job's tasks that are DAGs (conditions, loops, nested pipelines), from its
    spec: a task whose component has a `dag`."""
    spec = json_format.MessageToDict(aiplatform_v1.PipelineJob.pb(job).pipeline_spec)
    components = spec.get("components", {})
    dags = [spec.get("root", {}), *components.values()]
    return frozenset(
        name
        for dag in dags
        for name, task in dag.get("dag", {}).get("tasks", {}).items()
        if "dag" in components.get(task.get("componentRef", {}).get("name", ""), {})
    )


def _failed_tail(shown: list[tuple[str, Task]], tails: dict[str, list[str]]) -> list[str]:
    """The last lines of the first failed task, as the run's log showed them (none when it was
    not followed)."""
    for _, task in shown:
        if task.state != TaskState.FAILED:
            continue
        for path, tail in tails.items():
            if path in (task.task_unique_name, task.task_name) or path.endswith(
                f"/{task.task_name}"
            ):
                return tail
    return []


def _started(task: Task) -> float:
    """When the task started, in seconds since the epoch; infinity when it has not."""
    value = getattr(task, "start_time", None)
    return value.timestamp() if isinstance(value, datetime) else float("inf")


def task_resources(job: aiplatform_v1.PipelineJob) -> list[str]:
    """Names of the Vertex resources (jobs, ...) the job's tasks recorded in gcp_resources."""
    return [
        name
        for task in job.job_detail.task_details
        for _, name in _resources(_outputs(task).get(GCP_RESOURCES, ""))
    ]


def _outputs(task: Task) -> dict[str, Any]:
    """The task's output parameters, as plain values (from its execution's metadata)."""
    metadata = json_format.MessageToDict(aiplatform_v1.Execution.pb(task.execution).metadata)
    return {k.removeprefix("output:"): v for k, v in metadata.items() if k.startswith("output:")}


def _task(shown: tuple[str, Task], result: "RunResult", said: str = "") -> list[str]:
    name, task = shown
    root = result.storage_root
    status = _status(task)
    lines = [f"{name}:{f' {status}' if status else ''}"]
    params = _outputs(task)
    resources = _resources(params.pop(GCP_RESOURCES, ""))
    if params:
        values = ", ".join(f"{n} {readable(v)}" for n, v in sorted(params.items()))
        lines.append(f"  {values}")
    for kind, resource in resources:
        display = result.display_names.get(resource)
        lines.append(f"  {kind}: {resource}{f' ({display})' if display else ''}")
    for output, group in sorted(task.outputs.items()):
        for artifact in group.artifacts:
            plain = json_format.MessageToDict(aiplatform_v1.Artifact.pb(artifact).metadata)
            registered = plain.get("resourceName")
            lines.append(f"  {output}: {registered or where(artifact.uri, root)}")
            if output == "model" and task.task_name.startswith("custom-job"):
                logs = artifact.uri.rstrip("/").rsplit("/", 1)[0] + "/logs"
                lines.append(f"  tensorboard logs: {where(logs, root)}")
                lines.append(f"    open them: tensorboard --logdir {_local(logs, root)}")
    first = task.error.message.partition("\n")[0]
    if first and task.state == TaskState.FAILED and first != said:  # `said`: the run's, at its end
        lines.append(f"  error: {first}")
    return lines


def _resources(text: object) -> list[tuple[str, str]]:
    """(type, name) of each resource a task's `gcp_resources` output records (GCPC's JSON)."""
    try:
        found = json.loads(str(text)).get("resources", []) if text else []
        return [
            (str(r["resourceType"]), str(r["resourceUri"]).partition("/v1/")[2] or r["resourceUri"])
            for r in found
        ]
    except (ValueError, AttributeError, KeyError, TypeError):
        return []


def _status(task: Task) -> str:
    """How the task ended, unless it simply succeeded."""
    if task.execution.state == aiplatform_v1.Execution.State.CACHED:
        return "cached"
    if task.state in (TaskState.SUCCEEDED, TaskState.STATE_UNSPECIFIED):
        return ""
    return task.state.name


def _console(result: "RunResult") -> list[str]:
    if result.console_stays:
        return [f"console: {result.console}"]
    fragment = parse_qs(result.console.partition("#")[2])  # token=...&page=/runs/<id>
    page = fragment.get("page", [""])[0]
    then = f", then go to #{page}" if page else ""
    return [
        f"console: run `vtp local serve --state-dir {result.state_dir}` and open the Console "
        f"address it prints{then}"
    ]


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


def _local(uri: str, root: Path) -> str:
    try:
        return str(storage.path_under(root, uri)) if storage.is_gcs_uri(uri) else uri
    except ValueError:
        return uri


def _id(name: str) -> str:
    return name.rsplit("/", 1)[-1]
