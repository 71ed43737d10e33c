"""A PipelineJob as Vertex describes it, to run again here (`vtp run --from-job JOB.json`).

The description is the JSON that `PipelineJob.to_dict()` prints, or a GET of the REST resource
(what `gcloud ... describe --format=json` prints): the compiled pipeline in `pipelineSpec`, the
run's values in `runtimeConfig` (`parameterValues`, or the older typed `parameters`). A run of
the local service is described the same way, so it replays too. `to_dict()`'s snake_case keys
are taken as well. The description is checked whole before anything starts: the spec as the
engine will read it (`vtp.engine.spec_check`, the local service's own check), the runtimeConfig
against its protobuf type, each value against its parameter's type; a field of the wrong type
or a part missing is one line naming it (`vtp run`'s usage error, exit 2).

Before anything runs, every `gs://` input the run would read must exist under the local storage
root (`gs://B/P` is the file or folder `<root>/B/P`), found from the spec (`vtp.run.spec_inputs`):
the URIs in its parameter values (and defaults) but those that only reach where components
write (`base_output_directory`, our `output_root`...), the URIs its importers name, and those in
the constants' fields that are read (a worker pool's `packageUris`, a dataset's `gcs_source`).
Those missing are one line (`refusal`) naming each and where it comes from. Input artifacts the
description refers to by ID (`runtimeConfig.inputArtifacts`) live in the described run's
metadata store, out of reach here: such a run is refused, naming them.
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.cloud import aiplatform_v1

from vtp.engine import spec_check
from vtp.run import spec_inputs
from vtp.run.spec_inputs import Read
from vtp.vertex import protodict
from vtp.vertex.protodict import SpecError

_DESCRIBED = protodict.Rules(skip_unknown=True, proto_names=True)
"""How a description's runtimeConfig is read: as protobuf reads JSON (`to_dict()` may write
snake_case), a field a newer SDK adds skipped."""


class JobFileError(ValueError):
    """The file is not a PipelineJob description; the message says what is wrong."""


@dataclass(frozen=True)
class DescribedJob:
    """What a description gives a local run."""

    name: str
    """The described job's resource name (or display name, or the file's name)."""
    spec: dict[str, Any]
    """The compiled PipelineSpec."""
    values: dict[str, Any]
    """The run's parameter values, typed as the spec declares them."""
    input_artifacts: tuple[str, ...] = ()
    """Names of input artifacts given by metadata ID (which cannot be found here)."""


