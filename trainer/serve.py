"""`python -m vtp.trainer.serve`: serve an exported model directory as a Vertex prediction server.

The project's image serves the models our pipelines register: `upload_model` puts this command,
port 8080 and the routes /predict and /health in the model's containerSpec. Vertex AI's custom
container contract, all read from the environment:

    AIP_HTTP_PORT      port to listen on, on 0.0.0.0 (default 8080; Vertex: containerSpec.ports[0])
    AIP_HEALTH_ROUTE   GET: 200 once the model is loaded, 503 while it loads (default /health)
    AIP_PREDICT_ROUTE  POST: predictions (default /predict)
    AIP_STORAGE_URI    the model directory: Vertex's copy of the model's artifactUri (gs://)
    VTP_SERVE_HOST     the address to listen on (default 0.0.0.0, as in a container; the local
                       service sets 127.0.0.1, so a local model is not on the network)
    VTP_SERVE_SECRET_FILE  set by the local service only: a file (mode 0600) holding the secret
                       every request must carry as `Authorization: Bearer <secret>`; the server
                       reads it and deletes it at start. With it, the server also listens on
                       loopback only and answers only requests whose Host is 127.0.0.1:<port>
                       or localhost:<port> and that carry no Origin: only the service calls it.
    VTP_SERVING_MODULES    task modules the server may import besides the built-in ones

For the digits task (64 pixels in, 10 classes out):

    POST {"instances": [[64 floats], ...], "parameters": {}}
    200  {"predictions": [{"label": "7", "index": 7, "probabilities": [10 floats]}, ...]}
    400  {"error": "instances[2] has shape [63]; each instance must have shape [64] ..."}

A task with its own `predictions` (vtp.trainer.tasks) answers with them: the diabetes regression's
are numbers, `{"predictions": [151.2, 87.9]}`.

The directory is export_model's (vtp.trainer.export); vtp.trainer.predict documents the predictions
and how the directory is found. Nothing in it chooses code: config.json's `task` must be one of the
trainer's own tasks or a module listed in VTP_SERVING_MODULES (vtp.trainer.tasks.serving_tasks), or
the model is not loaded; the working directory, the storage root and the model directory are
taken off the import path first. Nor is anything read from outside the storage root: export.json,
config.json and model.pt are copied, each checked as the storage API checks what it serves (a
regular file, no link leading out of the root; `vtp.trainer.serve_files`), into a private folder
the model loads from, and a link planted in place of one stops the server, naming it.

Errors are JSON too: 400 names what is wrong with the request, 401/403 refuse a caller (local
service only), 404 and 405 say no more than their names, 413 a body over the local service's
limit, 415 a body that is not application/json, 503 means the model is still loading. Exit
statuses: 2 for a bad environment, 1 when the model cannot be loaded or the port is taken.

Why the standard library's ThreadingHTTPServer: two JSON routes need no framework, the image gains
no dependency, and requests run in threads while torch's kernels release the GIL.
"""

import argparse
import hmac
import json
import os
import sys
import threading
import traceback
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from vtp import storage
from vtp.http_limits import LOOPBACK_NAMES, REQUEST_TIMEOUT_SECONDS, BodyRefused, declared_length
from vtp.trainer.export import CONFIG_FILE, METADATA_FILE, MODEL_FILE
from vtp.trainer.predict import BadRequest, ModelError, Predictor, model_dir
from vtp.trainer.serve_files import UnsafeModelFile, private_copy, storage_root_for
from vtp.trainer.tasks import builtin_tasks, servable_task, serving_tasks

SECRET_FILE_ENV = "VTP_SERVE_SECRET_FILE"
"""Where the local service put this server's secret (read and deleted at start)."""
VERTEX_IDLE_SECONDS = 620.0
"""Idle keep-alive on Vertex: longer than the 600 s its front end keeps a connection idle."""

