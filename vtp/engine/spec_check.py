"""A compiled pipeline's structure, checked as the engine reads it, before anything is stored or
started: the one check behind the local service's pipelineJobs and schedules (REST and gRPC),
and `vtp run` / `vtp submit --local --from-job`.

The spec arrives as JSON (a `google.protobuf.Struct` in a PipelineJob, or a file) and is read
twice: as a dict by the service's own checks (`check_runnable`, the parameters' types, the
pipeline root) and as kfp's `PipelineSpec` protobuf by the engine. A value of the wrong type
made the first raise AttributeError or TypeError (a 500, or "internal error" from the CLI), and
the second fail inside the run, so every check here names the field, as a JSON path under
`where` (`pipelineJob.pipelineSpec.deploymentSpec.executors.exec-x.container.command`):

- **Types**: every field, at every depth, against kfp's own descriptors (`PipelineSpec`, and
  `PipelineDeploymentConfig` for `deploymentSpec`, a Struct in the spec that the engine parses
  apart), by `vtp.vertex.protodict` with its PIPELINE rules: unknown fields are skipped as the
  engine skips them; a null where the proto has an object, a list or a scalar is refused, and
  so is a field written with its proto name, which the engine would read and the dict readers
  would not (their checks would be passed by).
- **What the engine looks up**: `pipelineInfo.name` and `root`; each task's
  `componentRef.name` among `components`, its `dependentTasks` and producers among the tasks of
  its DAG, each DAG output's producer among them too; each component a DAG or an
  `executorLabel` naming an executor, each executor one the engine runs (a container with
  something to run, or an importer whose URI is a string); a loop's `raw` items a JSON list.
- **No runaway nesting**: a component that runs inside itself (a cycle of `componentRef`s)
  recursed until the worker died; DAGs may nest MAX_DAG_DEPTH deep.
- **Parameter types**: a parameter's `defaultValue`, and a task's constant for a parameter its
  component declares, fit its `parameterType` (PARAMETER_TYPES, which the run's own values are
  checked against too: `vtp.local.pipeline_jobs.spec.typed`).

`SpecError` (a ValueError whose `path` is the field) is what every caller turns into its own
kind of refusal: INVALID_ARGUMENT, or the CLI's one-line usage error (exit 2).
"""

import json
from collections.abc import Mapping
from typing import Any

from vtp.vertex.protodict import PIPELINE, SpecError, check, join

PARAMETER_TYPES: dict[str, tuple[type[Any], ...]] = {
    "STRING": (str,),
    "NUMBER_INTEGER": (int, float),
    "NUMBER_DOUBLE": (int, float),
    "BOOLEAN": (bool,),
    "LIST": (list,),
    "STRUCT": (dict,),
}
"""The JSON values each `parameterType` takes (JSON numbers are doubles: an integer is a whole
one; a bool is never a number). Types not listed (TASK_FINAL_STATUS, ...) take any value."""
MAX_DAG_DEPTH = 100
"""How deep DAG components may nest (kfp's own pipelines nest a few levels)."""
_RUNNABLE = ("container", "importer")
"""The executors the engine runs (`vtp.engine.dag.Engine._execute`)."""


def check_pipeline_spec(spec: Any, where: str) -> None:
    """Raise SpecError, naming the field under `where`, unless `spec` is a compiled pipeline
    the engine can read: the types of every field, what it looks up, its nesting."""
    from kfp.pipeline_spec import pipeline_spec_pb2  # lazily: kfp's package takes seconds

    check(pipeline_spec_pb2.PipelineSpec.DESCRIPTOR, spec, where, rules=PIPELINE)
    _check_required(spec, where)
    deployment = spec.get("deploymentSpec", {})
    deployment_where = join(where, "deploymentSpec")
    descriptor = pipeline_spec_pb2.PipelineDeploymentConfig.DESCRIPTOR
    check(descriptor, deployment, deployment_where, rules=PIPELINE)
    pipeline = _Pipeline(spec, where)
    pipeline.check_component(spec["root"], join(where, "root"))
    for name, component in pipeline.components.items():
        pipeline.check_component(component, join(join(where, "components"), name))
    pipeline.check_nesting()


def _check_required(spec: Mapping[str, Any], where: str) -> None:
    """The parts every run reads: the pipeline's name and its root component."""
    if not spec.get("pipelineInfo", {}).get("name"):
        raise SpecError(join(where, "pipelineInfo.name"), "is required: the pipeline's name")
    if "root" not in spec:
        raise SpecError(join(where, "root"), "is required: the pipeline's root component")


