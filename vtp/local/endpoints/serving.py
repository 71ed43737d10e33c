"""A deployed model's serving container, run as a host process the way replicas run.

The model's `containerSpec` says what to run: its `command` and `args`, or for this project's
image `python -m vtp.trainer.serve`, or for Google's prebuilt XGBoost and scikit-learn prediction
images the stand-in `prebuilt_server.py`, for the PyTorch ones TorchServe behind
`torchserve_server.py` and for the TensorFlow 2 ones `tf_serving_server.py` (`prebuilt.py` plans
them); any other image without a command is refused before the deploy starts. The process gets
Vertex's serving variables with a free loopback port:

    AIP_HTTP_PORT        the port it must listen on (not containerSpec.ports: that is the
                         container's, and many models may run here at once)
    AIP_HEALTH_ROUTE     containerSpec.healthRoute, else Vertex's default for the deployed model
    AIP_PREDICT_ROUTE    containerSpec.predictRoute, likewise
    AIP_STORAGE_URI      the model's artifactUri (gs://, under the local storage root)
    AIP_DEPLOYED_MODEL_ID, AIP_ENDPOINT_ID, AIP_MACHINE_TYPE

plus a container's environment (what replicas start from, `container_environment`: none of the
service's shell, and not the service's token or client settings, since a model server calls
nothing back) and the storage root. The deploy operation completes once the health route answers
200; a process that exits first fails it with its log's last lines. Logs go to
`<state-dir>/endpoints/<endpoint>/<deployed id>.log`.

Only the service may call a server (docs/security.md):

- Each server gets a random secret in a file of mode 0600 that `vtp.trainer.serve` reads and deletes
  at start (VTP_SERVE_SECRET_FILE names it): argv would show it to every user in `ps`, and the
  environment would keep it in /proc/<pid>/environ and hand it to every child. The service sends
  it as `Authorization: Bearer` with every request it forwards; the server checks it with
  `hmac.compare_digest`, and checks Host (loopback, its port), Origin (none), JSON bodies and the
  service's own body limit before it reads anything.
- The variables that make this so (the port, VTP_SERVE_HOST=127.0.0.1, the secret file, the
  allowed task modules, PYTHONSAFEPATH) are the service's: the model's `containerSpec.env` does
  not override them, and its PYTHONPATH entries under the storage root are dropped.
- What a server of ours loads (for `vtp.trainer.serve` export.json, config.json and model.pt; for
  a prebuilt image's stand-in its model file) must be a regular file inside the storage root: a
  link that leads out of it, as the storage API refuses one, fails the deploy request naming the
  file (`model_files.py`), and the server itself loads from a checked private copy
  (`vtp.trainer.serve_files`), so a link swapped in after the deploy looked stops it instead.
- A model served with `vtp.trainer.serve` must name in config.json a task the image has: one of
  `vtp.trainer.tasks`' own modules or one the operator lists in VTP_SERVING_MODULES when starting
  the service. Anything else fails the deploy request before a process starts; the server checks
  again before it imports the task.
"""

import importlib.util
import itertools
import json
import os
import pkgutil
import secrets
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
from typing import Any

from google.cloud import aiplatform_v1

from vtp.local.base import errors, stored_files
from vtp.local.base.config import ServiceConfig
from vtp.local.endpoints.model_files import check_model_files
from vtp.local.endpoints.prebuilt import pickle_allowed, plan_prebuilt, prebuilt_framework
from vtp.local.runtime.cluster import container_environment
from vtp.local.runtime.launch import container_command
from vtp.local.runtime.process import SERVICE_ENV, signal_group, spawn
from vtp.storage import GCS_ROOT_ENV, path_under

SERVE_COMMAND = ("python", "-m", "vtp.trainer.serve")
SERVE_MODULE = "vtp.trainer.serve"
TASKS_PACKAGE = "vtp.trainer.tasks"
SERVING_MODULES_ENV = "VTP_SERVING_MODULES"
"""The operator's list of task modules models may name besides the trainer's own (comma-
separated, in the service's environment); `vtp.trainer.tasks.SERVING_MODULES_ENV` reads it."""
SECRET_FILE_ENV = "VTP_SERVE_SECRET_FILE"
"""`vtp.trainer.serve.SECRET_FILE_ENV`: where a server finds its secret."""
SERVED_FILES = ("export.json", "config.json", "model.pt")
"""`vtp.trainer.serve.SERVED_FILES` (named here without importing torch): what its server loads,
each checked at deploy to be a regular file inside the storage root (`model_files`)."""
READY_TIMEOUT_SECONDS = 300.0
PREDICT_TIMEOUT_SECONDS = 120.0
DEFAULT_MACHINE_TYPE = "n1-standard-2"
"""What Vertex serves on when a deployment names no machine type."""


