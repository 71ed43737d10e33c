"""What the engine adds to kfp.local's task utilities (2.17) to run pipelines written for Vertex
Pipelines: Vertex's runtime placeholders, and Google Cloud Pipeline Components (GCPC) container
components.

- **Placeholders.** Vertex resolves `{{$.pipeline_google_cloud_project_id}}`,
  `{{$.pipeline_google_cloud_location}}`, `{{$.pipeline_persistent_resource_id}}`,
  `{{$.pipeline_job_uuid}}`, ... and `{{$.json_escape[N]}}` (the task's executor input, escaped
  to sit in a JSON string); GCPC's ops use them as defaults. kfp.local knows none and fails with
  `list index out of range`. Here they resolve as on Vertex: project and location from
  $VTP_LOCAL_PROJECT / $VTP_LOCAL_LOCATION (a local pipeline job's own; `vtp run`: local,
  us-central1), no persistent resource, service account, network or key, the run's ID, now.
  A `{{$.pipeline_...}}` placeholder not in that list fails naming it and the component.
- **GCPC's container components.** Their image only holds GCPC, and their command runs one of
  its launcher modules (`python3 -u -m google_cloud_pipeline_components.container.v1.<op>.
  launcher`). These run on this machine with the installed GCPC, and the start-up hook every
  local task gets (`vtp.vertex.local_auth.client_settings`) points the clients they make at the
  local service. Only the GCPC versions in SUPPORTED_GCPC are accepted: the launchers'
  internals (hard-coded endpoints, `google.auth.default()`) are what the hook was checked
  against.
- **Other container components** run in their images through the container engine that
  `VTP_CONTAINER_ENGINE` names (`task_containers.py`). Without one, `check_runnable` fails the
  run before it starts, naming each such component and its image, and whether an engine answers;
  with one, it fails naming each image that is neither on this machine nor pullable.
"""

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from vtp import containers

GCPC_MODULE = "google_cloud_pipeline_components.container."
SUPPORTED_GCPC = ("2.22.",)
"""GCPC releases whose launchers run locally (prefixes of the installed version)."""
PROJECT_ENV, LOCATION_ENV = "VTP_LOCAL_PROJECT", "VTP_LOCAL_LOCATION"
EXECUTOR_MODULE = "kfp.dsl.executor_main"
EMBEDDED_SOURCE = "--component_module_path"
"""What a lightweight Python component's command passes kfp's executor: the function's source,
embedded in the command. A containerized one (`@dsl.component(target_image=...)`, built by
`kfp component build`) runs the executor alone: its code is in its image."""


def is_lightweight(command: Sequence[str]) -> bool:
    """True for a lightweight Python component's command (kfp's executor, source embedded)."""
    text = " ".join(str(part) for part in command)
    return EXECUTOR_MODULE in text and EMBEDDED_SOURCE in text


def is_gcpc_launcher(command: list[str]) -> bool:
    """True when `command` runs one of GCPC's launcher modules."""
    return any(part.startswith(GCPC_MODULE) for part in command)


def check_gcpc_version() -> None:
    """RuntimeError unless the installed GCPC is one whose launchers run locally."""
    from google_cloud_pipeline_components.version import __version__

    if not __version__.startswith(SUPPORTED_GCPC):
        raise RuntimeError(
            f"google-cloud-pipeline-components {__version__} is installed; local runs of its "
            f"components support {', '.join(v + 'x' for v in SUPPORTED_GCPC)} only (install "
            "one of those, as this project's constraints do)."
        )


def check_runnable(spec: Mapping[str, Any], engine: Sequence[str] | None = None) -> None:
    """ValueError, before anything runs, naming every container component this machine cannot
    run: not a lightweight Python component, not GCPC's, and no container `engine` (default:
    `VTP_CONTAINER_ENGINE`'s) or an image it has not and cannot pull."""
    engine = containers.engine_from(os.environ) if engine is None else tuple(engine)
    blocked: list[str] = []
    images: dict[str, str] = {}
    for name, executor in spec.get("deploymentSpec", {}).get("executors", {}).items():
        container = executor.get("container")
        if not container:
            continue  # importers, resolvers
        command = [*container.get("command", []), *container.get("args", [])]
        if is_lightweight(command):
            continue
        if is_gcpc_launcher([str(part) for part in command]):
            check_gcpc_version()
            continue
        image = container.get("image", "?")
        if EXECUTOR_MODULE in " ".join(str(part) for part in command):
            what = f"a containerized Python component: its code is in its image {image}, which "
            what += "`kfp component build` builds"
        else:
            what = f"image {image}"
        blocked.append(f"{name.removeprefix('exec-')} ({what})")
        images.setdefault(str(container.get("image", "")), name.removeprefix("exec-"))
    if blocked and engine:
        problems = [
            f"container component {task}: {problem}"
            for image, task in images.items()
            if (problem := containers.image_problem(engine, image, os.environ))
        ]
        if problems:
            raise ValueError("; ".join(problems))
        return
    if blocked:
        found = container_engine()
        how = (
            f"{found} answers: set {containers.ENGINE_ENV}={found} to run them in their "
            "images (docs/containers.md)"
            if found
            else "no container engine (Docker or Podman) is reachable here"
        )
        raise ValueError(
            f"container component{'s' if len(blocked) > 1 else ''} {', '.join(blocked)} "
            f"cannot run locally: {how}. Local runs execute lightweight Python components "
            "(@dsl.component) and Google Cloud Pipeline Components."
        )


