"""What a PipelineJob request must hold to run, and the arguments its run gets (pure functions).

Vertex checks a PipelineJob when it is created: the compiled spec must be there, every required
pipeline parameter must have a value, no value may name a parameter the pipeline lacks, and each
value must fit its parameter's type. The same checks run here, before anything starts, with the
field paths in the messages. The spec itself is checked first, whole, as the engine will read it
(`vtp.engine.spec_check`, the check `vtp run --from-job` makes too): the later checks here and
the engine may then take its fields to be what kfp writes. Values arrive as
`google.protobuf.Value`s, so numbers are doubles: an integer parameter takes a whole number and
becomes an `int` again for kfp.
"""

import json
import re
from pathlib import Path
from typing import Any, TypeVar

import proto
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp import storage
from vtp.engine import spec_check
from vtp.local.base import errors
from vtp.local.base.routing import parse_message
from vtp.vertex import protodict
from vtp.vertex.protodict import SpecError

M = TypeVar("M", bound=proto.Message)

JOB_ID = re.compile(r"[a-z][-a-z0-9]{0,127}")
"""Valid `pipelineJobId`s (Vertex: under 128 characters of [a-z0-9-], starting with a letter)."""

_RUNTIME = "pipelineJob.runtimeConfig"
SPEC_FIELD = "pipelineJob.pipelineSpec"
"""How messages name the spec: a schedule's run request has its pipelineJob under this name too."""


def parse_request(message_type: type[M], body: bytes, where: str) -> M:
    """A request body (a PipelineJob, or a Schedule) as `message_type`, unknown fields refused
    (`parse_message`). When it does not parse, the refusal names the field at fault as a JSON
    path under `where` (`pipelineJob.runtimeConfig.parameterValues`) where a walk of the body
    finds it: protobuf's own message names the type, or nothing (`'int' object is not
    iterable`)."""
    try:
        return parse_message(message_type, body)
    except errors.ApiError:
        problem = _field_at_fault(message_type, body, where)
        if problem is None:
            raise
        raise errors.invalid_argument(f"Invalid JSON payload received. {problem}.") from None


def _field_at_fault(message_type: type[proto.Message], body: bytes, where: str) -> str | None:
    """What a walk of the body (read as protobuf reads JSON) finds wrong, or None."""
    try:
        data = json.loads(body or b"{}")
        protodict.check(message_type.pb().DESCRIPTOR, data, where, rules=protodict.REQUEST)
    except SpecError as exc:
        return str(exc)
    except (ValueError, RecursionError):
        return None
    return None


def pipeline_spec(job: aiplatform_v1.PipelineJob) -> dict[str, Any]:
    """The compiled pipeline (`pipelineSpec`) as a dict, checked whole as the engine will read
    it; INVALID_ARGUMENT naming the field otherwise (a request must never reach a reader of the
    spec with a field of another type: that was a 500)."""
    spec = _as_dict(job._pb.pipeline_spec, SPEC_FIELD) if "pipeline_spec" in job else {}
    if not spec:
        raise errors.invalid_argument(
            f"{SPEC_FIELD} is required: the compiled pipeline (KFP IR YAML as JSON), with "
            "pipelineInfo.name and root."
        )
    try:
        spec_check.check_pipeline_spec(spec, SPEC_FIELD)
    except SpecError as exc:
        raise errors.invalid_argument(f"{exc}.") from None
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


def parameter_values(job: aiplatform_v1.PipelineJob) -> dict[str, Any]:
    """The run's `parameterValues` as JSON values; INVALID_ARGUMENT for one JSON cannot hold."""
    runtime = _as_dict(job._pb.runtime_config, _RUNTIME)
    values: dict[str, Any] = runtime.get("parameterValues", {})
    return values


def _as_dict(message: Any, field: str) -> dict[str, Any]:
    """`message` (a Struct, or a message holding `Value`s) as JSON; INVALID_ARGUMENT naming
    `field` when a number in it is Infinity or NaN: protobuf takes them (Python's JSON reads
    them, a gRPC client sends them), JSON has no such number, and the job could not be stored
    or shown (MessageToDict raised, a 500)."""
    try:
        value: dict[str, Any] = json_format.MessageToDict(message)
    except (ValueError, json_format.Error):
        raise errors.invalid_argument(
            f"{field}: every number must be finite (JSON has no Infinity or NaN)."
        ) from None
    return value


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
    kind = spec_check.parameter_type(declaration, missing="STRING")
    if not spec_check.fits(kind, value):
        raise errors.invalid_argument(
            f"{_RUNTIME}.parameterValues[{name!r}]: expected a {kind} value, got "
            f"{type(value).__name__} {_shown(value)}."
        )
    if kind == "NUMBER_INTEGER":
        if not float(value).is_integer():
            raise errors.invalid_argument(
                f"{_RUNTIME}.parameterValues[{name!r}]: expected a whole number (NUMBER_INTEGER), "
                f"got {_shown(value)}."
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


def _shown(value: Any) -> str:
    """`value`'s repr, cut short: a message need not repeat a huge value."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:80]}..."


def _required(declaration: dict[str, Any]) -> bool:
    return "defaultValue" not in declaration and not declaration.get("isOptional", False)