class _Pipeline:
    """A type-checked spec's components and executors, and the checks that look them up."""

    def __init__(self, spec: Mapping[str, Any], where: str) -> None:
        self.spec, self.where = spec, where
        self.components: Mapping[str, Any] = spec.get("components", {})
        self.executors: Mapping[str, Any] = spec.get("deploymentSpec", {}).get("executors", {})
        self.executors_at = join(join(where, "deploymentSpec"), "executors")

    def check_component(self, component: Mapping[str, Any], at: str) -> None:
        """One component: its implementation, its parameters' defaults, its DAG's tasks."""
        _check_defaults(component, at)
        if "dag" in component:
            self._check_dag(component["dag"], join(at, "dag"))
        elif component.get("executorLabel"):
            self._check_executor(component["executorLabel"], join(at, "executorLabel"))
        elif at != join(self.where, "root"):  # a root without a DAG runs nothing
            raise SpecError(at, "needs a dag or an executorLabel (kfp's compiler writes one)")

    def _check_executor(self, label: str, at: str) -> None:
        if label not in self.executors:
            raise SpecError(at, f"{label!r} names no executor of {self.executors_at}")
        executor, executor_at = self.executors[label], join(self.executors_at, label)
        kinds = [kind for kind in executor if kind in _RUNNABLE]
        if not kinds:
            raise SpecError(
                executor_at, "has no container or importer (the executors the local engine runs)"
            )
        if kinds[0] == "container":
            container = executor["container"]
            if not [*container.get("command", []), *container.get("args", [])]:
                raise SpecError(join(executor_at, "container"), "has no command or args to run")
        else:
            uri = executor["importer"].get("artifactUri", {})
            if "constant" in uri and not isinstance(uri["constant"], str):
                where = join(executor_at, "importer.artifactUri.constant")
                raise SpecError(where, f"expected a string (a URI), got {_kind(uri['constant'])}")

    def _check_dag(self, dag: Mapping[str, Any], at: str) -> None:
        tasks: Mapping[str, Any] = dag.get("tasks", {})
        for name, task in tasks.items():
            self._check_task(task, tasks, join(join(at, "tasks"), name))
        outputs = dag.get("outputs", {})
        for name, output in outputs.get("parameters", {}).items():
            output_at = join(join(at, "outputs.parameters"), name)
            if "valueFromParameter" in output:
                selector = output["valueFromParameter"]
                _check_sibling(
                    selector, "producerSubtask", tasks, join(output_at, "valueFromParameter")
                )
            selectors = output.get("valueFromOneof", {}).get("parameterSelectors", [])
            for index, selector in enumerate(selectors):
                selector_at = join(join(output_at, "valueFromOneof.parameterSelectors"), index)
                _check_sibling(selector, "producerSubtask", tasks, selector_at)
        for name, output in outputs.get("artifacts", {}).items():
            output_at = join(join(join(at, "outputs.artifacts"), name), "artifactSelectors")
            for index, selector in enumerate(output.get("artifactSelectors", [])):
                _check_sibling(selector, "producerSubtask", tasks, join(output_at, index))

    def _check_task(self, task: Mapping[str, Any], tasks: Mapping[str, Any], at: str) -> None:
        name = task.get("componentRef", {}).get("name")
        ref_at = join(at, "componentRef.name")
        if not name:
            raise SpecError(ref_at, "is required: the component the task runs")
        if name not in self.components:
            raise SpecError(ref_at, f"{name!r} names no component of {self.where}.components")
        for index, upstream in enumerate(task.get("dependentTasks", [])):
            if upstream not in tasks:
                raise SpecError(join(join(at, "dependentTasks"), index), _no_task(upstream))
        declared = self.components[name].get("inputDefinitions", {}).get("parameters", {})
        inputs = task.get("inputs", {})
        for input_name, value in inputs.get("parameters", {}).items():
            input_at = join(join(at, "inputs.parameters"), input_name)
            for kind in ("taskOutputParameter", "taskFinalStatus"):
                if kind in value:
                    _check_sibling(value[kind], "producerTask", tasks, join(input_at, kind))
            if input_name in declared and "constant" in value.get("runtimeValue", {}):
                constant_at = join(input_at, "runtimeValue.constant")
                _check_value(declared[input_name], value["runtimeValue"]["constant"], constant_at)
        for input_name, value in inputs.get("artifacts", {}).items():
            if "taskOutputArtifact" in value:
                input_at = join(
                    join(join(at, "inputs.artifacts"), input_name), "taskOutputArtifact"
                )
                _check_sibling(value["taskOutputArtifact"], "producerTask", tasks, input_at)
        raw = task.get("parameterIterator", {}).get("items", {}).get("raw")
        if raw is not None and not _is_json_list(raw):
            raise SpecError(join(at, "parameterIterator.items.raw"), "expected a JSON list")

    def check_nesting(self) -> None:
        """SpecError unless the DAGs end: no component runs inside itself (a cycle of
        `componentRef`s, which recursed until the worker died), none nests more than
        MAX_DAG_DEPTH DAGs. Each component is measured once (a DAG whose tasks share a
        sub-DAG is no more work), without recursion (a long chain cannot overflow the stack)."""
        depth: dict[str, int] = {}
        root = self._children(self.spec["root"], join(self.where, "root"))
        stack: list[tuple[str, list[tuple[str, str]]]] = [("", root)]
        on_path: set[str] = set()
        while stack:
            name, pending = stack[-1]
            if pending:
                child, ref_at = pending.pop()
                if child in on_path:
                    raise SpecError(ref_at, f"{child!r} runs inside itself (a cycle of components)")
                if child not in depth:
                    on_path.add(child)
                    at = join(join(self.where, "components"), child)
                    stack.append((child, self._children(self.components[child], at)))
                continue
            stack.pop()
            if not name:
                continue
            on_path.discard(name)
            component = self.components[name]
            inner = [depth[c] for c in self._component_names(component)]
            depth[name] = 1 + max(inner, default=0) if "dag" in component else 0
            if depth[name] > MAX_DAG_DEPTH:
                at = join(join(self.where, "components"), name)
                raise SpecError(at, f"nests DAGs more than {MAX_DAG_DEPTH} deep")

    def _children(self, component: Mapping[str, Any], at: str) -> list[tuple[str, str]]:
        """(component name, where its task names it) for each task of `component`'s DAG."""
        tasks = component.get("dag", {}).get("tasks", {})
        return [
            (
                task["componentRef"]["name"],
                join(join(join(at, "dag.tasks"), name), "componentRef.name"),
            )
            for name, task in tasks.items()
        ]

    def _component_names(self, component: Mapping[str, Any]) -> list[str]:
        tasks = component.get("dag", {}).get("tasks", {})
        return [task["componentRef"]["name"] for task in tasks.values()]


