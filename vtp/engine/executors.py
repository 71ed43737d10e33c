"""One executor task of a run: a container (a lightweight Python component, or GCPC's) or an
importer, given its component spec, executor spec and resolved inputs.

kfp.local's utilities build what Vertex's driver builds: the executor input (`{{$}}`), the
command with its placeholders resolved (Vertex's own too, `vertex_tasks.py`), and the outputs
read back from the executor output file. The process is forked from the warm fork server when it
can be (`fork_tasks.py`) and its lines go to the run's log, each prefixed with the task.
"""

import json
import os
import re
import shlex
import shutil
import sys
import sysconfig
from collections import deque
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from google.protobuf import json_format
from kfp import dsl
from kfp.dsl import executor as kfp_executor
from kfp.local import executor_input_utils, executor_output_utils
from kfp.pipeline_spec import pipeline_spec_pb2

from vtp import containers, storage
from vtp.engine import (
    fork_tasks,
    job_lines,
    output_paths,
    task_commands,
    task_containers,
    task_output,
    vertex_tasks,
)
from vtp.vertex.local_auth import STARTUP_HOOK_DIR

# kfp's protobuf classes carry no type information: the aliases name what a value is.
ComponentSpec: TypeAlias = Any  # pipeline_spec_pb2.ComponentSpec
ExecutorSpec: TypeAlias = Any  # pipeline_spec_pb2.PipelineDeploymentConfig.ExecutorSpec


@dataclass
class Node:
    """How a task (an execution, or a DAG of them) ended: its state (SUCCEEDED, FAILED,
    SKIPPED, CANCELLED, NOT_TRIGGERED), its outputs (parameters as Python values, artifacts as
    `dsl.Artifact`s or lists of them) and the cause of a failure."""

    state: str
    outputs: dict[str, Any] = field(default_factory=dict)
    error: str = ""


@dataclass(frozen=True)
class Names:
    """What Vertex's placeholders name: the run and the task."""

    run_id: str
    pipeline_name: str
    task_name: str
    task_root: str
    pipeline_root: str
    workspace: str = ""
    """The run's workspace folder (KFP's `dsl.WORKSPACE_PATH_PLACEHOLDER`), "" for none."""
    job_name: str = ""
    """The run's PipelineJob resource name, which a task in its image has the credential of."""


def run_container(
    component: ComponentSpec,
    executor: ExecutorSpec,
    arguments: dict[str, Any],
    names: Names,
    log_prefix: str,
) -> Node:
    """Run the container executor's command on this machine with `arguments`."""
    executor_input = executor_input_utils.construct_executor_input(
        component_spec=component,
        arguments=arguments,
        task_root=names.task_root,
        block_input_artifact=False,
    )
    values = executor_input.inputs.parameter_values
    for name in [n for n, v in values.items() if v.WhichOneof("kind") in (None, "null_value")]:
        del values[name]  # an optional input left unset: the function's own default applies
    container = executor.container
    as_dict = _integers_kept(
        executor_input_utils.executor_input_to_dict(executor_input, component),
        arguments,
        component,
    )

    engine = containers.engine_from(os.environ)
    in_image = task_containers.runs_in_image([*container.command, *container.args], engine)

    def resolved(parts: list[str]) -> list[str]:
        return vertex_tasks.resolve_command(
            parts,
            workspace=task_containers.WORKSPACE_MOUNT if in_image else names.workspace,
            executor_input_dict=as_dict,
            pipeline_resource_name=names.pipeline_name,
            task_resource_name=names.task_name,
            pipeline_root=names.pipeline_root,
            unique_pipeline_id=names.run_id,
        )

    spec_env = {e.name: e.value for e in container.env}
    os.makedirs(names.task_root, exist_ok=True)
    process: AbstractContextManager[fork_tasks.ForkedTask | fork_tasks.FreshTask]
    if in_image:
        process = task_containers.task_process(
            engine, container.image, resolved(list(container.command)),
            resolved(list(container.args)), spec_env, names.task_root, names.task_name,
            names.job_name or names.run_id, names.workspace,
        )  # fmt: skip
    else:
        command = resolved(this_python(list(container.command)) + list(container.args))
        try:
            task_commands.check_installs(command)
        except task_commands.UnusableInstall as exc:
            return Node("FAILED", error=str(exc))
        followed = {job_lines.FOLLOWED_ENV: "1"}
        env = {**os.environ, **_own_packages(names.task_root), **followed, **spec_env}
        process = fork_tasks.task_process(command, env)
    resources = executor_input.outputs.parameters.get("gcp_resources")
    with job_lines.following(resources.output_file if resources else "", log_prefix):
        code, tail = _run(process, log_prefix)
    if code != 0:
        cause = next((line for line in reversed(tail) if line.strip()), "")
        how = f"exit status {code}" if code > 0 else f"signal {-code}"
        return Node("FAILED", error=f"{cause} ({how})" if cause else how)
    try:
        root = output_paths.checked_root(names.task_root)  # before anything of it is read
        _upload_custom_paths(executor_input, root, in_image)
        outputs = executor_output_utils.get_outputs_for_task(executor_input, component)
    except (OSError, ValueError, KeyError) as exc:
        return Node("FAILED", error=f"cannot read its outputs: {exc}")
    outputs = _with_declared_artifacts(outputs, executor_input, component)
    return Node("SUCCEEDED", _typed_as_declared(outputs, component))


