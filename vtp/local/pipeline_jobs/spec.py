"""What a PipelineJob request must hold to run, and the arguments its run gets (pure functions).

Vertex checks a PipelineJob when it is created: the compiled spec must be there, every required
pipeline parameter must have a value, no value may name a parameter the pipeline lacks, and each
value must fit its parameter's type. The same checks run here, before anything starts, with the
field paths in the messages. Values arrive as `google.protobuf.Value`s, so numbers are doubles:
an integer parameter takes a whole number and becomes an `int` again for kfp.
"""

import re
from pathlib import Path
from typing import Any

from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp import storage
from vtp.local.base import errors

JOB_ID = re.compile(r"[a-z][-a-z0-9]{0,127}")
"""Valid `pipelineJobId`s (Vertex: under 128 characters of [a-z0-9-], starting with a letter)."""

_RUNTIME = "pipelineJob.runtimeConfig"
_TYPES: dict[str, tuple[type[Any], ...]] = {
    "STRING": (str,),
    "NUMBER_INTEGER": (int, float),
    "NUMBER_DOUBLE": (int, float),
    "BOOLEAN": (bool,),
    "LIST": (list,),
    "STRUCT": (dict,),
}


def pipeline_spec(job: aiplatform_v1.PipelineJob) -> dict[str, Any]:
    """The compiled pipeline (`pipelineSpec`) as a dict; raise INVALID_ARGUMENT without one."""
    spec = json_format.MessageToDict(job._pb.pipeline_spec) if "pipeline_spec" in job else {}
    _check_shape(spec)
    if not spec.get("root") or not spec.get("pipelineInfo", {}).get("name"):
        raise errors.invalid_argument(
            "pipelineJob.pipelineSpec is required: the compiled pipeline (KFP IR YAML as JSON), "
            "with pipelineInfo.name and root."
        )
    return spec


def pipeline_root(job: aiplatform_v1.PipelineJob, spec: dict[str, Any], storage_root: Path) -> str:
    """The `gs://` root of the run's outputs: gcsOutputDirectory, else the spec's default;
    INVALID_ARGUMENT unless it maps inside `storage_root`, symbolic links resolved (a replica
    can plant a link in the root, and the run writes everything under this folder)."""
    root = job.runtime_config.gcs_output_directory or spec.get("defaultPipelineRoot", "")
    if not root:
        raise errors.invalid_argument(
            f"{_RUNTIME}.gcsOutputDirectory is required (the pipeline root, gs://BUCKET/PATH)."
        )
    try:
        if not isinstance(root, str):
            raise ValueError(f"expected a string, got {root!r}")
        storage.path_under(storage_root, root)
    except ValueError as exc:
        raise errors.invalid_argument(
            f"{_RUNTIME}.gcsOutputDirectory must be a Cloud Storage URI gs://BUCKET/PATH "
            f"(its default is pipelineSpec.defaultPipelineRoot): {exc}."
        ) from None
    return root


def check_runtime(job: aiplatform_v1.PipelineJob) -> None:
    """Refuse the runtime settings this service cannot honour, naming the field."""
    runtime = job.runtime_config
    if runtime.parameters:
        raise errors.invalid_argument(
            f"{_RUNTIME}.parameters is the pre-KFP-2 form; send parameterValues "
            "(pipelines compiled with kfp 2 do)."
        )
    if runtime.input_artifacts:
        raise errors.invalid_argument(
            f"{_RUNTIME}.inputArtifacts is not supported by the local service; pass artifact "
            "URIs as parameters and import them with dsl.importer."
        )


