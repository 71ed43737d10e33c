"""The orchestrator: a compiled PipelineSpec run as Vertex Pipelines runs it.

Every DAG (the pipeline, a nested pipeline, a condition, an exit handler's body, one iteration
of a loop) runs its tasks as soon as what they depend on has ended: the tasks they name in
`dependentTasks` (`.after()`) and those whose outputs they take. Tasks that are ready together
run together, each in a thread of its own that waits on its process.

A task, in order:

1. **Trigger strategy.** By default it runs only when every upstream task succeeded (or was
   skipped by its condition); otherwise it is NOT_TRIGGERED. With `ALL_UPSTREAM_TASKS_COMPLETED`
   (an exit handler's task, `ignore_upstream_failure()`) it runs once they have ended however
   they ended, and an input from a task that produced nothing takes its default.
2. **Inputs**: parent inputs, sibling outputs, constants, a `PipelineTaskFinalStatus`, each
   through its expression selector when it has one (`conditions.select`).
3. **Condition** (`dsl.If`/`Elif`/`Else`): false -> SKIPPED.
4. **Run**: a loop (`parameterIterator` / `artifactIterator`) runs its DAG once per item, at
   most `parallelismLimit` at a time, and collects each iteration's outputs into lists
   (flattened across nested loops, as `dsl.Collected` gives them); a DAG component recurses; an
   executor runs (`executors.py`), from the cache when the task allows it and an earlier
   execution matches (`cache.py`), retried as its `retryPolicy` says.

A DAG's outputs are read from its tasks by their selectors; of several (`dsl.OneOf`) the first
whose task produced one. A DAG fails when one of its tasks failed or was not triggered. After a
cancel, nothing new starts and what was running ends CANCELLED. Every change of state goes to
the run's journal (`journal.py`).
"""

import concurrent.futures
import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, TypeAlias

from google.protobuf import json_format
from kfp import dsl
from kfp.pipeline_spec import pipeline_spec_pb2

from vtp import storage
from vtp.engine import executors, task_cache
from vtp.engine.cache import Cache
from vtp.engine.conditions import ExpressionError, condition_holds, select
from vtp.engine.executors import Node
from vtp.engine.journal import Journal, now

# kfp's protobuf classes carry no type information: the aliases name what a value is.
TaskSpec: TypeAlias = Any  # pipeline_spec_pb2.PipelineTaskSpec
ComponentSpec: TypeAlias = Any  # pipeline_spec_pb2.ComponentSpec
Strategy = pipeline_spec_pb2.PipelineTaskSpec.TriggerPolicy.TriggerStrategy
_UNRUN = frozenset({"FAILED", "NOT_TRIGGERED", "CANCELLED"})
MAX_PARALLEL_TASKS = 64
"""Threads per DAG: a task's thread only waits on its process."""


@dataclass(frozen=True)
class Scope:
    """Where a DAG runs: its task id (its tasks' parent) and its path of task names."""

    task_id: int
    path: tuple[str, ...]


@dataclass(frozen=True)
class Seen:
    """What a task sees of its DAG when it starts: the DAG's inputs, the tasks that have ended
    by then (by name: its inputs and final statuses come from them), and its upstream ones."""

    inputs: dict[str, Any]
    ended: dict[str, Node]
    upstream: dict[str, Node]


