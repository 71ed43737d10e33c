"""`python -m trainer.serve`: serve an exported model directory as a Vertex AI prediction container.

The project's image serves the models our pipelines register: `upload_model` puts this command,
port 8080 and the routes /predict and /health in the model's containerSpec. Vertex AI's custom
container contract, all read from the environment:

    AIP_HTTP_PORT      port to listen on, on 0.0.0.0 (default 8080; Vertex: containerSpec.ports[0])
    AIP_HEALTH_ROUTE   GET: 200 once the model is loaded, 503 while it loads (default /health)
    AIP_PREDICT_ROUTE  POST: predictions (default /predict)
    AIP_STORAGE_URI    the model directory: Vertex's copy of the model's artifactUri (gs://)
    VTP_SERVE_HOST     the address to listen on (default 0.0.0.0, as in a container; the local
                       service sets 127.0.0.1, so a local model is not on the network)

For the digits task (64 pixels in, 10 classes out):

    POST {"instances": [[64 floats], ...], "parameters": {}}
    200  {"predictions": [{"label": "7", "index": 7, "probabilities": [10 floats]}, ...]}
    400  {"error": "instances[2] has shape [63]; each instance must have shape [64] ..."}

The directory is export_model's (trainer.export); trainer.predict documents the predictions and
how the directory is found. Errors are JSON too: 400 names what is wrong with the request, 404
and 405 the routes there are, 503 means the model is still loading. Exit statuses: 2 for a bad
environment, 1 when the model cannot be loaded or the port is taken.

Why the standard library's ThreadingHTTPServer: two JSON routes need no framework, the image gains
no dependency, and requests run in threads while torch's kernels release the GIL.
"""

import argparse
import json
import os
import sys
import threading
import traceback
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from trainer.predict import BadRequest, ModelError, Predictor, model_dir

MAX_BODY_BYTES = 64 * 1024 * 1024
"""Larger bodies get 413 (Vertex itself forwards at most a few MB per request)."""


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


class Server(ThreadingHTTPServer):
    """The HTTP server on host:AIP_HTTP_PORT; `predictor` is None until the model is loaded."""

    daemon_threads = True

    def __init__(self, config: ServeConfig) -> None:
        super().__init__((config.host, config.port), Handler)
        self.config = config
        self.predictor: Predictor | None = None
        self.failure = ""

    def load(self) -> None:
        """Load the model (in a thread: the port answers while it loads), or shut down."""
        try:
            self.predictor = Predictor.load(model_dir(self.config.storage_uri))
        except ModelError as exc:
            self.failure = str(exc)
        except Exception as exc:  # a malformed export.json, say: stop rather than answer 503
            self.failure = f"cannot load the model at {self.config.storage_uri}: {exc!r}"
        if self.failure:
            self.shutdown()
            return
        config = self.config
        print(
            f"trainer.serve: serving {config.storage_uri} on {config.host}:{config.port} "
            f"(GET {config.health_route}, POST {config.predict_route})",
            flush=True,
        )


class Handler(BaseHTTPRequestHandler):
    """GET the health route, POST the predict route; every answer is JSON."""

    protocol_version = "HTTP/1.1"  # keep-alive: Vertex's front end reuses connections
    server: Server

    def do_GET(self) -> None:
        """Health: 200 once the model is loaded, 503 before."""
        if self._accept("GET", self.server.config.health_route) is None:
            return
        if self.server.predictor is None:
            self._loading()
        else:
            self._answer(200, {"status": "ready"})

    def do_POST(self) -> None:
        """Predict: 200 with predictions, 400 for a malformed request."""
        body = self._accept("POST", self.server.config.predict_route)
        if body is None:
            return
        if self.server.predictor is None:
            return self._loading()
        try:
            predictions = self.server.predictor.predict(json.loads(body))
        except json.JSONDecodeError as exc:
            return self._answer(400, {"error": f"the body is not JSON: {exc}"})
        except BadRequest as exc:
            return self._answer(400, {"error": str(exc)})
        except Exception as exc:
            traceback.print_exc()
            return self._answer(500, {"error": f"prediction failed: {exc}"})
        self._answer(200, {"predictions": predictions})

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        """Log refused requests only: a line per prediction or health check would flood logs."""
        if not str(code).startswith("2") and str(code) != "503":
            super().log_request(code, size)

    def _accept(self, method: str, route: str) -> bytes | None:
        """The body of a `method` request on `route`; None after answering with an error."""
        body = self._read_body()
        path = urllib.parse.urlsplit(self.path).path
        if body is None or path == route:
            return body
        routes = {self.server.config.health_route: "GET", self.server.config.predict_route: "POST"}
        if path in routes:
            self._answer(405, {"error": f"{path} takes {routes[path]}, not {method}"})
        else:
            known = ", ".join(f"{verb} {known}" for known, verb in routes.items())
            self._answer(404, {"error": f"no route {path}; this server has {known}"})
        return None

    def _read_body(self) -> bytes | None:
        # Read it even for a refused request, so that the kept-alive connection stays in step.
        length = self.headers.get("Content-Length") or "0"
        if length.isdigit() and int(length) <= MAX_BODY_BYTES:
            return self.rfile.read(int(length))
        self.close_connection = True  # the body stays unread
        if not length.isdigit():
            self._answer(400, {"error": f"Content-Length {length!r} is not a number"})
        else:
            self._answer(413, {"error": f"the body is over {MAX_BODY_BYTES} bytes"})
        return None

    def _loading(self) -> None:
        self._answer(503, {"error": f"loading the model from {self.server.config.storage_uri}"})

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, allow_nan=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main(argv: list[str] | None = None) -> int:
    """Serve until stopped; the exit status says why it stopped early."""
    argparse.ArgumentParser(
        prog="python -m trainer.serve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    ).parse_args(argv)
    try:
        config = ServeConfig.from_env(os.environ)
    except ValueError as exc:
        print(f"trainer.serve: error: {exc}", file=sys.stderr)
        return 2
    try:
        server = Server(config)
    except OSError as exc:
        print(f"trainer.serve: error: cannot listen on port {config.port}: {exc}", file=sys.stderr)
        return 1
    print(
        f"trainer.serve: listening on {config.host}:{config.port}, loading {config.storage_uri}",
        flush=True,
    )
    threading.Thread(target=server.load, name="load-model", daemon=True).start()
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            return 130
    print(f"trainer.serve: error: {server.failure}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