def run_arguments(spec: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    """The pipeline's arguments: `values` checked against the root's parameters and typed."""
    inputs = spec["root"].get("inputDefinitions", {})
    declared = inputs.get("parameters", {})
    unknown = sorted(set(values) - set(declared))
    if unknown:
        known = ", ".join(sorted(declared)) or "none"
        raise errors.invalid_argument(
            f"{_RUNTIME}.parameterValues[{unknown[0]!r}]: the pipeline has no such parameter "
            f"(it takes {known})."
        )
    missing = [n for n, d in sorted(declared.items()) if n not in values and _required(d)]
    if missing:
        raise errors.invalid_argument(
            f"{_RUNTIME}.parameterValues[{missing[0]!r}] is required: the parameter has no "
            "default value."
        )
    if inputs.get("artifacts"):
        name = sorted(inputs["artifacts"])[0]
        raise errors.invalid_argument(
            f"pipelineJob.pipelineSpec.root.inputDefinitions.artifacts[{name!r}]: pipelines "
            "with input artifacts are not supported by the local service."
        )
    return {name: typed(name, declared[name], value) for name, value in values.items()}


def typed(name: str, declaration: dict[str, Any], value: Any) -> Any:
    """`value` as the Python value kfp expects for a parameter of this declaration."""
    kind = declaration.get("parameterType", "STRING")
    allowed = _TYPES.get(kind, (object,))
    is_bool = isinstance(value, bool)
    if not isinstance(value, allowed) or (is_bool and kind != "BOOLEAN"):
        raise errors.invalid_argument(
            f"{_RUNTIME}.parameterValues[{name!r}]: expected a {kind} value, got "
            f"{type(value).__name__} {value!r}."
        )
    if kind == "NUMBER_INTEGER":
        if not float(value).is_integer():
            raise errors.invalid_argument(
                f"{_RUNTIME}.parameterValues[{name!r}]: expected a whole number (NUMBER_INTEGER), "
                f"got {value!r}."
            )
        return int(value)
    if kind == "NUMBER_DOUBLE":
        return float(value)
    return value


def check_job_id(job_id: str) -> None:
    """Raise INVALID_ARGUMENT unless `job_id` is a valid pipelineJobId."""
    if not JOB_ID.fullmatch(job_id):
        raise errors.invalid_argument(
            f"pipelineJobId {job_id!r} is invalid: use up to 128 lowercase letters, digits and "
            "hyphens, starting with a letter."
        )


_SHAPE: tuple[tuple[str, type], ...] = (
    ("pipelineInfo", dict),
    ("pipelineInfo.name", str),
    ("root", dict),
    ("root.dag", dict),
    ("root.dag.tasks", dict),
    ("root.dag.tasks.*", dict),
    ("root.inputDefinitions", dict),
    ("root.inputDefinitions.parameters", dict),
    ("root.inputDefinitions.parameters.*", dict),
    ("root.inputDefinitions.artifacts", dict),
    ("components", dict),
    ("components.*", dict),
    ("deploymentSpec", dict),
    ("deploymentSpec.executors", dict),
    ("deploymentSpec.executors.*", dict),
    ("defaultPipelineRoot", str),
    ("schemaVersion", str),
)
"""The parts of a compiled spec this service reads, and the JSON type each must have."""
_EXPECTED: dict[type, str] = {dict: "an object", str: "a string"}


def _check_shape(spec: dict[str, Any]) -> None:
    for path, kind in _SHAPE:
        for where, value in _find(spec, path.split("."), "pipelineJob.pipelineSpec"):
            if not isinstance(value, kind):
                expected = _EXPECTED[kind]
                raise errors.invalid_argument(
                    f"{where} must be {expected}, got {type(value).__name__} {value!r:.60}."
                )


def _find(value: Any, parts: list[str], where: str) -> list[tuple[str, Any]]:
    """The values at `parts` below `value` (`*`: every entry of an object), with their paths;
    parts that are absent, or under a value of the wrong type, yield nothing."""
    if not parts:
        return [(where, value)]
    if not isinstance(value, dict):
        return []
    head, rest = parts[0], parts[1:]
    if head == "*":
        return [hit for key, item in value.items() for hit in _find(item, rest, f"{where}.{key}")]
    return _find(value[head], rest, f"{where}.{head}") if head in value else []


def _required(declaration: dict[str, Any]) -> bool:
    return "defaultValue" not in declaration and not declaration.get("isOptional", False)