def container_engine() -> str:
    """`docker` or `podman` when its engine answers (`<engine> info`), else ""."""
    for name in ("docker", "podman"):
        if not shutil.which(name):
            continue
        try:
            answered = subprocess.run([name, "info"], capture_output=True, timeout=15)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if answered.returncode == 0:
            return name
    return ""


def vertex_values(job_id: str) -> dict[str, str]:
    """What Vertex puts in place of its runtime placeholders, for a local run `job_id`."""
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    project = os.environ.get(PROJECT_ENV) or "local"
    location = os.environ.get(LOCATION_ENV) or "us-central1"
    return {
        "{{$.pipeline_google_cloud_project_id}}": project,
        "{{$.pipeline_google_cloud_location}}": location,
        "{{$.pipeline_persistent_resource_id}}": "",
        "{{$.pipeline_service_account}}": "",
        "{{$.pipeline_network}}": "",
        "{{$.pipeline_encryption_key_name}}": "",
        "{{$.pipeline_job_uuid}}": job_id,
        "{{$.pipeline_job_resource_name}}": f"projects/{project}/locations/{location}/"
        f"pipelineJobs/{job_id}",
        "{{$.pipeline_job_create_time_utc}}": now,
        "{{$.pipeline_job_schedule_time_utc}}": now,
    }


def _with_escapes(values: Mapping[str, str]) -> dict[str, str]:
    """`values` plus their `.json_escape[0]` / `[1]` forms (GCPC's `json_escape`)."""
    found = dict(values)
    for placeholder, value in values.items():
        for level in (0, 1):
            escaped = value
            for _ in range(level + 1):
                escaped = json.dumps(escaped)[1:-1]
            found[placeholder.replace("}}", f".json_escape[{level}]}}}}")] = escaped
    return found


def resolve_command(full_command: list[str], workspace: str = "", **kwargs: Any) -> list[str]:
    """kfp.local's `replace_placeholders` (same arguments) with Vertex's placeholders too, and
    KFP's workspace (`{{$.workspace_path}}`, or its mount path `/kfp-workspace` written out) as
    `workspace`, the run's shared folder."""
    from kfp.local import placeholder_utils

    return _replace_placeholders(
        placeholder_utils.replace_placeholders, full_command, workspace, **kwargs
    )


WORKSPACE_PLACEHOLDERS = ("{{$.workspace_path}}", "/kfp-workspace")
"""KFP's workspace placeholder (`dsl.WORKSPACE_PATH_PLACEHOLDER`) and its mount path."""


def _replace_placeholders(
    original: Any, full_command: list[str], workspace: str = "", **kwargs: Any
) -> list[str]:
    executor_input = _channels_put_in(_integral_numbers(kwargs["executor_input_dict"]))
    values = _with_escapes(vertex_values(kwargs["unique_pipeline_id"]))
    if workspace:
        values.update(dict.fromkeys(WORKSPACE_PLACEHOLDERS, workspace))
    kwargs["executor_input_dict"] = _substitute(executor_input, values)
    # kfp.local refuses `{{$.json_escape[N]}}`: hide it from kfp.local, put the value in after.
    hidden = {
        f"{{{{$.json_escape[{level}]}}}}": f"\x00vtp-json-escape-{level}\x00" for level in (0, 1)
    }
    full_command = [_substitute(_substitute(part, values), hidden) for part in full_command]
    _refuse_unknown(full_command, kwargs.get("task_resource_name", "?"))
    resolved = original(full_command=full_command, **kwargs)
    text = json.dumps(kwargs["executor_input_dict"])
    escapes = {"{{$.json_escape[0]}}": text, "{{$.json_escape[1]}}": json.dumps(text)[1:-1]}
    escapes.update({hidden[key]: value for key, value in escapes.items()})
    resolved = [_substitute(part, escapes) for part in resolved]
    _refuse_unknown(resolved, kwargs.get("task_resource_name", "?"))
    return resolved


