"""What the `upload_model` component does inside its container: register a model in the registry.

The same `models:upload` request GCPC's `ModelUploadOp` sends, through the aiplatform client
(`ModelServiceClient`, REST) so that it reaches Vertex or the local service alike; the output is
the `google.VertexModel` artifact GCPC's own upload writes (`resourceName` = the model name with
`@<version>`, uri = that name under `https://<api host>/v1/`), so GCPC's deploy components take
it. Two differences from GCPC:

- **No duplicate versions on retry.** Every version carries the `vtp-task` label of its
  pipeline run and task; a retried task finds the version an earlier attempt registered and
  outputs it instead of uploading again.
- **Local artifacts.** Under kfp.local an artifact is a local path; one under the local Cloud
  Storage root (`VTP_GCS_ROOT`) is registered by its `gs://` URI, anything else is refused
  before the request is sent.

The serving container (`containerSpec`, aiplatform's `serving_container_*` arguments) defaults to
the project's image running `python -m vtp.trainer.serve` on port 8080 with the routes /predict and
/health (see vtp.trainer.serve): that image has the torch that wrote `model.pt2`. Another image is
registered with only what the caller gives for it.
"""

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from google.cloud import aiplatform_v1

from vtp import storage
from vtp.images import is_project_image
from vtp.vertex import gcp_resources as resources
from vtp.vertex.client import vertex_client
from vtp.vertex.lifecycle import TASK_LABEL, Target, job_digest, task_key