def _integers_kept(
    executor_input: dict[str, Any], arguments: dict[str, Any], component: ComponentSpec
) -> dict[str, Any]:
    """The executor input with each undeclared parameter whose argument is an `int` an int again.

    kfp.local builds the executor input through protobuf, where every number is a double, and
    types back only the parameters the component declares. The pipeline channels kfp adds for
    a value put inside a constant (`parameters={"epochs": epochs}`, `f"--epochs={epochs}"`)
    are not declared, so `epochs` would be written `2.0` there, which an `int` flag refuses;
    Vertex writes `2`.
    """
    declared = component.input_definitions.parameters
    inputs = executor_input.get("inputs", {})
    values = dict(inputs.get("parameterValues", {}))
    for name, value in values.items():
        given = arguments.get(name)
        is_int = isinstance(given, int) and not isinstance(given, bool)
        if is_int and isinstance(value, float) and name not in declared:
            values[name] = given
    return {**executor_input, "inputs": {**inputs, "parameterValues": values}}


_PYTHON3 = re.compile(r"(?<![\w./-])python3(?![\w.-])")


def this_python(command: list[str]) -> list[str]:
    """`command` (the container's, before its placeholders are filled) with each `python3`
    word made this interpreter, as the image's own would be, not whatever PATH finds first;
    inside a shell script it is quoted. Arguments, values and the component's own source code
    (which follows kfp's script) are never touched."""
    quoted = shlex.quote(sys.executable)
    made, user_code = [], -1
    for index, part in enumerate(command):
        if user_code < 0 and '"$program_path/ephemeral_component.py"' in part and '"$@"' in part:
            user_code = index + 1  # the component's own source comes next: never rewritten
        if index == user_code:
            made.append(part)  # (a notebook component names its Jupyter kernel "python3")
        else:
            made.append(
                sys.executable if part == "python3" else _PYTHON3.sub(lambda _: quoted, part)
            )
    return made


def _own_packages(task_root: str) -> dict[str, str]:
    """What a task's `pip install` (kfp's `packages_to_install` prelude, or its own) installs
    into: a prefix of the task's, its site-packages first on the import path, never the service's
    environment (on Vertex each task is a fresh container).

    A prefix, not `PIP_TARGET`: pip's build isolation, for a package built from source, runs
    `pip install --prefix` with the task's environment, and refuses a target beside it ("Cannot
    set --home and --prefix together"). `PIP_IGNORE_INSTALLED` makes it install what is asked
    into the prefix even where the service's environment has another version, which it would
    otherwise uninstall there."""
    folder = os.path.join(task_root, ".packages")
    where = {"base": folder, "platbase": folder}
    sites = [sysconfig.get_path(kind, "posix_prefix", where) for kind in ("purelib", "platlib")]
    path = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    hook = [p for p in path if p == str(STARTUP_HOOK_DIR)][:1]  # the start-up hook stays first
    rest = [p for p in path if p and p not in hook]
    return {
        "PIP_PREFIX": folder,
        "PIP_IGNORE_INSTALLED": "1",
        "PYTHONPATH": os.pathsep.join([*hook, *dict.fromkeys(sites), *rest]),
    }


def _upload_custom_paths(executor_input: Any, root: Path, in_image: bool) -> None:
    """Copy each output artifact the task wrote at a path of its own (`artifact.custom_path`)
    to the artifact's URI, as the KFP launcher uploads it: a path inside the task's output
    folder `root`, to a URI the engine gave that output (`output_paths`); ValueError else."""
    try:
        with open(executor_input.outputs.output_file) as f:
            written = json.load(f)
    except FileNotFoundError:
        return
    given = output_paths.allowed_uris(executor_input)
    for name, artifact_list in (written.get("artifacts") or {}).items():
        for artifact in artifact_list.get("artifacts", []):
            source = artifact.get("custom_path")
            if not source:
                continue
            uri = output_paths.host_view(artifact.get("uri", ""), in_image)
            if uri not in given.get(name, set()):
                raise ValueError(f"output {name}: {uri!r} is not a URI the task was given")
            path = output_paths.custom_source(source, root, in_image)
            if not path.exists():
                continue
            target = storage.local_path(uri) if storage.is_gcs_uri(uri) else Path(uri)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                shutil.copytree(path, target, dirs_exist_ok=True)  # no links: checked_root
            else:
                shutil.copyfile(path, target)


