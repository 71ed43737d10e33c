"""The PipelineJob that `vtp submit` and `vtp schedule` send, built by the aiplatform SDK itself.

`aiplatform.PipelineJob(template_path=compiled/<name>.yaml, ...)` turns the compiled YAML, the
pipeline root and the parameter values into the request; we only check the input first, so a
mistake is reported with the flag that caused it before anything is sent: `--param` values are
parsed by the type the compiled pipeline declares, unknown and missing parameters are named, the
pipeline root and the jobs' output root must be on Cloud Storage and the region must be a Vertex
AI location. `vtp run` types its `--param` values with the same functions.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from vtp.vertex import compiled
from vtp.vertex.endpoint import api_endpoint

T = TypeVar("T")

LOCAL_PIPELINE_ROOT = "gs://vtp-local/pipeline-root"
"""Pipeline root of local runs when none is given (under the local service's storage root)."""

_GCS_URI = re.compile(r"gs://[a-z0-9][-_.a-z0-9]{1,220}[a-z0-9](/.*)?")
_SERVICE_ACCOUNT = re.compile(r"[^@\s]+@[^@\s]+\.[a-z]+")
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


class SubmitError(ValueError):
    """Bad input; the message names the flag at fault."""


@dataclass(frozen=True)
class Submission:
    """What the user asked to run, as flags give it (parameter values still text)."""

    pipeline: str
    project: str
    region: str
    pipeline_root: str
    params: dict[str, str] = field(default_factory=dict)
    display_name: str = ""
    service_account: str = ""
    enable_caching: bool | None = None
    local: bool = False
    local_params: dict[str, Any] = field(default_factory=dict)
    """Values a local run fills in unless given (a shipped pipeline's catalog entry has some)."""


def template_path(pipeline: str) -> Path:
    """The compiled pipeline file the user names; SubmitError when there is none."""
    path = Path(pipeline)
    if not path.is_file():
        raise SubmitError(f"PIPELINE: no compiled pipeline file {pipeline!r}")
    return path


def load_template(path: Path) -> dict[str, Any]:
    """The compiled pipeline spec; SubmitError when the file is not one."""
    return load_documents(path)[0]


def load_documents(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The compiled pipeline spec and its platform spec (empty when the file has none: kfp
    writes one only for a pipeline with a workspace or Kubernetes settings); SubmitError when
    the file is not a compiled pipeline."""
    try:
        spec, platform = compiled.documents(path.read_text(), str(path))
    except ValueError as exc:
        raise SubmitError(f"PIPELINE: {exc}") from None
    if "root" not in spec or "pipelineInfo" not in spec:
        raise SubmitError(f"PIPELINE: {path} is not a compiled pipeline (no root/pipelineInfo)")
    return spec, platform


def parameters(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The pipeline's parameters as the compiled spec declares them (type, default)."""
    return spec["root"].get("inputDefinitions", {}).get("parameters", {})


def parse_param_flags(values: list[str]) -> dict[str, str]:
    """`--param NAME=VALUE` flags as {NAME: VALUE text}."""
    params: dict[str, str] = {}
    for item in values:
        name, sep, text = item.partition("=")
        if not sep or not name.isidentifier():
            raise SubmitError(f"--param expects NAME=VALUE with a parameter name, got {item!r}")
        params[name] = text
    return params


def typed_values(
    pipeline: str, given: dict[str, str], declared: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The `--param` texts as the values their declared types call for; unknown names named."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise SubmitError(
            f"--param {unknown[0]}: not a parameter of pipeline {pipeline!r}; it takes "
            f"{', '.join(sorted(declared))}"
        )
    return {name: typed(name, declared[name], text) for name, text in given.items()}


def check_values(values: dict[str, Any], on_vertex: bool) -> None:
    """What the jobs would only reject once running: the location, and gs:// URIs.

    `output_root` is where every job writes (`baseOutputDirectory`), so it is a Cloud Storage
    URI wherever the pipeline runs; `checkpoints_uri` may name a local directory in local runs.
    """
    location = values.get("location")
    if isinstance(location, str):
        try:
            api_endpoint(location)
        except ValueError as exc:
            raise SubmitError(f"--param location: {exc}") from None
    for name in ("output_root", "checkpoints_uri") if on_vertex else ("output_root",):
        value = values.get(name)
        if isinstance(value, str) and not _GCS_URI.fullmatch(value):
            raise SubmitError(
                f"--param {name}: {value!r} is not a Cloud Storage URI; use gs://BUCKET[/PATH]"
            )


def parameter_values(sub: Submission, declared: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Typed values for every given parameter, with project/location filled from the flags."""
    values = typed_values(sub.pipeline, dict(sub.params), declared)
    check_values(values, on_vertex=not sub.local)
    implied: dict[str, Any] = {"project": sub.project, "location": sub.region}
    if sub.local:
        implied.update(sub.local_params)
    values = {**{k: v for k, v in implied.items() if k in declared}, **values}
    check_required(sub.pipeline, declared, values)
    return values


def check_required(pipeline: str, declared: dict[str, dict[str, Any]], values: dict) -> None:
    """SubmitError naming the first parameter without a default that `values` lacks."""
    missing = [n for n, d in sorted(declared.items()) if n not in values and _required(d)]
    if missing:
        raise SubmitError(
            f"--param {missing[0]}=VALUE is required: pipeline {pipeline!r} has no default for it"
        )


def typed(name: str, declaration: dict[str, Any], text: str) -> Any:
    """A `--param` value parsed as its declared type (STRING stays text, LIST/STRUCT are JSON)."""
    kind = declaration.get("parameterType", "STRING")
    try:
        if kind == "NUMBER_INTEGER":
            return int(text)
        if kind == "NUMBER_DOUBLE":
            return float(text)
        if kind == "BOOLEAN":
            return _boolean(text)
        if kind in ("LIST", "STRUCT"):
            value = json.loads(text)
            if not isinstance(value, list if kind == "LIST" else dict):
                raise ValueError(kind)
            return value
    except ValueError:
        example = {"LIST": '["a", "b"]', "STRUCT": '{"k": 1}', "BOOLEAN": "true"}.get(kind, "3")
        raise SubmitError(
            f"--param {name}: expected a {kind} value (e.g. {example}), got {text!r}"
        ) from None
    return text


def check_target(sub: Submission) -> None:
    """Region, pipeline root and service account as Vertex will accept them."""
    try:
        api_endpoint(sub.region)
    except ValueError as exc:
        raise SubmitError(f"--region: {exc}") from None
    if not _GCS_URI.fullmatch(sub.pipeline_root):
        raise SubmitError(
            f"--pipeline-root must be a Cloud Storage URI gs://BUCKET[/PATH], got "
            f"{sub.pipeline_root!r}"
        )
    if sub.service_account and not _SERVICE_ACCOUNT.fullmatch(sub.service_account):
        raise SubmitError(
            f"--service-account must be an email such as NAME@PROJECT.iam.gserviceaccount.com, "
            f"got {sub.service_account!r}"
        )
    if len(sub.display_name) > 128:
        raise SubmitError("--display-name must be at most 128 characters")


@dataclass(frozen=True)
class Checked:
    """A Submission whose every flag passed: the template and the typed parameter values."""

    sub: Submission
    template: Path
    display_name: str
    values: dict[str, Any]
    spec: dict[str, Any] = field(default_factory=dict)
    """The pipeline document of `template` (the SDK is given it alone)."""


def check(sub: Submission, template: Path) -> Checked:
    """Check every flag of `sub` against Vertex's rules and compiled pipeline `template`."""
    spec, platform = load_documents(template)
    check_target(sub)
    check_workspace(sub, platform)
    values = parameter_values(sub, parameters(spec))
    name = sub.display_name or spec["pipelineInfo"]["name"]
    return Checked(sub, template, name, values, spec)


def check_workspace(sub: Submission, platform: dict[str, Any]) -> None:
    """SubmitError when the pipeline's workspace (its platform spec's) cannot be had: Vertex
    AI Pipelines gives runs none, and a local service's disk must have room for it."""
    from vtp.vertex import local_auth
    from vtp.vertex.endpoint import local_endpoint

    try:
        if compiled.workspace_size(platform) is None:
            return
        if not sub.local:
            raise SubmitError(
                f"PIPELINE: {sub.pipeline} uses a KFP workspace (dsl.PipelineConfig's "
                "workspace, in its platform spec), which Vertex AI Pipelines does not give a "
                "run; run it locally (`vtp run`, or `vtp submit --local`)"
            )
        served = local_auth.published(local_endpoint()) or {}
        compiled.check_workspace(platform, Path(served.get("state_dir") or Path.cwd()))
    except ValueError as exc:
        if isinstance(exc, SubmitError):
            raise
        raise SubmitError(f"PIPELINE: {exc}") from None


def pipeline_job(checked: Checked, credentials: Any = None) -> Any:
    """The `aiplatform.PipelineJob` of a checked submission (built offline; nothing is sent)."""
    from google.cloud import aiplatform

    sub = checked.sub
    job = aiplatform.PipelineJob(
        display_name=checked.display_name,
        template_path=str(compiled.pipeline_only(checked.template, checked.spec)),
        pipeline_root=sub.pipeline_root,
        parameter_values=checked.values,
        enable_caching=sub.enable_caching,
        project=sub.project,
        location=sub.region,
        credentials=credentials,
    )
    if sub.service_account:  # where PipelineJob.submit puts it
        job._gca_resource.service_account = sub.service_account
    return job


def create_with_free_id(create: Callable[[str], T], base: str, attempts: int = 10) -> T:
    """`create(ID)` with `base`, then `base-2`, `base-3`, ... while the ID is taken: a run of the
    same pipeline created in the same second has it (the SDK's IDs hold the second). Over REST a
    409 is a plain Conflict, over gRPC AlreadyExists; an Aborted one is not about the ID."""
    from google.api_core.exceptions import Aborted, Conflict

    for attempt in range(1, attempts + 1):
        try:
            return create(base if attempt == 1 else f"{base}-{attempt}")
        except Conflict as exc:
            if isinstance(exc, Aborted) or attempt == attempts:
                raise
    raise AssertionError("unreachable")


def request_body(resource: Any) -> dict[str, Any]:
    """A proto-plus request message as REST JSON (camelCase, unset fields left out)."""
    from google.protobuf import json_format

    return json_format.MessageToDict(type(resource).pb(resource))


def _boolean(text: str) -> bool:
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise ValueError(text)


def _required(declaration: dict[str, Any]) -> bool:
    return "defaultValue" not in declaration and not declaration.get("isOptional", False)
