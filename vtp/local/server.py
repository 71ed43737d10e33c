"""The local Vertex service's HTTP front end on 127.0.0.1: every resource's routes, plus
operations, Cloud Logging and a health check.

    GET    /v1/projects/{p}/locations/{l}/operations/{id}            get an Operation
    POST   /v1/projects/{p}/locations/{l}/operations/{id}:wait       wait for an Operation
    POST   /v2/entries:list   Cloud Logging's entries.list over replica logs (`runtime/logs.py`):
           what `stream-logs` reads (resource.type="ml_job", resource.labels.job_id/task_name)
    GET    /healthz -> {"status": "ok"}

Each resource type is a package (RESOURCES below) shaped the same way: `store.py` (SQLite),
`service.py` (the API), `routes.py` (its REST methods) and `register(service, router)`. Errors
use Google's JSON shape.
"""

import importlib
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from vtp.local.base import errors
from vtp.local.base.guard import REQUEST_TIMEOUT_SECONDS, Guard
from vtp.local.base.routing import OPERATIONS_PARENT, Request, Router, list_page, operation_routes
from vtp.local.custom_jobs.service import LocalVertex
from vtp.vertex import local_auth

_log = logging.getLogger(__name__)

RESOURCES: tuple[str, ...] = (
    "vtp.local.custom_jobs",
    "vtp.local.tuning",
    "vtp.local.models",
    "vtp.local.pipeline_jobs",
    "vtp.local.schedules",
)
"""Packages that add a resource type's routes (`register(service, router)`)."""


def build_router(service: LocalVertex) -> Router:
    """Every route of the service: each resource's, operations, logging, health."""
    router = Router()
    operation_routes(router, OPERATIONS_PARENT, service.get_operation)
    router.add("POST", "/v2/entries:list", lambda r: _entries(service, r))
    router.add("GET", "/healthz", lambda _request: '{"status": "ok"}')
    for name in RESOURCES:
        importlib.import_module(name).register(service, router)
    return router


def _entries(service: LocalVertex, request: Request) -> str:
    body = request.json()
    size = body.get("pageSize", 0)
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise errors.invalid_argument(f"Invalid pageSize {size!r}: expected an integer.")
    names = body.get("resourceNames") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise errors.invalid_argument("Invalid resourceNames: expected a list of strings.")
    texts = {key: body.get(key) or "" for key in ("filter", "orderBy", "pageToken")}
    for key, value in texts.items():
        if not isinstance(value, str):
            raise errors.invalid_argument(f"Invalid {key} {value!r}: expected a string.")
    found, token = service.list_log_entries(
        names, texts["filter"], texts["orderBy"], size, texts["pageToken"]
    )
    return list_page("entries", found, token)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT_SECONDS  # applied to the socket: no read waits forever
    server: "Server"

    def _handle(self) -> None:
        try:
            length = self.server.guard.check(self.command, self.path, self.headers)
            body = self.rfile.read(length) if length else b""
            if len(body) < length:  # the client stopped sending: nobody to answer
                self.close_connection = True
                return
            status, text = self.server.router.dispatch(self.command, self.path, body)
        except errors.ApiError as exc:  # refused before the body was read: close after answering
            self.close_connection = True
            status, text = exc.http_status, exc.to_json()
        except TimeoutError:
            self.close_connection = True
            return
        except Exception:  # a bug: answer like Google's front end would, keep serving
            _log.exception("internal error on %s %s", self.command, self.path)
            error = errors.ApiError(errors.INTERNAL, "Internal error encountered.")
            status, text = error.http_status, error.to_json()
        payload = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(payload)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = _handle

    def log_message(self, format: str, *args: object) -> None:
        _log.debug("%s %s", self.address_string(), format % args)


class Server(ThreadingHTTPServer):
    """The HTTP server of one LocalVertex, bound to 127.0.0.1 only."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, service: LocalVertex) -> None:
        self.service = service
        self.router = build_router(service)
        super().__init__(("127.0.0.1", service.config.port), _Handler)
        self.guard = Guard(self.server_address[1], service.token)
        service.url = self.url  # pipeline runs the service starts call it back here

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`: what VTP_LOCAL_ENDPOINT and api_endpoint take."""
        return f"http://127.0.0.1:{self.server_address[1]}"


class Running:
    """A service serving in a background thread: `with running(config) as r: r.url`."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.service = server.service
        self.url = server.url
        self.token = server.service.token
        config = self.service.config
        self.runtime_file = local_auth.publish(self.url, config.state_dir, config.storage_root)
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="http", daemon=True
        )

    def __enter__(self) -> "Running":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving, stop every replica (their jobs are queued again), close the state."""
        local_auth.withdraw(self.runtime_file)
        self.server.shutdown()
        self.server.server_close()
        self.service.close()


def running(service: LocalVertex) -> Running:
    """Start `service` and serve it in a background thread (use as a context manager)."""
    server = Server(service)  # bind first: a busy port fails before anything starts
    try:
        service.start()
    except BaseException:
        server.server_close()
        service.close()
        raise
    return Running(server)