def run_importer(
    component: ComponentSpec, executor: ExecutorSpec, arguments: dict[str, Any]
) -> Node:
    """An importer's one output, `artifact`: the URI it names (a constant or an input
    parameter), with its type and metadata. Nothing is copied, as on Vertex."""
    importer = executor.importer
    if importer.artifact_uri.HasField("runtime_parameter"):
        uri = arguments.get(importer.artifact_uri.runtime_parameter)
    else:
        uri = importer.artifact_uri.constant.string_value
    if not uri:
        return Node("FAILED", error="the importer has no artifact URI")
    metadata = _resolve_metadata(json_format.MessageToDict(importer.metadata), arguments)
    artifact = kfp_executor.create_artifact_instance(
        {
            "name": "artifact",
            "uri": str(uri),
            "type": json_format.MessageToDict(importer.type_schema),
            "metadata": metadata,
        }
    )
    return Node("SUCCEEDED", _typed_as_declared({"artifact": artifact}, component))


def _resolve_metadata(metadata: Any, arguments: dict[str, Any]) -> Any:
    """Importer metadata with `{{$.inputs.parameters['x']}}` values put in."""
    if isinstance(metadata, dict):
        return {
            _resolve_metadata(k, arguments): _resolve_metadata(v, arguments)
            for k, v in metadata.items()
        }
    if isinstance(metadata, list):
        return [_resolve_metadata(v, arguments) for v in metadata]
    if isinstance(metadata, str) and metadata.startswith("{{$.inputs.parameters['"):
        return arguments.get(metadata[len("{{$.inputs.parameters['") : -len("']}}")], metadata)
    return metadata


def _with_declared_artifacts(
    outputs: dict[str, Any],
    executor_input: pipeline_spec_pb2.ExecutorInput,
    component: ComponentSpec,
) -> dict[str, Any]:
    """The outputs, plus every declared output artifact the executor output file left out (a
    component that writes no executor output file still made its artifacts at their URIs)."""
    for name in component.output_definitions.artifacts:
        if name in outputs:
            continue
        runtime = executor_input.outputs.artifacts[name]
        artifacts = [
            executor_output_utils.runtime_artifact_to_dsl_artifact(a) for a in runtime.artifacts
        ]
        declared = component.output_definitions.artifacts[name]
        outputs[name] = artifacts if declared.is_artifact_list else artifacts[0]
    return outputs


def _typed_as_declared(outputs: dict[str, Any], component: ComponentSpec) -> dict[str, Any]:
    """Each output artifact with the type its component declares, as Vertex records it: kfp
    makes a type it has no class for (GCPC's `google.VertexModel`) a plain `system.Artifact`."""
    for name, declared in component.output_definitions.artifacts.items():
        value = outputs.get(name)
        for artifact in value if isinstance(value, list) else [value]:
            title = declared.artifact_type.schema_title
            if isinstance(artifact, dsl.Artifact) and title and artifact.schema_title != title:
                artifact.schema_title = title
                artifact.schema_version = declared.artifact_type.schema_version
    return outputs


def _run(
    started: AbstractContextManager[fork_tasks.ForkedTask | fork_tasks.FreshTask], prefix: str
) -> tuple[int, list[str]]:
    """Run the task's process; print its lines with `prefix`; its status and last lines."""
    tail: deque[str] = deque(maxlen=task_output.TAIL_LINES)
    with started as process:
        for line in task_output.readable(process.lines):
            text = task_output.plain(line.rstrip("\n"))
            tail.append(task_output.executor_line(text))
            print(f"{prefix}{text}", flush=True)
        return process.wait(), list(tail)


def as_records(value: Any) -> list[dict[str, Any]]:
    """An artifact output (one or a list) as JSON records: uri, metadata, schema, name."""
    items = value if isinstance(value, list) else [value]
    return [
        {
            "name": a.name,
            "uri": a.uri,
            "metadata": dict(a.metadata or {}),
            "schema": a.schema_title,
            "schema_version": a.schema_version,
        }
        for a in items
        if isinstance(a, dsl.Artifact)
    ]


def from_records(records: list[dict[str, Any]], is_list: bool) -> Any:
    """Artifacts back from `as_records`."""
    artifacts = []
    for r in records:
        schema = {
            "schemaTitle": r.get("schema", "system.Artifact"),
            "schemaVersion": r.get("schema_version", "0.0.1"),
        }
        artifact = kfp_executor.create_artifact_instance(
            {"name": r.get("name", ""), "uri": r["uri"], "metadata": r.get("metadata", {}),
             "type": schema}
        )  # fmt: skip
        # kfp makes a type it has no class for (GCPC's) a plain system.Artifact: keep the title
        artifact.schema_title = schema["schemaTitle"]
        artifact.schema_version = schema["schemaVersion"]
        artifacts.append(artifact)
    return artifacts if is_list else (artifacts[0] if artifacts else None)