class Engine:
    """Runs one pipeline spec under `pipeline_root` as run `run_id`; its tasks share the
    folder `workspace` (KFP's workspace, `dsl.WORKSPACE_PATH_PLACEHOLDER`)."""

    def __init__(
        self,
        spec: pipeline_spec_pb2.PipelineSpec,
        pipeline_root: str,
        run_id: str,
        job_name: str,
        journal: Journal,
        cache: Cache | None,
        workspace: str = "",
    ) -> None:
        self.spec, self.pipeline_root, self.run_id = spec, pipeline_root, run_id
        self.workspace = workspace
        self.job_name, self.journal, self.cache = job_name, journal, cache
        self.cancelled = threading.Event()
        self.failures: list[str] = []
        self._lock = threading.Lock()
        # The spec keeps its executors as a Struct; read them once, typed.
        self._executors = pipeline_spec_pb2.PipelineDeploymentConfig()
        json_format.ParseDict(
            {"executors": json_format.MessageToDict(spec.deployment_spec).get("executors", {})},
            self._executors,
            ignore_unknown_fields=True,
        )

    # -- the run ------------------------------------------------------------------------------

    def run(self, arguments: dict[str, Any]) -> Node:
        """Run the pipeline with `arguments`; its root's end."""
        root = self.spec.root
        inputs = _with_defaults(root, arguments)
        task_id = self.journal.new_id()
        name = self.spec.pipeline_info.name
        record = {"id": task_id, "parent": 0, "name": name, "path": "", "kind": "pipeline"}
        self._write(record, "RUNNING", start=now(), inputs=_parameters(root, inputs))
        node = self._dag(root, inputs, Scope(task_id, ()))
        self._write(record, node.state, end=now(), error=node.error)
        return node

    def cancel(self) -> None:
        """Start nothing more; what runs ends CANCELLED (its processes got the signal)."""
        self.cancelled.set()

    # -- DAGs ---------------------------------------------------------------------------------

    def _dag(self, component: ComponentSpec, inputs: dict[str, Any], scope: Scope) -> Node:
        tasks = dict(component.dag.tasks)
        upstream = {name: _upstream(task) & tasks.keys() for name, task in tasks.items()}
        ended: dict[str, Node] = {}
        waiting = set(tasks)
        with concurrent.futures.ThreadPoolExecutor(
            max_workers=min(MAX_PARALLEL_TASKS, max(1, len(tasks))),
            thread_name_prefix="task",
        ) as pool:
            running: dict[concurrent.futures.Future[Node], str] = {}
            while waiting or running:
                for name in sorted(n for n in waiting if upstream[n] <= ended.keys()):
                    waiting.discard(name)
                    seen = Seen(inputs, dict(ended), {u: ended[u] for u in upstream[name]})
                    future = pool.submit(self._task, name, tasks[name], seen, scope)
                    running[future] = name
                if not running:  # a cycle: the compiler never makes one
                    for name in waiting:
                        ended[name] = Node("NOT_TRIGGERED", error="waits on itself")
                    break
                done, _ = concurrent.futures.wait(
                    running, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for future in done:
                    ended[running.pop(future)] = future.result()
        return self._dag_end(component, tasks, ended)

    def _dag_end(
        self, component: ComponentSpec, tasks: dict[str, TaskSpec], ended: dict[str, Node]
    ) -> Node:
        failed = [n for n, node in ended.items() if node.state in ("FAILED", "NOT_TRIGGERED")]
        if self.cancelled.is_set() and any(n.state == "CANCELLED" for n in ended.values()):
            return Node("CANCELLED", error="cancelled")
        if failed:
            causes = [ended[n].error for n in failed if ended[n].state == "FAILED"]
            return Node("FAILED", error=next((c for c in causes if c), f"{failed[0]} failed"))
        return Node("SUCCEEDED", _dag_outputs(component, tasks, ended))

    # -- tasks --------------------------------------------------------------------------------

    def _task(self, name: str, task: TaskSpec, seen: Seen, scope: Scope) -> Node:
        """Run one task (`_run_task`); a bug of ours fails the task, never the run's thread."""
        path = (*scope.path, name)
        component = self.spec.components[task.component_ref.name]
        record = {
            "id": self.journal.new_id(), "parent": scope.task_id, "name": name,
            "path": "/".join(path), "kind": "executor" if component.executor_label else "dag",
        }  # fmt: skip
        try:
            return self._run_task(record, task, component, seen, path)
        except Exception as exc:
            cause = f"the local engine failed: {type(exc).__name__}: {exc}"
            return self._fail(record, Node("FAILED", error=cause))

    def _run_task(
        self,
        record: dict[str, Any],
        task: TaskSpec,
        component: ComponentSpec,
        seen: Seen,
        path: tuple[str, ...],
    ) -> Node:
        if self.cancelled.is_set():
            return self._end(record, Node("CANCELLED", error="cancelled before it started"))
        all_completed = task.trigger_policy.strategy == Strategy.ALL_UPSTREAM_TASKS_COMPLETED
        unrun = sorted(u for u, node in seen.upstream.items() if node.state in _UNRUN)
        if unrun and not all_completed:
            return self._end(
                record, Node("NOT_TRIGGERED", error=f"upstream {unrun[0]} did not run")
            )
        try:
            inputs = self._inputs(task, seen)
            if task.trigger_policy.condition and not condition_holds(
                task.trigger_policy.condition, _parameters(component, inputs, loose=True)
            ):
                return self._end(record, Node("SKIPPED"), inputs=_jsonable(inputs))
        except (ExpressionError, ValueError) as exc:
            return self._fail(record, Node("FAILED", error=str(exc)))
        # The inputs as used, the component's defaults included, as Vertex's driver records them.
        used = _jsonable(_with_defaults(component, inputs))
        self._write(record, "RUNNING", start=now(), inputs=used)
        if _is_loop(task):
            node = self._loop(task, component, inputs, Scope(record["id"], path))
        elif component.HasField("dag"):
            inner = Scope(record["id"], path)
            node = self._dag(component, _with_defaults(component, inputs), inner)
        else:
            node = self._execute(record, task, component, inputs, path)
        if node.state == "FAILED" and record["kind"] == "executor":
            return self._fail(record, node)
        return self._end(record, node)

    def _loop(
        self, task: TaskSpec, component: ComponentSpec, inputs: dict[str, Any], scope: Scope
    ) -> Node:
        if task.HasField("parameter_iterator"):
            iterator: Any = task.parameter_iterator
            if iterator.items.HasField("raw"):
                items = json.loads(iterator.items.raw)
            else:
                items = inputs.get(iterator.items.input_parameter, [])
                items = json.loads(items) if isinstance(items, str) else items
        else:
            iterator = task.artifact_iterator
            items = inputs.get(iterator.items.input_artifact, [])
            items = items if isinstance(items, list) else [items]
        limit = task.iterator_policy.parallelism_limit or len(items) or 1

        def iteration(index: int) -> Node:
            path = (*scope.path, f"iteration-{index}")
            item_id = self.journal.new_id()
            record = {
                "id": item_id, "parent": scope.task_id, "name": f"{scope.path[-1]}-{index}",
                "path": "/".join(path), "kind": "iteration", "iteration": index,
                "item": _jsonable(items[index]),
            }  # fmt: skip
            self._write(record, "RUNNING", start=now())
            values = _with_defaults(component, {**inputs, iterator.item_input: items[index]})
            node = self._dag(component, values, Scope(item_id, path))
            return self._end(record, node)

        with concurrent.futures.ThreadPoolExecutor(max_workers=min(limit, 64)) as pool:
            nodes = list(pool.map(iteration, range(len(items))))
        failed = [n for n in nodes if n.state != "SUCCEEDED"]
        if failed:
            state = "CANCELLED" if self.cancelled.is_set() else "FAILED"
            return Node(state, error=next((n.error for n in failed if n.error), state.lower()))
        return Node("SUCCEEDED", _collect(component, nodes))

    def _execute(
        self,
        record: dict[str, Any],
        task: TaskSpec,
        component: ComponentSpec,
        inputs: dict[str, Any],
        path: tuple[str, ...],
    ) -> Node:
        spec = self._executors.executors[component.executor_label]
        if spec.HasField("importer"):
            imported = executors.run_importer(component, spec, inputs)
            self._name_imports(imported.outputs)
            return imported
        cache_key: task_cache.TaskKey | None = None
        where = "/".join(path)
        if self.cache is not None and task.caching_options.enable_cache:
            artifacts = {
                n: executors.as_records(v)
                for n, v in inputs.items()
                if n in component.input_definitions.artifacts
            }
            # Every resolved input, as Vertex keys a task: an upstream output used inside a
            # constant (a dict, a list, an f-string) is an undeclared `pipelinechannel--*` one.
            parameters = _parameters(component, inputs, loose=True)
            name = self.spec.pipeline_info.name
            cache_key = task_cache.key(name, component, spec, parameters, artifacts)
            entry = self.cache.get(cache_key.entry)
            if entry is not None:
                print(f"[{where}] cache hit: outputs of an earlier run", flush=True)
                record["cached"] = True
                return Node("SUCCEEDED", _from_entry(component, entry))
            before = self.cache.last(f"{name}/{where}")
            if before is not None:
                what = ", ".join(task_cache.changed(before, cache_key.document)) or "its key"
                print(f"[{where}] not from the cache: {what} changed since it last ran", flush=True)
        task_root = "/".join([self.pipeline_root.rstrip("/"), self.run_id, *path])
        names = executors.Names(
            self.run_id, self.run_id, path[-1], _local(task_root), self.pipeline_root,
            self.workspace, self.job_name,
        )  # fmt: skip
        node = self._with_retries(task, component, spec, inputs, names, path)
        if node.state == "FAILED" and self.cancelled.is_set():  # it ended on the cancel's signal
            return Node("CANCELLED", error="cancelled while it ran")
        if node.state == "SUCCEEDED":
            self._name_artifacts(node.outputs, path)
            if cache_key is not None and self.cache is not None:
                self.cache.put(cache_key.entry, _entry(component, node.outputs))
                self.cache.remember(f"{self.spec.pipeline_info.name}/{where}", cache_key.document)
        return node

    def _name_artifacts(self, outputs: dict[str, Any], path: tuple[str, ...]) -> None:
        """Give each artifact an execution made a resource name of its own, as Vertex's ML
        Metadata does (`.../metadataStores/default/artifacts/ID`). The cache key holds these
        names, so a task downstream of one that ran again runs again too, even where the new
        artifact has the old one's URI (an evaluation that picks the same checkpoint); a cache
        hit hands on the names its entry stored, so what follows it hits as well."""
        prefix = self.job_name.split("/pipelineJobs/")[0] + "/metadataStores/default/artifacts/"
        for output, value in outputs.items():
            for index, artifact in enumerate(value if isinstance(value, list) else [value]):
                if isinstance(artifact, dsl.Artifact):
                    made_by = "/".join([self.run_id, *path, output, str(index)])
                    artifact.name = prefix + hashlib.sha256(made_by.encode()).hexdigest()[:20]

    def _name_imports(self, outputs: dict[str, Any]) -> None:
        """Give an importer's artifact the resource name of that URI and schema in ML Metadata,
        as Vertex's importer finds (or makes) the one artifact of them: recorded so, and keyed
        so, a task downstream reads the same artifact for the same URI and another for another."""
        prefix = self.job_name.split("/pipelineJobs/")[0] + "/metadataStores/default/artifacts/"
        for value in outputs.values():
            for artifact in value if isinstance(value, list) else [value]:
                if isinstance(artifact, dsl.Artifact):
                    imported = f"imported\0{artifact.schema_title}\0{artifact.uri}"
                    artifact.name = prefix + hashlib.sha256(imported.encode()).hexdigest()[:20]

    def _with_retries(
        self,
        task: TaskSpec,
        component: ComponentSpec,
        spec: executors.ExecutorSpec,
        inputs: dict[str, Any],
        names: executors.Names,
        path: tuple[str, ...],
    ) -> Node:
        policy = task.retry_policy
        wait = policy.backoff_duration.ToTimedelta().total_seconds()
        most = policy.backoff_max_duration.ToTimedelta().total_seconds() or 3600.0
        prefix = f"[{'/'.join(path)}] "
        for attempt in range(policy.max_retry_count + 1):
            node = executors.run_container(component, spec, inputs, names, prefix)
            if node.state == "SUCCEEDED" or self.cancelled.is_set():
                return node
            if attempt < policy.max_retry_count:
                print(f"{prefix}failed ({node.error}); retry {attempt + 1}", flush=True)
                if self.cancelled.wait(min(wait, most)):
                    return node
                wait *= policy.backoff_factor or 2.0
        return node

    # -- inputs -------------------------------------------------------------------------------

    def _inputs(self, task: TaskSpec, seen: Seen) -> dict[str, Any]:
        parent, siblings = seen.inputs, seen.ended
        values: dict[str, Any] = {}
        for name, spec in task.inputs.parameters.items():
            kind = spec.WhichOneof("kind")
            if kind == "component_input_parameter":
                if spec.component_input_parameter not in parent:
                    continue
                value = parent[spec.component_input_parameter]
            elif kind == "task_output_parameter":
                producer = siblings.get(spec.task_output_parameter.producer_task)
                key_ = spec.task_output_parameter.output_parameter_key
                if producer is None or key_ not in producer.outputs:
                    continue
                value = producer.outputs[key_]
            elif kind == "runtime_value":
                value = json_format.MessageToDict(spec.runtime_value.constant)
            elif kind == "task_final_status":
                value = self._final_status(spec.task_final_status.producer_task, siblings)
            else:
                continue
            if spec.parameter_expression_selector:
                value = select(spec.parameter_expression_selector, value)
            if value is not None:  # None is an unset optional input: the default applies
                values[name] = value
        for name, spec in task.inputs.artifacts.items():
            kind = spec.WhichOneof("kind")
            if kind == "component_input_artifact":
                if spec.component_input_artifact in parent:
                    values[name] = parent[spec.component_input_artifact]
            elif kind == "task_output_artifact":
                producer = siblings.get(spec.task_output_artifact.producer_task)
                key_ = spec.task_output_artifact.output_artifact_key
                if producer is not None and producer.outputs.get(key_) is not None:
                    values[name] = producer.outputs[key_]
        return values

    def _final_status(self, producer: str, siblings: dict[str, Node]) -> dict[str, Any]:
        node = siblings.get(producer, Node("NOT_TRIGGERED"))
        state = {"NOT_TRIGGERED": "FAILED"}.get(node.state, node.state)
        status: dict[str, Any] = {
            "state": state,
            "pipelineJobResourceName": self.job_name,
            "pipelineTaskName": producer,
        }
        if state != "SUCCEEDED":
            status["error"] = {"code": 9 if state == "FAILED" else 1, "message": node.error}
        return status

    # -- records ------------------------------------------------------------------------------

    def _write(self, record: dict[str, Any], state: str, **fields: Any) -> None:
        record.update(fields, state=state)
        self.journal.write(record)

    def _end(self, record: dict[str, Any], node: Node, **fields: Any) -> Node:
        params = {k: v for k, v in node.outputs.items() if not _is_artifact(v)}
        artifacts = {k: executors.as_records(v) for k, v in node.outputs.items() if _is_artifact(v)}
        self._write(
            record, node.state, end=now(), error=node.error, outputs=_jsonable(params),
            artifacts=artifacts, **fields,
        )  # fmt: skip
        return node

    def _fail(self, record: dict[str, Any], node: Node) -> Node:
        message = f"task {record['path'] or record['name']} failed: {node.error}"
        with self._lock:
            self.failures.append(message)
        return self._end(record, Node("FAILED", node.outputs, message))


# -- helpers -------------------------------------------------------------------------------------


def _upstream(task: TaskSpec) -> set[str]:
    """The sibling tasks `task` waits for: `.after()` and the producers of its inputs."""
    found = set(task.dependent_tasks)
    for spec in task.inputs.parameters.values():
        if spec.HasField("task_output_parameter"):
            found.add(spec.task_output_parameter.producer_task)
        if spec.HasField("task_final_status"):
            found.add(spec.task_final_status.producer_task)
    for art in task.inputs.artifacts.values():
        if art.HasField("task_output_artifact"):
            found.add(art.task_output_artifact.producer_task)
    return found


def _is_loop(task: TaskSpec) -> bool:
    return task.HasField("parameter_iterator") or task.HasField("artifact_iterator")


def _with_defaults(component: ComponentSpec, values: dict[str, Any]) -> dict[str, Any]:
    """`values` plus the defaults of the component's parameters that have none."""
    filled = dict(values)
    for name, spec in component.input_definitions.parameters.items():
        if name not in filled and spec.HasField("default_value"):
            default = json_format.MessageToDict(spec.default_value)
            if default is not None:  # an optional input left unset stays absent
                filled[name] = default
    return filled


def _parameters(
    component: ComponentSpec, values: dict[str, Any], loose: bool = False
) -> dict[str, Any]:
    """The parameter values among `values` (with `loose`, every non-artifact value: a
    condition reads channels the component does not declare)."""
    declared = component.input_definitions.parameters
    return {
        k: v
        for k, v in values.items()
        if (k in declared or (loose and k not in component.input_definitions.artifacts))
        and not _is_artifact(v)
    }


def _dag_outputs(
    component: ComponentSpec, tasks: dict[str, TaskSpec], ended: dict[str, Node]
) -> dict[str, Any]:
    """A DAG's outputs, read from its tasks by its output selectors."""
    outputs: dict[str, Any] = {}
    for name, spec in component.dag.outputs.parameters.items():
        if spec.HasField("value_from_parameter"):
            selectors = [spec.value_from_parameter]
        else:
            selectors = list(spec.value_from_oneof.parameter_selectors)
        for selector in selectors:
            node = ended.get(selector.producer_subtask)
            if node is not None and selector.output_parameter_key in node.outputs:
                outputs[name] = node.outputs[selector.output_parameter_key]
                break
    for name, art in component.dag.outputs.artifacts.items():
        for art_selector in art.artifact_selectors:
            node = ended.get(art_selector.producer_subtask)
            if node is not None and node.outputs.get(art_selector.output_artifact_key):
                outputs[name] = node.outputs[art_selector.output_artifact_key]
                break
    return outputs


def _collect(component: ComponentSpec, iterations: list[Node]) -> dict[str, Any]:
    """A loop's outputs: each output's values over the iterations, as one list (a list of lists
    of parameters over nested loops, as `dsl.Collected` gives them on Vertex)."""
    collected: dict[str, Any] = {
        name: [n.outputs[name] for n in iterations if name in n.outputs]
        for name in component.output_definitions.parameters
    }
    for name in component.output_definitions.artifacts:  # an artifact list is always flat
        values = [n.outputs[name] for n in iterations if name in n.outputs]
        collected[name] = [a for v in values for a in (v if isinstance(v, list) else [v])]
    return collected


def _entry(component: ComponentSpec, outputs: dict[str, Any]) -> dict[str, Any]:
    params = {k: v for k, v in outputs.items() if k in component.output_definitions.parameters}
    artifacts = {
        k: executors.as_records(v)
        for k, v in outputs.items()
        if k in component.output_definitions.artifacts
    }
    return {"parameters": params, "artifacts": artifacts, "created": time.time()}


def _from_entry(component: ComponentSpec, entry: dict[str, Any]) -> dict[str, Any]:
    outputs = dict(entry.get("parameters", {}))
    for name, records in entry.get("artifacts", {}).items():
        declared = component.output_definitions.artifacts.get(name)
        outputs[name] = executors.from_records(
            records, bool(declared and declared.is_artifact_list)
        )
    return outputs


def _is_artifact(value: Any) -> bool:
    if isinstance(value, list):
        return bool(value) and all(isinstance(v, dsl.Artifact) for v in value)
    return isinstance(value, dsl.Artifact)


def _jsonable(value: Any) -> Any:
    """`value` with artifacts as their records, for the journal."""
    if _is_artifact(value):
        return executors.as_records(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _local(uri: str) -> str:
    """A task root as a path on this machine (a gs:// one under the storage root)."""
    return str(storage.local_path(uri)) if storage.is_gcs_uri(uri) else os.fspath(uri)
