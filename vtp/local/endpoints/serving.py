"""A deployed model's serving container, run as a host process the way replicas run.

The model's `containerSpec` says what to run: its `command` and `args`, or for this project's
image `python -m trainer.serve`; any other image without a command is refused before the deploy
starts. The process gets Vertex's serving variables with a free loopback port:

    AIP_HTTP_PORT        the port it must listen on (not containerSpec.ports: that is the
                         container's, and many models may run here at once)
    AIP_HEALTH_ROUTE     containerSpec.healthRoute, else Vertex's default for the deployed model
    AIP_PREDICT_ROUTE    containerSpec.predictRoute, likewise
    AIP_STORAGE_URI      the model's artifactUri (gs://, under the local storage root)
    AIP_DEPLOYED_MODEL_ID, AIP_ENDPOINT_ID, AIP_MACHINE_TYPE

plus what every replica gets (a container's environment, the storage root, the client settings
that point back at the service). The deploy operation completes once the health route answers
200; a process that exits first fails it with its log's last lines. Logs go to
`<state-dir>/endpoints/<endpoint>/<deployed id>.log`.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from google.cloud import aiplatform_v1

from vtp.local.base import errors
from vtp.local.runtime.cluster import container_environment
from vtp.local.runtime.launch import container_command
from vtp.local.runtime.process import SERVICE_ENV, signal_group, spawn
from vtp.storage import GCS_ROOT_ENV

SERVE_COMMAND = ("python", "-m", "trainer.serve")
READY_TIMEOUT_SECONDS = 300.0
PREDICT_TIMEOUT_SECONDS = 120.0


@dataclass(frozen=True)
class ServingPlan:
    """What to run for one deployed model, decided (and checked) before the deploy starts."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    health_route: str
    predict_route: str
    storage_uri: str


def plan_serving(
    model: aiplatform_v1.Model, endpoint_id: str, deployed_id: str, project_images: tuple[str, ...]
) -> ServingPlan:
    """The serving plan of `model`; FAILED_PRECONDITION when it cannot be served here."""
    spec = model.container_spec
    if not spec.image_uri:
        raise errors.failed_precondition(
            f"Model {model.name} has no containerSpec: the local service serves custom-container "
            "models only (upload it with a serving container image)."
        )
    argv = container_command(
        f"Model {model.name} containerSpec", spec.image_uri, spec.command, spec.args,
        SERVE_COMMAND, project_images,
    )  # fmt: skip
    default = f"/v1/endpoints/{endpoint_id}/deployedModels/{deployed_id}"
    return ServingPlan(
        argv=argv,
        env=tuple((e.name, e.value) for e in spec.env),
        health_route=spec.health_route or default,
        predict_route=spec.predict_route or f"{default}:predict",
        storage_uri=model.artifact_uri,
    )


class ModelServer:
    """One serving process on 127.0.0.1:`port`."""

    def __init__(self, plan: ServingPlan, log: Path, port: int | None = None) -> None:
        self.plan = plan
        self.log = log
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None

    def start(self, env: Mapping[str, str], cwd: Path) -> None:
        """Start the process (not yet ready: see `wait_ready`)."""
        self.process = spawn(self.plan.argv, env, cwd, self.log)

    def environment(
        self,
        base: Mapping[str, str],
        endpoint_id: str,
        deployed_id: str,
        machine_type: str,
    ) -> dict[str, str]:
        """Vertex's serving variables over `base` (the service's replica environment)."""
        return {
            **base,
            "AIP_HTTP_PORT": str(self.port),
            "AIP_HEALTH_ROUTE": self.plan.health_route,
            "AIP_PREDICT_ROUTE": self.plan.predict_route,
            "AIP_STORAGE_URI": self.plan.storage_uri,
            "AIP_DEPLOYED_MODEL_ID": deployed_id,
            "AIP_ENDPOINT_ID": endpoint_id,
            "AIP_MACHINE_TYPE": machine_type,
            "VTP_SERVE_HOST": "127.0.0.1",
            **dict(self.plan.env),
        }

    def wait_ready(self, timeout: float = READY_TIMEOUT_SECONDS) -> str:
        """Empty once the health route answers 200; else why not (it ended, or timed out)."""
        deadline = time.monotonic() + timeout
        url = f"http://127.0.0.1:{self.port}{self.plan.health_route}"
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                return (
                    f"the serving process exited with status {code} before it was healthy. "
                    f"Its last lines:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    if answer.status == 200:
                        return ""
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        return f"the serving process was not healthy at {url} within {timeout:.0f} s."

    def predict(self, body: bytes) -> tuple[int, bytes]:
        """POST `body` to the predict route: (status, response body)."""
        url = f"http://127.0.0.1:{self.port}{self.plan.predict_route}"
        request = urllib.request.Request(
            url, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=PREDICT_TIMEOUT_SECONDS) as answer:
                return answer.status, answer.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
        except (urllib.error.URLError, OSError) as exc:
            message = json.dumps({"error": f"the model server did not answer: {exc}"})
            return 503, message.encode()

    def stop(self, grace: float) -> None:
        """SIGTERM the process group, SIGKILL after `grace` seconds."""
        if self.process is None or self.process.poll() is not None:
            return
        signal_group(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def log_tail(self, lines: int = 20) -> str:
        """The last lines the process wrote."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def serving_environment(
    inherited: Mapping[str, str],
    storage_root: Path,
    project_dir: Path,
    client_env: Mapping[str, str],
    service_id: str,
    passed: tuple[str, ...] = (),
) -> dict[str, str]:
    """What a serving process starts from: as a replica, without a cluster."""
    env = container_environment(inherited, str(Path(sys.executable).parent), passed)
    env.update(client_env)
    paths = [client_env.get("PYTHONPATH"), str(project_dir), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(filter(None, paths)))
    env.update({GCS_ROOT_ENV: str(storage_root), "PYTHONUNBUFFERED": "1", SERVICE_ENV: service_id})
    return env


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