LOOPBACK_HOSTS = ("127.0.0.1", "localhost")
SERVED_FILES = (METADATA_FILE, CONFIG_FILE, MODEL_FILE)
"""What serving reads of a model directory (and all it reads): copied, checked, before loading."""


@dataclass(frozen=True)
class ServeConfig:
    """What Vertex tells the container through AIP_* variables."""

    storage_uri: str
    port: int = 8080
    health_route: str = "/health"
    predict_route: str = "/predict"
    host: str = "0.0.0.0"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> "ServeConfig":
        """The config in `env`; ValueError names the variable that is missing or malformed."""
        uri = env.get("AIP_STORAGE_URI", "")
        if not uri:
            raise ValueError("AIP_STORAGE_URI is not set: register the model with an artifactUri")
        port = env.get("AIP_HTTP_PORT") or "8080"
        if not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"AIP_HTTP_PORT={port!r} is not a port number")
        health = env.get("AIP_HEALTH_ROUTE") or cls.health_route
        predict = env.get("AIP_PREDICT_ROUTE") or cls.predict_route
        for name, route in (("AIP_HEALTH_ROUTE", health), ("AIP_PREDICT_ROUTE", predict)):
            if not route.startswith("/"):
                raise ValueError(f"{name}={route!r} is not a path (it must start with /)")
        host = env.get("VTP_SERVE_HOST") or cls.host
        return cls(uri, int(port), health, predict, host)


def take_secret(env: Mapping[str, str]) -> str:
    """The secret in the file VTP_SERVE_SECRET_FILE names, which is deleted; "" without one.

    A file, not argv (which `ps` shows every user) nor the environment (which stays in
    /proc/<pid>/environ for the process's life and is inherited by everything it starts)."""
    path = env.get(SECRET_FILE_ENV)
    if not path:
        return ""
    try:
        secret = Path(path).read_text().strip()
        Path(path).unlink()
    except OSError as exc:
        raise ValueError(f"{SECRET_FILE_ENV}={path!r} cannot be read: {exc}") from None
    if not secret:
        raise ValueError(f"{SECRET_FILE_ENV}={path!r} is empty")
    return secret


def configured_task(directory: Path, allowed: frozenset[str]) -> str:
    """The task config.json names, read as JSON; ModelError unless serving may import it."""
    try:
        config = json.loads((directory / CONFIG_FILE).read_text())
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {directory / CONFIG_FILE}: {exc}") from exc
    try:
        return servable_task(config.get("task") if isinstance(config, dict) else None, allowed)
    except ValueError as exc:
        raise ModelError(f"{directory / CONFIG_FILE}: {exc}") from None


def keep_off_import_path(config: ServeConfig, env: Mapping[str, str]) -> None:
    """Take off sys.path what a model's files could shadow or add modules through: the working
    directory (`python -m` puts it first), the storage root and the model directory."""
    cwd = os.getcwd()
    roots = [storage.local_path(config.storage_uri)]
    if env.get(storage.GCS_ROOT_ENV):
        roots.append(Path(env[storage.GCS_ROOT_ENV]))
    blocked = [root.resolve() for root in roots]

    def reachable(entry: str) -> bool:
        if entry in ("", ".", cwd):
            return False
        path = Path(entry).resolve()
        return not any(path == root or root in path.parents for root in blocked)

    sys.path[:] = [entry for entry in sys.path if reachable(entry)]


class ModelPredictor(Protocol):
    """What the server asks of a loaded model (`Predictor`, or a stand-in's): predictions for a
    parsed request body, BadRequest for a malformed one."""

    def predict(self, body: Any) -> list[Any]:
        """One prediction per instance."""
        ...