def _check_defaults(component: Mapping[str, Any], at: str) -> None:
    """Each input parameter's default fits its type."""
    parameters = component.get("inputDefinitions", {}).get("parameters", {})
    for name, declaration in parameters.items():
        if "defaultValue" in declaration:
            where = join(join(join(at, "inputDefinitions.parameters"), name), "defaultValue")
            _check_value(declaration, declaration["defaultValue"], where)


def parameter_type(declaration: Mapping[str, Any], missing: str = "") -> str:
    """A parameter's `parameterType` by name (JSON may give an enum by its number); `missing`
    when it has none ("": any value fits; the service's run values take STRING, as before)."""
    kind = declaration.get("parameterType", missing)
    if isinstance(kind, int) and not isinstance(kind, bool):
        from kfp.pipeline_spec import pipeline_spec_pb2

        enum = pipeline_spec_pb2.ParameterType.ParameterTypeEnum
        return str(enum.Name(kind)) if kind in enum.values() else str(kind)
    return str(kind)


def fits(kind: str, value: Any) -> bool:
    """Whether a JSON `value` is one a parameter of type `kind` takes (PARAMETER_TYPES)."""
    allowed = PARAMETER_TYPES.get(kind, (object,))
    return isinstance(value, allowed) and not (isinstance(value, bool) and kind != "BOOLEAN")


def _check_value(declaration: Mapping[str, Any], value: Any, at: str) -> None:
    """SpecError unless `value` (null: unset) fits the declared `parameterType`."""
    kind = parameter_type(declaration)
    if value is not None and not fits(kind, value):
        raise SpecError(at, f"expected a {kind} value, got {_kind(value)}")


def _check_sibling(
    selector: Mapping[str, Any], key: str, tasks: Mapping[str, Any], at: str
) -> None:
    producer = selector.get(key, "")
    if producer not in tasks:
        raise SpecError(join(at, key), _no_task(producer))


def _no_task(name: str) -> str:
    return f"{name!r} names no task of this DAG"


def _is_json_list(raw: str) -> bool:
    try:
        return isinstance(json.loads(raw), list)
    except (ValueError, RecursionError):
        return False


def _kind(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"
