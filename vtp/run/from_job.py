"""A PipelineJob as Vertex describes it, to run again here (`vtp run --from-job JOB.json`).

The description is the JSON that `PipelineJob.to_dict()` prints, or a GET of the REST resource
(what `gcloud ... describe --format=json` prints): the compiled pipeline in `pipelineSpec`, the
run's values in `runtimeConfig` (`parameterValues`, or the older typed `parameters`). A run of
the local service is described the same way, so it replays too. `to_dict()`'s snake_case keys
are taken as well.

Before anything runs, every `gs://` input the run would read must exist under the local storage
root (`gs://B/P` is the file or folder `<root>/B/P`): the URIs in its parameter values, and the
URIs its importers name. A parameter whose name says it is where the run writes (`output` in
it, or ending in `root`, as `output_root` and `pipeline_root` do) is not an input. Input
artifacts the description refers to by ID (`runtimeConfig.inputArtifacts`) live in the
described run's metadata store, out of reach here: such a run is refused, naming them.
"""

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtp.storage import path_under

_OUTPUT_NAME = re.compile(r"output|root$")


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


def load(path: Path) -> DescribedJob:
    """The PipelineJob described in `path`; JobFileError naming the field otherwise."""
    try:
        document = json.loads(path.read_text())
    except OSError as exc:
        raise JobFileError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    except ValueError as exc:
        raise JobFileError(f"{path} is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise JobFileError(f"{path}: expected a PipelineJob object, got {type(document).__name__}")
    spec = _field(document, "pipelineSpec", "pipeline_spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("root"), dict):
        raise JobFileError(f"{path}: pipelineSpec is missing or not a compiled pipeline")
    info = spec.get("pipelineInfo")
    if not isinstance(info, dict) or not isinstance(info.get("name"), str):
        raise JobFileError(f"{path}: pipelineSpec.pipelineInfo.name is missing")
    runtime = _field(document, "runtimeConfig", "runtime_config") or {}
    if not isinstance(runtime, dict):
        raise JobFileError(f"{path}: runtimeConfig must be an object")
    declared = spec["root"].get("inputDefinitions", {}).get("parameters", {})
    values = {
        name: _typed(value, declared[name].get("parameterType", ""))
        for name, value in _values(path, runtime).items()
        if name in declared
    }
    artifacts = _field(runtime, "inputArtifacts", "input_artifacts") or {}
    name = document.get("name") or _field(document, "displayName", "display_name") or path.name
    return DescribedJob(str(name), spec, values, tuple(sorted(artifacts)))


def missing_inputs(job: DescribedJob, values: dict[str, Any], storage_root: Path) -> list[str]:
    """`LABEL=gs://...` for each input of `job` run with `values` that `storage_root` lacks,
    and `LABEL (an artifact of the described run)` for each input artifact."""
    missing = [f"{name} (an artifact of the described run)" for name in job.input_artifacts]
    for label, uri in _inputs(job.spec, values):
        try:
            present = path_under(storage_root, uri).exists()
        except ValueError:
            present = False
        if not present:
            missing.append(f"{label}={uri}")
    return missing


def _inputs(spec: dict[str, Any], values: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for name, value in sorted(values.items()):
        if not _OUTPUT_NAME.search(name.lower()):
            yield from ((name, uri) for uri in _uris(value))
    for executor, body in sorted(spec.get("deploymentSpec", {}).get("executors", {}).items()):
        uri = body.get("importer", {}).get("artifactUri", {}).get("constant")
        if isinstance(uri, str) and uri.startswith("gs://"):
            yield f"{executor} (importer)", uri


def _uris(value: Any) -> Iterator[str]:
    if isinstance(value, str) and value.startswith("gs://"):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _uris(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _uris(item)


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