class Refused(Exception):
    """A request answered with `status` and `message` before its body is read."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Server(ThreadingHTTPServer):
    """The HTTP server on host:AIP_HTTP_PORT; `predictor` is None until the model is loaded.

    With a `secret` (the local service's), every request must carry it, with a loopback Host
    of this port and no Origin."""

    daemon_threads = True
    allow_nan = False
    """Whether answers may hold NaN and Infinity (JSON has no such numbers; TF Serving's
    answers do)."""

    def __init__(
        self, config: ServeConfig, secret: str = "", tasks: frozenset[str] | None = None
    ) -> None:
        super().__init__((config.host, config.port), Handler)
        self.config = config
        self.secret = secret.encode()
        self.hosts = frozenset(f"{name}:{config.port}" for name in LOOPBACK_NAMES)
        self.tasks = builtin_tasks() if tasks is None else tasks
        self.predictor: ModelPredictor | None = None
        self.failure = ""

    def load(self) -> None:
        """Load the model (in a thread: the port answers while it loads), or shut down."""
        try:
            self.predictor = self.load_checked(model_dir(self.config.storage_uri))
        except (ModelError, UnsafeModelFile) as exc:
            self.failure = str(exc)
        except Exception as exc:  # a malformed export.json, say: stop rather than answer 503
            self.failure = f"cannot load the model at {self.config.storage_uri}: {exc!r}"
        if self.failure:
            self.shutdown()
            return
        config = self.config
        print(
            f"vtp.trainer.serve: serving {config.storage_uri} on {config.host}:{config.port} "
            f"(GET {config.health_route}, POST {config.predict_route})",
            flush=True,
        )

    def load_checked(self, directory: Path) -> ModelPredictor:
        """The model in `directory`, loaded from a checked private copy of its files
        (`serve_files`): a link in storage that leads out of it is refused, naming the file, and
        one swapped in after the check is never read. Errors name the model's URI, not the copy."""
        uri = self.config.storage_uri
        with private_copy(directory, SERVED_FILES, storage_root_for(uri, directory), uri) as copy:
            try:
                configured_task(copy, self.tasks)  # a clear refusal before anything loads
                # ...and again on the very config.json the model is built from.
                return Predictor.load(copy, lambda t: servable_task(t, self.tasks))
            except ModelError as exc:
                raise ModelError(str(exc).replace(str(copy), uri)) from None

    def respond(self, body: Any) -> dict[str, Any]:
        """The answer to a predict request's parsed `body` once the model is loaded:
        `{"predictions": [...]}`; BadRequest for a malformed body. A stand-in whose image answers
        in another shape (TF Serving's `outputs`) overrides it."""
        if self.predictor is None:
            raise RuntimeError("the model is not loaded")
        return {"predictions": self.predictor.predict(body)}

    def check_origin(self, headers: Any) -> None:
        """Refused (403) unless Host is this server's loopback name and port and no Origin is
        sent (with a secret: the local service's server)."""
        if self.secret and (
            headers.get("Host", "").lower() not in self.hosts or headers.get("Origin") is not None
        ):
            raise Refused(403, "forbidden")

    def check_secret(self, headers: Any) -> None:
        """Refused (401) unless the request carries the secret (with a secret)."""
        if not self.secret:
            return
        scheme, _, presented = headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            presented.strip().encode(), self.secret
        ):
            raise Refused(401, "unauthenticated")