@dataclass(frozen=True)
class ServingPlan:
    """What to run for one deployed model, decided (and checked) before the deploy starts."""

    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    health_route: str
    predict_route: str
    storage_uri: str
    serving_modules: tuple[str, ...] = ()
    """Task modules the operator allows besides the trainer's own (VTP_SERVING_MODULES)."""
    service_env: tuple[tuple[str, str], ...] = ()
    """Variables only the service sets (a prebuilt image's model file): the model's env does
    not override them."""


def plan_serving(
    model: aiplatform_v1.Model,
    endpoint_id: str,
    deployed_id: str,
    project_images: tuple[str, ...],
    storage_root: Path,
    serving_modules: tuple[str, ...] = (),
    environ: Mapping[str, str] | None = None,
) -> ServingPlan:
    """The serving plan of `model`; FAILED_PRECONDITION when it cannot be served here, a model
    for `vtp.trainer.serve` whose config.json names a task it may not import included, and a
    prebuilt image's pickle-based model file unless `environ` (the service's) allows it."""
    spec = model.container_spec
    if not spec.image_uri:
        raise errors.failed_precondition(
            f"Model {model.name} has no containerSpec: the local service serves custom-container "
            "models only (upload it with a serving container image)."
        )
    where = f"Model {model.name} containerSpec"
    service_env: tuple[tuple[str, str], ...] = ()
    if not spec.command and prebuilt_framework(spec.image_uri):
        allow = pickle_allowed(os.environ if environ is None else environ)
        command, service_env = plan_prebuilt(
            where, spec.image_uri, model.artifact_uri, storage_root, allow
        )
        argv = container_command(where, spec.image_uri, command, spec.args, (), project_images)
    else:
        argv = container_command(
            where, spec.image_uri, spec.command, spec.args, SERVE_COMMAND, project_images
        )
    if runs_trainer_serve(argv):
        check_task(model, storage_root, serving_modules)
        where = f"Model {model.name} (artifactUri {model.artifact_uri})"
        check_model_files(storage_root, model.artifact_uri, SERVED_FILES, where)
    return ServingPlan(
        argv=argv,
        serving_modules=serving_modules,
        service_env=service_env,
        **from_model(model, endpoint_id, deployed_id),
    )


def from_model(model: aiplatform_v1.Model, endpoint_id: str, deployed_id: str) -> dict[str, Any]:
    """What every plan takes from the model as Vertex reads it: its containerSpec's `env`, its
    health and predict routes (Vertex's defaults are under the deployed model's path), and the
    URI of its artifacts."""
    spec = model.container_spec
    default = f"/v1/endpoints/{endpoint_id}/deployedModels/{deployed_id}"
    return {
        "env": tuple((e.name, e.value) for e in spec.env),
        "health_route": spec.health_route or default,
        "predict_route": spec.predict_route or f"{default}:predict",
        "storage_uri": model.artifact_uri,
    }