def load(path: Path, document: Any = None) -> DescribedJob:
    """The PipelineJob described in `path` (or by `document`, already read from it: JSON or
    YAML, `vtp.vertex.describe.read`); JobFileError naming the field otherwise."""
    if document is None:
        try:
            document = json.loads(path.read_text())
        except OSError as exc:
            raise JobFileError(f"cannot read {str(path)!r}: {exc.strerror}") from None
        except (ValueError, RecursionError) as exc:
            raise JobFileError(f"{path} is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise JobFileError(f"{path}: expected a PipelineJob object, got {type(document).__name__}")
    spec, runtime = _parts(path, document)
    declared = spec["root"].get("inputDefinitions", {}).get("parameters", {})
    values = {
        name: _checked(path, name, value, spec_check.parameter_type(declared[name]))
        for name, value in _values(path, runtime).items()
        if name in declared
    }
    artifacts = _field(runtime, "inputArtifacts", "input_artifacts") or {}
    name = document.get("name") or _field(document, "displayName", "display_name") or path.name
    return DescribedJob(_text(name), spec, values, tuple(sorted(artifacts)))


def _parts(path: Path, document: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The description's compiled pipeline and runtime config, both checked: the spec whole,
    as the engine will read it (`vtp.engine.spec_check`, the local service's own check), so a
    field of the wrong type is one line naming it, never an error inside the run or ours."""
    spec = _field(document, "pipelineSpec", "pipeline_spec")
    if not isinstance(spec, dict) or "root" not in spec:
        raise JobFileError(f"{path}: pipelineSpec is missing or not a compiled pipeline")
    info = spec.get("pipelineInfo", {})
    if isinstance(info, dict) and not info.get("name"):  # a wrong type: named just below
        raise JobFileError(f"{path}: pipelineSpec.pipelineInfo.name is missing")
    try:
        spec_check.check_pipeline_spec(spec, "pipelineSpec")
    except SpecError as exc:
        raise JobFileError(f"{path}: {exc}") from None
    runtime = _field(document, "runtimeConfig", "runtime_config") or {}
    if not isinstance(runtime, dict):
        raise JobFileError(f"{path}: runtimeConfig must be an object")
    descriptor = aiplatform_v1.PipelineJob.RuntimeConfig.pb().DESCRIPTOR
    try:
        protodict.check(descriptor, runtime, "runtimeConfig", rules=_DESCRIBED)
    except SpecError as exc:
        raise JobFileError(f"{path}: {exc}") from None
    return spec, runtime


def _text(name: Any) -> str:
    """The job's name as one line (a description's `name` may be any JSON value)."""
    return " ".join(str(name).split())[:200] or "job"


def missing_inputs(job: DescribedJob, values: dict[str, Any], storage_root: Path) -> list[Read]:
    """Each input of `job` run with `values` that `storage_root` lacks (`data=gs://...` for a
    parameter's, `task: field = gs://...` for the spec's), then each input artifact (`NAME (an
    artifact of the described run)`)."""
    missing = [
        read for read in spec_inputs.reads(job.spec, values)
        if not spec_inputs.present(storage_root, read.uri)
    ]  # fmt: skip
    return missing + [
        Read(f"{name} (an artifact of the described run)", "") for name in job.input_artifacts
    ]


def refusal(missing: list[Read], storage_root: Path) -> str:
    """The one line that refuses a run whose inputs are `missing`: each, where it comes from,
    and how to supply it (copied to local Cloud Storage, or a parameter given another value)."""
    objects = [read for read in missing if read.uri]
    how = []
    if objects:
        how.append(
            f"copy {'it' if len(objects) == 1 else 'them'} there (gcloud storage cp FILE "
            f"gs://BUCKET/PATH to the local service, or a file or folder at "
            f"{storage_root}/BUCKET/PATH)"
        )
    given = sorted({read.parameter for read in objects if read.parameter})
    if given:
        how.append(f"give {' '.join(f'--param {name}=...' for name in given)} instead")
    line = f"inputs missing from local Cloud Storage ({storage_root}): "
    line += f"{', '.join(map(str, missing))}; {' or '.join(how)}"
    if len(objects) < len(missing):
        line += f"{'; ' if how else ''}artifacts given by ID are in the described run's metadata"
    return line


def _field(document: dict[str, Any], camel: str, snake: str) -> Any:
    return document.get(camel, document.get(snake))


def _values(path: Path, runtime: dict[str, Any]) -> dict[str, Any]:
    """`parameterValues`, or the older `parameters` ({name: {"intValue": "3"}})."""
    values = _field(runtime, "parameterValues", "parameter_values")
    if values is not None:
        if not isinstance(values, dict):
            raise JobFileError(f"{path}: runtimeConfig.parameterValues must be an object")
        return values
    old = runtime.get("parameters") or {}
    if not isinstance(old, dict) or not all(isinstance(v, dict) for v in old.values()):
        raise JobFileError(f"{path}: runtimeConfig.parameters must map names to typed values")
    return {name: next(iter(value.values()), None) for name, value in old.items()}


def _checked(path: Path, name: str, value: Any, kind: str) -> Any:
    """The described value of parameter `name`, typed (`_typed`); JobFileError naming it
    unless it fits the parameter's `kind` (as the local service would refuse it, only later)."""
    typed = _typed(value, kind)
    whole = kind != "NUMBER_INTEGER" or not isinstance(typed, float) or typed.is_integer()
    if not spec_check.fits(kind, typed) or not whole:
        shown = repr(value) if len(repr(value)) <= 60 else f"{repr(value)[:60]}..."
        raise JobFileError(
            f"{path}: runtimeConfig.parameterValues.{name}: expected a {kind} value, got "
            f"{type(value).__name__} {shown}"
        )
    return typed


def _typed(value: Any, kind: str) -> Any:
    """JSON numbers are doubles: an integer parameter's 3.0 (or the older "3") is 3 again."""
    if kind == "NUMBER_INTEGER" and isinstance(value, float | str):
        try:
            number = float(value)
        except ValueError:
            return value
        return int(number) if number.is_integer() else value
    if kind == "NUMBER_DOUBLE" and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value
