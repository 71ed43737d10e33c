"""A deployed model's own serving image, run as its container through the container engine.

With `ServiceConfig.container_engine` set (docs/containers.md), a model whose
`containerSpec.imageUri` is not this project's image, and is on this machine or can be pulled,
is served by that image as Vertex serves it: `command` replaces its entrypoint, `args` its CMD,
and it gets Vertex's serving variables by name:

    AIP_HTTP_PORT        containerSpec.ports[0].containerPort, else 8080: the port inside
    AIP_HEALTH_ROUTE, AIP_PREDICT_ROUTE, AIP_STORAGE_URI, AIP_DEPLOYED_MODEL_ID, AIP_ENDPOINT_ID,
    AIP_MACHINE_TYPE, AIP_MODE=PREDICTION, and the model's own `env`

The container has a network of its own; the engine publishes its port on 127.0.0.1 only, at a
free port of this machine, where the service (and nothing beyond this machine) reaches it. The
storage root is mounted read-only at /gcs, so `AIP_STORAGE_URI` (gs://bucket/path) is readable
at /gcs/bucket/path. The deploy completes once the health route answers 200, as for host
servers (`serving.ModelServer`, whose health checks, predictions, logs and stop this reuses);
undeploying stops the container and removes it (under Docker the container is the daemon's, not
below the client: `containers.remove` ends it).

What the service cannot do inside a user's image is what `vtp.trainer.serve` does for our own
servers: check the secret the service sends, Host and Origin (docs/security.md). What holds
instead: the port is published on loopback only, clients reach the model only through the
service's `:predict` (which checks the token, Host and Origin), and the container sees no token.

Models whose image is this project's, or one the engine cannot get, are served as before
(`serving.plan_serving`).
"""

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from google.cloud import aiplatform_v1

from vtp import containers
from vtp.local.endpoints.serving import (
    READY_TIMEOUT_SECONDS,
    ModelServer,
    Placement,
    ServingPlan,
    from_model,
)
from vtp.local.runtime.launch import is_project_image
from vtp.local.runtime.process import spawn
from vtp.storage import FUSE_ROOT

DEFAULT_PORT = 8080
"""Vertex's AIP_HTTP_PORT when containerSpec.ports names none."""


@dataclass(frozen=True)
class ImagePlan(ServingPlan):
    """A serving plan whose server is the model's image (`argv` is unused)."""

    engine: tuple[str, ...] = ()
    image: str = ""
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    container_port: int = DEFAULT_PORT
    storage_root: str = ""


def plan_in_image(
    model: aiplatform_v1.Model,
    endpoint_id: str,
    deployed_id: str,
    engine: tuple[str, ...],
    project_images: tuple[str, ...],
    storage_root: Path,
) -> ImagePlan | None:
    """The plan that serves `model` in its image; None without an engine, for this project's
    image, or for an image the engine has not and cannot pull (served as before then)."""
    spec = model.container_spec
    image = spec.image_uri
    if not engine or not image or is_project_image(image, project_images):
        return None
    if containers.image_problem(engine, image, os.environ):
        return None
    port = spec.ports[0].container_port if spec.ports else DEFAULT_PORT
    return ImagePlan(
        argv=(),
        **from_model(model, endpoint_id, deployed_id),
        engine=engine,
        image=image,
        command=tuple(spec.command),
        args=tuple(spec.args),
        container_port=port or DEFAULT_PORT,
        storage_root=str(storage_root.resolve()),
    )


class ImageServer(ModelServer):
    """One model's container, its port published on 127.0.0.1:`port`."""

    plan: ImagePlan

    def __init__(self, plan: ImagePlan, log: Path, port: int | None = None) -> None:
        super().__init__(plan, log, port)
        self.container = containers.container_name("serve", log.stem, secrets.token_hex(4))
        self._inside: list[str] = []
        self._problem = ""

    def environment(self, base: Mapping[str, str], placement: Placement) -> dict[str, str]:
        """Vertex's serving variables for the container, under the model's own `env`; with
        what the engine's client needs itself, and the service's id, by which the watchdog
        finds the server's processes if the service dies (Docker's are not below the client)."""
        service = {k: base[k] for k in [containers.SERVICE_VARIABLE] if k in base}
        inside = {
            **dict(self.plan.env),
            "AIP_HTTP_PORT": str(self.plan.container_port),
            **self.vertex_variables(placement),
            "AIP_MODE": "PREDICTION",
            **service,
        }
        self._inside = sorted(inside)
        workload = f"endpoints/{placement.endpoint_id}/deployedModels/{placement.deployed_id}"
        return containers.client_environment(inside, os.environ, workload)

    def start(self, env: Mapping[str, str], cwd: Path) -> None:
        """Start the engine's client, which runs the container (not yet ready: `wait_ready`);
        nothing where the engine cannot publish its port (`wait_ready` says why)."""
        plan = self.plan
        self._problem = containers.publish_problem(plan.engine, os.environ)
        if self._problem:
            return
        publish = ("--publish", f"127.0.0.1:{self.port}:{plan.container_port}")
        argv = containers.run_argv(
            plan.engine, self.container, plan.image, plan.command, plan.args, self._inside,
            [(plan.storage_root, f"{FUSE_ROOT}:ro")], network=publish,
        )  # fmt: skip
        cwd.mkdir(parents=True, exist_ok=True)
        self.process = spawn(argv, env, cwd, self.log)

    def wait_ready(self, timeout: float = READY_TIMEOUT_SECONDS) -> str:
        """Empty once the container's health route answers 200; else why not."""
        return self._problem or super().wait_ready(timeout)

    def auth_headers(self) -> dict[str, str]:
        """None: the user's server knows no secret (the module's docstring says what holds)."""
        return {}

    def stop(self, grace: float) -> None:
        """Stop the client (the container with it), then remove the container if it is left."""
        super().stop(grace)
        containers.remove(self.plan.engine, self.container, os.environ)


def server_for(plan: ServingPlan, log: Path) -> ModelServer:
    """The server that runs `plan`: its image's container, or a host process."""
    return ImageServer(plan, log) if isinstance(plan, ImagePlan) else ModelServer(plan, log)