class Handler(BaseHTTPRequestHandler):
    """GET the health route, POST the predict route; every answer is JSON."""

    protocol_version = "HTTP/1.1"  # keep-alive: Vertex's front end reuses connections
    server: Server

    def setup(self) -> None:
        """An idle connection is closed after the local service's timeout; on Vertex (no
        secret) only after longer than its front end keeps one idle (600 s), so a reused
        connection never meets a close (a 502 to the caller)."""
        super().setup()
        idle = REQUEST_TIMEOUT_SECONDS if self.server.secret else VERTEX_IDLE_SECONDS
        self.connection.settimeout(idle)

    def do_GET(self) -> None:
        """Health: 200 once the model is loaded, 503 before."""
        if self._accept("GET") is None:
            return
        if self.server.predictor is None:
            self._loading()
        else:
            self._answer(200, {"status": "ready"})

    def do_POST(self) -> None:
        """Predict: 200 with predictions, 400 for a malformed request."""
        body = self._accept("POST")
        if body is None:
            return
        if self.server.predictor is None:
            return self._loading()
        try:
            answer = self.server.respond(json.loads(body))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
            return self._answer(400, {"error": f"the body is not JSON: {exc}"})
        except BadRequest as exc:
            return self._answer(400, {"error": str(exc)})
        except Exception as exc:
            traceback.print_exc()
            return self._answer(500, {"error": f"prediction failed: {exc}"})
        self._answer(200, answer)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Log refused requests only: a line per prediction or health check would flood logs."""
        if not str(code).startswith("2") and str(code) != "503":
            super().log_request(code, size)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a malformed request line, an unknown method) as JSON
        that names nothing but the status."""
        self.close_connection = True
        self._answer(code, {"error": _phrase(code)})

    def _accept(self, method: str) -> bytes | None:
        """The body of an admitted `method` request; None after refusing it. A refused request's
        body is never read: the connection closes instead."""
        try:
            length = self._admit(method)
        except Refused as exc:
            self.close_connection = True
            self._answer(exc.status, {"error": exc.message})
            return None
        return self.rfile.read(length)

    def _admit(self, method: str) -> int:
        """The length of the body to read; Refused names the status otherwise. What holds for
        every path comes first (the caller's Host and Origin, the body's length and type), then
        the secret, so a stranger learns nothing about the routes."""
        self.server.check_origin(self.headers)
        try:
            length = declared_length(self.headers)
        except BodyRefused as refused:
            raise Refused(refused.status, refused.message) from None
        if method == "POST":
            media = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            if media != "application/json":
                raise Refused(415, f"Content-Type {media or '(none)'!r}: send application/json")
        self.server.check_secret(self.headers)
        config = self.server.config
        path = urllib.parse.urlsplit(self.path).path
        if (path, method) not in ((config.health_route, "GET"), (config.predict_route, "POST")):
            found = path in (config.health_route, config.predict_route)
            raise Refused(405, _phrase(405)) if found else Refused(404, _phrase(404))
        return length

    def _loading(self) -> None:
        self._answer(503, {"error": f"loading the model from {self.server.config.storage_uri}"})

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, allow_nan=self.server.allow_nan).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase.lower()
    except ValueError:
        return "error"


def main(argv: list[str] | None = None) -> int:
    """Serve until stopped; the exit status says why it stopped early."""
    argparse.ArgumentParser(
        prog="python -m vtp.trainer.serve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ).parse_args(argv)
    return run("vtp.trainer.serve", _listening)


def run(name: str, make: Callable[[ServeConfig, str], Server]) -> int:
    """Serve with the server `make` builds from the environment's config and secret until
    stopped; the exit status says why it stopped early (2 bad settings, 1 no port or no model,
    130 interrupted). Errors are printed as `name: error: ...`."""
    try:
        config = ServeConfig.from_env(os.environ)
        secret = take_secret(os.environ)
        if secret and config.host not in LOOPBACK_HOSTS:
            raise ValueError(f"VTP_SERVE_HOST={config.host!r}: a local server listens on loopback")
    except ValueError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return 2
    keep_off_import_path(config, os.environ)
    try:
        server = make(config, secret)
    except OSError as exc:
        print(f"{name}: error: cannot listen on port {config.port}: {exc}", file=sys.stderr)
        return 1
    threading.Thread(target=server.load, name="load-model", daemon=True).start()
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            return 130
    print(f"{name}: error: {server.failure}", file=sys.stderr)
    return 1


def _listening(config: ServeConfig, secret: str) -> Server:
    server = Server(config, secret, serving_tasks(os.environ))
    print(
        f"vtp.trainer.serve: listening on {config.host}:{config.port}, "
        f"loading {config.storage_uri}",
        flush=True,
    )
    return server


if __name__ == "__main__":
    sys.exit(main())