KFP_LOCAL_RESOLVES = frozenset(
    {"{{$.pipeline_job_name}}", "{{$.pipeline_task_name}}", "{{$.pipeline_task_uuid}}",
     "{{$.pipeline_root}}"}
)  # fmt: skip
"""Pipeline placeholders kfp.local resolves itself."""
_PIPELINE_PLACEHOLDER = re.compile(r"\{\{\$\.pipeline_[A-Za-z0-9_]*(?:\.json_escape\[\d\])?\}\}")


def _refuse_unknown(parts: list[Any], task: str) -> None:
    """ValueError naming the first `{{$.pipeline_...}}` placeholder left in `parts` that
    neither Vertex's list here nor kfp.local resolves."""
    for part in parts:
        if not isinstance(part, str):
            continue
        for unknown in _PIPELINE_PLACEHOLDER.findall(part):
            if unknown in KFP_LOCAL_RESOLVES:
                continue
            raise ValueError(
                f"component {task}: the Vertex placeholder {unknown} has no local value "
                "(local runs resolve project, location, persistent resource, service "
                "account, network, encryption key, job uuid and create/schedule time)."
            )


def _integral_numbers(executor_input: dict[str, Any]) -> dict[str, Any]:
    """The executor input with whole numbers inside list and dict parameters as ints.

    kfp.local reads struct parameters through protobuf, where every number is a double, and
    writes them back as `100.0`; Vertex writes `100`, which is what GCPC's payloads (an int64
    `boot_disk_size_gb`, `replica_count`) parse.
    """

    def whole(value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, list):
            return [whole(item) for item in value]
        if isinstance(value, dict):
            return {key: whole(item) for key, item in value.items()}
        return value

    inputs = executor_input.get("inputs", {})
    values = inputs.get("parameterValues", {})
    fixed = {k: whole(v) if isinstance(v, list | dict) else v for k, v in values.items()}
    return {**executor_input, "inputs": {**inputs, "parameterValues": fixed}}


_INPUT_PARAMETER = re.compile(r"\{\{\$\.inputs\.parameters\['([^'\]]+)'\]\}\}")


def _channels_put_in(executor_input: dict[str, Any]) -> dict[str, Any]:
    """The executor input with the task's own pipeline channels put into its other parameters.

    A value that is only known at run time put inside a constant (an upstream task's output in
    GCPC's `worker_pool_specs=[{"machine_spec": {"accelerator_type": task.output}}]`) is
    compiled as `{{$.inputs.parameters['pipelinechannel--task-Output']}}` inside the constant,
    with that channel as another input of the task; the backend (Vertex, KFP's driver) puts its
    value there before the task runs. A string that is the placeholder alone takes the value
    as it is (an int stays an int, as the payload's int fields want); one that holds it among
    other text takes its text (JSON for a non-string).
    """
    inputs = executor_input.get("inputs", {})
    values = inputs.get("parameterValues", {})
    if not any(_INPUT_PARAMETER.search(json.dumps(v)) for v in values.values()):
        return executor_input

    def text(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        if value is None:
            return match.group(0)
        return value if isinstance(value, str) else json.dumps(value)

    def put_in(value: Any) -> Any:
        if isinstance(value, str):
            whole = _INPUT_PARAMETER.fullmatch(value)
            if whole and values.get(whole.group(1)) is not None:
                return values[whole.group(1)]
            return _INPUT_PARAMETER.sub(text, value)
        if isinstance(value, list):
            return [put_in(item) for item in value]
        if isinstance(value, dict):
            return {key: put_in(item) for key, item in value.items()}
        return value

    fixed = {name: put_in(value) for name, value in values.items()}
    return {**executor_input, "inputs": {**inputs, "parameterValues": fixed}}


def _substitute(value: Any, values: Mapping[str, str]) -> Any:
    """`value` (str, list or dict, nested) with every placeholder in `values` replaced."""
    if isinstance(value, str):
        for placeholder, replacement in values.items():
            if placeholder in value:
                value = value.replace(placeholder, replacement)
        return value
    if isinstance(value, list):
        return [_substitute(item, values) for item in value]
    if isinstance(value, dict):
        return {key: _substitute(item, values) for key, item in value.items()}
    return value
