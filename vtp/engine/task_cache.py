"""One task's cache key, and what changed when an earlier run of the task does not match.

`key` builds KFP's cache key of the execution (`cache.cache_key`) from the task's resolved
inputs and its component's executor, adds the container's environment (which decides outputs,
though KFP's key leaves it out), and scopes the fingerprint to the pipeline's name, as KFP's
lookup (`GetExecutionCache(fingerprint, "pipeline/" + name, ...)`) does. `changed` names the
parts of two keys that differ, for the line a miss prints when the same task ran before.
"""

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from kfp.pipeline_spec import pipeline_spec_pb2

from vtp.engine.cache import cache_key, fingerprint

_PARAMETER_TYPES = pipeline_spec_pb2.ParameterType.ParameterTypeEnum


@dataclass(frozen=True)
class TaskKey:
    """The entry a task's outputs are kept under, and the key document it was made from."""

    entry: str
    document: dict[str, Any]


def key(
    pipeline_name: str,
    component: pipeline_spec_pb2.ComponentSpec,
    executor: pipeline_spec_pb2.PipelineDeploymentConfig.ExecutorSpec,
    parameters: Mapping[str, Any],
    artifacts: Mapping[str, list[dict[str, Any]]],
) -> TaskKey:
    """The key of running `executor` for `component` with resolved input `parameters` (every
    one, `pipelinechannel--*` included) and input `artifacts` (journal records)."""
    container = executor.container
    outputs = {}
    for name, spec in component.output_definitions.artifacts.items():
        output = {"name": name, "type": json_format.MessageToDict(spec.artifact_type)}
        if spec.HasField("metadata"):
            output["metadata"] = json_format.MessageToDict(spec.metadata)
        outputs[name] = output
    types = {
        name: _PARAMETER_TYPES.Name(spec.parameter_type)
        for name, spec in component.output_definitions.parameters.items()
    }
    names = {name: [artifact_id(a) for a in records] for name, records in artifacts.items()}
    document = cache_key(
        parameters, names, outputs, types, [*container.command, *container.args], container.image
    )
    env = {variable.name: variable.value for variable in container.env}
    if env:  # beyond KFP's key: the environment decides the outputs as much as the arguments
        document["containerSpec"]["env"] = env
    scoped = f"pipeline/{pipeline_name}\0{fingerprint(document)}"
    return TaskKey(hashlib.sha256(scoped.encode()).hexdigest(), document)


def artifact_id(record: Mapping[str, Any]) -> str:
    """How the key names an input artifact: its ML Metadata resource name (which the engine
    gives every artifact an execution makes or an importer imports), else its URI."""
    name = str(record.get("name", ""))
    return name if "/artifacts/" in name else f"uri:{record.get('uri', '')}"


def changed(before: Mapping[str, Any], after: Mapping[str, Any], at: str = "") -> list[str]:
    """The paths (`inputParameterValues.n`, `containerSpec.cmdArgs`) where key `after`
    differs from `before`, to the first level inside each of the key's maps."""
    found = []
    for part in sorted(set(before) | set(after)):
        path = f"{at}.{part}" if at else part
        old, new = before.get(part), after.get(part)
        if old == new:
            continue
        if not at and isinstance(old, Mapping) and isinstance(new, Mapping):
            found += changed(old, new, path)
        else:
            found.append(path)
    return found