def operator_modules(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The task modules the operator allows in VTP_SERVING_MODULES (the service's environment)."""
    names = (name.strip() for name in environ.get(SERVING_MODULES_ENV, "").split(","))
    return tuple(sorted({name for name in names if name}))


def runs_trainer_serve(argv: tuple[str, ...]) -> bool:
    """True when `argv` is `<python> [flags] -m vtp.trainer.serve ...`."""
    return any(a == "-m" and b == SERVE_MODULE for a, b in itertools.pairwise(argv))


def builtin_tasks() -> frozenset[str]:
    """`vtp.trainer.tasks.builtin_tasks()` without importing vtp.trainer.tasks (and torch) here: the
    modules of the installed package, found by name, none of them run."""
    spec = importlib.util.find_spec(TASKS_PACKAGE)
    places = list(spec.submodule_search_locations or []) if spec else []
    modules = pkgutil.iter_modules(places)
    return frozenset(f"{TASKS_PACKAGE}.{m.name}" for m in modules if not m.ispkg)


def check_task(model: aiplatform_v1.Model, storage_root: Path, allowed: tuple[str, ...]) -> None:
    """FAILED_PRECONDITION unless the model's config.json (read as JSON; nothing is imported)
    names a task `vtp.trainer.serve` may import: the trainer's own or one in `allowed`."""
    where = f"Model {model.name} (artifactUri {model.artifact_uri or '(none)'})"
    try:
        config_file = path_under(storage_root, model.artifact_uri) / "config.json"
        what = f"{model.artifact_uri.rstrip('/')}/config.json"
        text = stored_files.read_text(storage_root, config_file, 1 << 20, what)
        config = json.loads(text)
    except (ValueError, RecursionError) as exc:  # StoredFileError included
        raise errors.failed_precondition(
            f"{where} cannot be served by vtp.trainer.serve: its config.json cannot be read: {exc}"
        ) from None
    task = config.get("task") if isinstance(config, dict) else None
    builtin = builtin_tasks()
    # `trainer.tasks.X`: a built-in task exported before the project's modules moved under vtp.
    if isinstance(task, str) and (task in builtin or f"vtp.{task}" in builtin or task in allowed):
        return
    raise errors.failed_precondition(
        f"{where}: its config.json names task {task!r}, which vtp.trainer.serve does not import. "
        "It "
        f"serves the trainer's own tasks ({', '.join(sorted(builtin))}) and the modules the "
        f"operator lists in {SERVING_MODULES_ENV} when starting `vtp local serve`; a model's "
        "files never choose what code runs."
    )


@dataclass(frozen=True)
class Placement:
    """Where a model server runs, as its AIP_ variables name it: the endpoint (for a batch
    prediction job's server, the job), the deployed model, and the machine type (Vertex's default
    one when the request named none)."""

    endpoint_id: str
    deployed_id: str
    machine_type: str = ""


class ModelServer:
    """One serving process on 127.0.0.1:`port`."""

    def __init__(self, plan: ServingPlan, log: Path, port: int | None = None) -> None:
        self.plan = plan
        self.log = log
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self._secret = secrets.token_urlsafe(32)
        self.secret_file = log.with_name(f".{log.stem}.secret")

    def start(self, env: Mapping[str, str], cwd: Path) -> None:
        """Write the secret file (mode 0600, new), then start the process (not yet ready: see
        `wait_ready`)."""
        self.secret_file.parent.mkdir(parents=True, exist_ok=True)
        self.secret_file.unlink(missing_ok=True)
        fd = os.open(self.secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as file:
            file.write(self._secret)
        self.process = spawn(self.plan.argv, env, cwd, self.log)

    def environment(self, base: Mapping[str, str], placement: Placement) -> dict[str, str]:
        """Vertex's serving variables over `base` (`serving_environment`), the model's own
        `env` over those, and over everything the variables only the service sets."""
        env = {
            **base,
            **self.vertex_variables(placement),
            **dict(self.plan.env),
        }
        storage_root = Path(base[GCS_ROOT_ENV]).resolve()
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        paths += [p for p in base.get("PYTHONPATH", "").split(os.pathsep) if p]
        kept = [
            p
            for p in dict.fromkeys(paths)
            if os.path.isabs(p) and not _inside(Path(p), storage_root)
        ]
        env.update(
            {
                "AIP_HTTP_PORT": str(self.port),
                "VTP_SERVE_HOST": "127.0.0.1",
                SECRET_FILE_ENV: str(self.secret_file),
                SERVING_MODULES_ENV: ",".join(self.plan.serving_modules),
                "PYTHONPATH": os.pathsep.join(kept),
                "PYTHONSAFEPATH": "1",  # `python -m` puts no working directory on sys.path
                **dict(self.plan.service_env),
            }
        )
        return env

    def vertex_variables(self, placement: Placement) -> dict[str, str]:
        """The AIP_ variables Vertex gives every model server, its port aside."""
        return {
            "AIP_HEALTH_ROUTE": self.plan.health_route,
            "AIP_PREDICT_ROUTE": self.plan.predict_route,
            "AIP_STORAGE_URI": self.plan.storage_uri,
            "AIP_DEPLOYED_MODEL_ID": placement.deployed_id,
            "AIP_ENDPOINT_ID": placement.endpoint_id,
            "AIP_MACHINE_TYPE": placement.machine_type or DEFAULT_MACHINE_TYPE,
        }

    def auth_headers(self) -> dict[str, str]:
        """What every request to the server carries: its secret, which only the service holds."""
        return {"Authorization": f"Bearer {self._secret}"}

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
                request = urllib.request.Request(url, headers=self.auth_headers())
                with urllib.request.urlopen(request, timeout=5) as answer:
                    if answer.status == 200:
                        return ""
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        return f"the serving process was not healthy at {url} within {timeout:.0f} s."

    def predict(self, body: bytes) -> tuple[int, bytes]:
        """POST `body` to the predict route: (status, response body)."""
        url = f"http://127.0.0.1:{self.port}{self.plan.predict_route}"
        headers = {**self.auth_headers(), "Content-Type": "application/json"}
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
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
        self.secret_file.unlink(missing_ok=True)  # left behind if the process never read it
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
    project_dir: Path | None,
    service_id: str,
    passed: tuple[str, ...] = (),
) -> dict[str, str]:
    """What a serving process starts from: a replica's container environment (none of the
    service's shell but what `--pass-env` names), the project on the import path as the image
    has it, the storage root; not the service's token nor its client settings."""
    env = container_environment(inherited, str(Path(sys.executable).parent), passed)
    paths = [str(project_dir or ""), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(filter(None, paths)))
    env.update({GCS_ROOT_ENV: str(storage_root), "PYTHONUNBUFFERED": "1", SERVICE_ENV: service_id})
    return env


def service_serving_environment(config: ServiceConfig, service_id: str) -> dict[str, str]:
    """`serving_environment` for the servers of the service `config` describes: from this
    process's environment, with its storage root, project and `--pass-env` names."""
    return serving_environment(
        os.environ, config.storage_root, config.import_dir, service_id, config.pass_env
    )


def _inside(path: Path, root: Path) -> bool:
    resolved = path.resolve()
    return resolved == root or root in resolved.parents


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