DEFAULT_ALIAS = "default"
SERVE_COMMAND: tuple[str, ...] = ("python", "-m", "vtp.trainer.serve")
"""How the project's image serves a model directory (Vertex's custom-container contract)."""
SERVE_PORT = 8080
PREDICT_ROUTE = "/predict"
HEALTH_ROUTE = "/health"
UPLOAD_TIMEOUT_SECONDS = 1800.0
"""How long to wait for the upload operation (Vertex copies nothing, so it takes seconds)."""
_MODEL_NAME = re.compile(r"projects/[^/]+/locations/[^/]+/models/[^/@]+")
_MODEL_ID = re.compile(r"[A-Za-z0-9_-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Serving:
    """The model's serving container (`containerSpec`), checked; empty fields: Vertex's defaults."""

    image_uri: str
    command: Sequence[str] = ()
    args: Sequence[str] = ()
    ports: Sequence[int] = ()
    predict_route: str = ""
    health_route: str = ""
    env: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.image_uri.strip():
            raise ValueError("serving_container_image_uri is required (the prediction image)")
        for port in self.ports:
            # Numbers in a pipeline's list parameters may arrive as floats (JSON/Struct values).
            number = isinstance(port, int | float) and not isinstance(port, bool)
            if not (number and float(port).is_integer() and 0 < port < 65536):
                raise ValueError(f"serving_container_ports: {port!r} is not a port number")
        for name, route in (("predict", self.predict_route), ("health", self.health_route)):
            if route and not route.startswith("/"):
                raise ValueError(f"serving_container_{name}_route {route!r} must start with /")
        for name in self.env:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(
                    f"serving_container_environment_variables: {name!r} is not a variable name"
                )

    def container_spec(self) -> aiplatform_v1.ModelContainerSpec:
        """The ModelContainerSpec aiplatform's Model.upload sends for these arguments."""
        return aiplatform_v1.ModelContainerSpec(
            image_uri=self.image_uri,
            command=list(self.command),
            args=list(self.args),
            env=[aiplatform_v1.EnvVar(name=k, value=v) for k, v in sorted(self.env.items())],
            ports=[aiplatform_v1.Port(container_port=int(port)) for port in self.ports],
            predict_route=self.predict_route,
            health_route=self.health_route,
        )


def serving(
    image_uri: str,
    project_image: str,
    command: Sequence[str] = (),
    args: Sequence[str] = (),
    ports: Sequence[int] = (),
    predict_route: str = "",
    health_route: str = "",
    env: Mapping[str, str] | None = None,
) -> Serving:
    """The serving container for `image_uri`: the project's image serves with vtp.trainer.serve.

    The project's image is `project_image` (the one the pipeline was compiled with) or any image
    named as the project's (`images.is_project_image`). For it, what the caller leaves empty is
    vtp.trainer.serve's contract (command, port, routes); another image gets exactly what is given.
    """
    if image_uri == project_image or is_project_image(image_uri):
        command = command or SERVE_COMMAND
        ports = ports or (SERVE_PORT,)
        predict_route = predict_route or PREDICT_ROUTE
        health_route = health_route or HEALTH_ROUTE
    return Serving(
        image_uri,
        command=tuple(command),
        args=tuple(args),
        ports=tuple(ports),
        predict_route=predict_route,
        health_route=health_route,
        env=dict(env or {}),
    )


@dataclass(frozen=True)
class Upload:
    """One model version to register: the upload_model component's inputs, checked."""

    display_name: str
    artifact_uri: str
    serving: Serving
    parent_model: str = ""
    description: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    version_aliases: Sequence[str] = ()
    is_default_version: bool = True

    def __post_init__(self) -> None:
        if not self.display_name.strip():
            raise ValueError("display_name is required: the name shown in the Model Registry")
        if len(self.display_name) > 128:
            raise ValueError(f"display_name has {len(self.display_name)} characters; max 128")
        if not storage.is_gcs_uri(self.artifact_uri):
            raise ValueError(f"model: artifact URI {self.artifact_uri!r} is not gs://")
        plain = self.parent_model.partition("@")[0]
        if plain and not (_MODEL_NAME.fullmatch(plain) or _MODEL_ID.fullmatch(plain)):
            raise ValueError(
                f"parent_model {self.parent_model!r} is neither a model resource name "
                "(projects/P/locations/L/models/ID) nor a model ID"
            )


def model_name(display_name: str, model_uri: str) -> str:
    """`display_name`, or when empty `vtp-<task>` from the model's own config.json."""
    if display_name.strip():
        return display_name
    try:
        config = json.loads((storage.local_path(model_uri) / "config.json").read_text())
        task = str(config["task"])
    except (OSError, ValueError, KeyError, TypeError):
        return "vtp-model"
    return "vtp-" + task.rsplit(".", 1)[-1]


def artifact_uri(uri: str) -> str:
    """The gs:// URI of a model artifact: as is, or a local path under the Cloud Storage root."""
    if storage.is_gcs_uri(uri):
        return uri
    try:
        return storage.gcs_uri(Path(uri))
    except ValueError:
        raise ValueError(
            f"model: {uri} is neither a gs:// URI nor under the local Cloud Storage root "
            f"{storage.gcs_root()} ({storage.GCS_ROOT_ENV}); run the pipeline with a pipeline "
            "root under it so that the registry can read the model"
        ) from None


def model_client(target: Target) -> aiplatform_v1.ModelServiceClient:
    """A REST ModelServiceClient for the target: Vertex for its location, or the local service."""
    return vertex_client(aiplatform_v1.ModelServiceClient, target.location, local=target.local)


def parent_model_name(target: Target, parent_model: str) -> str:
    """The full resource name of `parent_model` (a name or an ID), without any `@version`."""
    plain = parent_model.partition("@")[0]
    return plain if "/" in plain or not plain else f"{target.parent}/models/{plain}"


def build_request(target: Target, upload: Upload, key: str) -> aiplatform_v1.UploadModelRequest:
    """The UploadModelRequest for `upload`, labelled with the task key `key`."""
    aliases = list(upload.version_aliases)
    if upload.is_default_version and DEFAULT_ALIAS not in aliases:
        aliases.insert(0, DEFAULT_ALIAS)  # what aiplatform.Model.upload sends
    model = aiplatform_v1.Model(
        display_name=upload.display_name,
        description=upload.description,
        artifact_uri=upload.artifact_uri,
        container_spec=upload.serving.container_spec(),
        labels={**upload.labels, TASK_LABEL: key},
        version_aliases=aliases,
    )
    return aiplatform_v1.UploadModelRequest(
        parent=target.parent,
        model=model,
        parent_model=parent_model_name(target, upload.parent_model),
    )


def find_uploaded(
    client: aiplatform_v1.ModelServiceClient, target: Target, parent_model: str, key: str
) -> str | None:
    """The `name@version` an earlier attempt of this task registered, if any."""
    flt = f'labels.{TASK_LABEL}="{key}"'
    found: Iterable[aiplatform_v1.Model]  # a pager of either kind
    if parent_model:
        found = client.list_model_versions(request={"name": parent_model, "filter": flt})
    else:
        found = client.list_models(request={"parent": target.parent, "filter": flt})
    versions = sorted(found, key=lambda model: int(model.version_id or 0))
    return f"{versions[-1].name}@{versions[-1].version_id}" if versions else None


def upload_key(target: Target, upload: Upload, pipeline_run: str, task: str) -> str:
    """The `vtp-task` label of this upload: run, task, and a digest of what is registered.

    The digest tells the iterations of a `dsl.ParallelFor` apart (they share the task name);
    a retried task registers the same model again, so it still finds its own version.
    """
    digest = job_digest(build_request(target, upload, "").model)
    return task_key(pipeline_run, f"{task}-{digest}")


def upload_model(target: Target, upload: Upload, key: str, gcp_resources: str) -> str:
    """Register `upload` (or find this task's earlier registration); return `name@version`.

    `gcp_resources` records the upload operation, as GCPC's upload does (`VertexLro`).
    """
    client = model_client(target)
    request = build_request(target, upload, key)
    existing = find_uploaded(client, target, request.parent_model, key)
    if existing:
        _log.info("Re-using %s, registered by an earlier attempt of this task", existing)
        resources.write(gcp_resources, "VertexModel", target.resource_uri(existing))
        return existing
    operation = client.upload_model(request=request)
    resources.write(gcp_resources, "VertexLro", target.resource_uri(operation.operation.name))
    response = operation.result(timeout=UPLOAD_TIMEOUT_SECONDS)
    name = f"{response.model}@{response.model_version_id}"
    _log.info("Registered %s", name)
    return name
