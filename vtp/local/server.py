"""The local Vertex service's HTTP front end on 127.0.0.1: every resource's routes, plus
operations, Cloud Logging and a health check. Beside it, the Vertex endpoint `localhost:PORT+1`
(`tls_front.py`) serves the same routes over TLS, as REST and as gRPC (`grpc_server.py`).

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
from typing import BinaryIO
from urllib.parse import parse_qs, urlsplit

from vtp.local import console
from vtp.local.base import errors
from vtp.local.base.guard import REQUEST_TIMEOUT_SECONDS, Guard
from vtp.local.base.routing import OPERATIONS_PARENT, Request, Router, list_page, operation_routes
from vtp.local.base.tls import server_identity
from vtp.local.custom_jobs.service import LocalVertex
from vtp.local.grpc_server import grpc_server
from vtp.local.storage.routes import Reply, StorageApi, StorageRequest, is_storage_path
from vtp.local.storage.uploads import remove_stale
from vtp.local.tls_front import TlsFront
from vtp.vertex import local_auth

_log = logging.getLogger(__name__)

RESOURCES: tuple[str, ...] = (
    "vtp.local.custom_jobs",
    "vtp.local.tuning",
    "vtp.local.models",
    "vtp.local.endpoints",
    "vtp.local.training_pipelines",
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
            media = is_storage_path(self.path)
            length = self.server.guard.check(self.command, self.path, self.headers, media)
            if media:
                self._storage(length)
                return
            if console.is_console_path(self.path):
                self.close_connection = self.close_connection or bool(length)
                root = self.server.service.config.storage_root
                self._send(console.serve(self.path, self.command, self.server.guard.session, root))
                return
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

    def _storage(self, length: int) -> None:
        """A Cloud Storage request: the body streams to its handler; media streams back."""
        body = _Body(self.rfile, length)
        url = urlsplit(self.path)
        query = parse_qs(url.query, keep_blank_values=True)
        request = StorageRequest(self.command, url.path, query, self.headers, body, length)
        try:
            reply = self.server.storage.handle(request)
        except ConnectionError:  # the client stopped sending: nobody to answer
            self.close_connection = True
            return
        if body.remaining:  # refused before reading: do not parse the rest as a request
            self.close_connection = True
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        if reply.status not in (204, 304):
            self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(reply.length if reply.file else len(reply.body)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if reply.file is None:
            self.wfile.write(reply.body)
            return
        with open(reply.file, "rb") as file:
            file.seek(reply.offset)
            _copy_exactly(file, self.wfile, reply.length)

    do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = _handle

    def log_message(self, format: str, *args: object) -> None:
        _log.debug("%s %s", self.address_string(), format % args)


class _Body:
    """A request body of a known length read from the connection: `read` never goes past it,
    and raises ConnectionError when the client stops before the end (so a cut-off upload is
    never stored as an object)."""

    def __init__(self, stream: BinaryIO, length: int) -> None:
        self._stream = stream
        self.remaining = length

    def read(self, size: int = -1) -> bytes:
        wanted = self.remaining if size is None or size < 0 else min(size, self.remaining)
        if not wanted:
            return b""
        data = self._stream.read(wanted)
        if not data:
            raise ConnectionError("the client closed the connection mid-body")
        self.remaining -= len(data)
        return data


def _copy_exactly(source: BinaryIO, target: BinaryIO, length: int) -> None:
    while length > 0:
        chunk = source.read(min(length, 1 << 20))
        if not chunk:  # the file shrank under us: the client sees a short body
            return
        target.write(chunk)
        length -= len(chunk)


class Server(ThreadingHTTPServer):
    """The HTTP server of one LocalVertex, bound to 127.0.0.1 only."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, service: LocalVertex) -> None:
        self.service = service
        self.router = build_router(service)
        self.storage = StorageApi(service.config.storage_root)
        remove_stale(self.storage.buckets)
        super().__init__(("127.0.0.1", service.config.port), _Handler)
        service.url = self.url  # pipeline runs the service starts call it back here
        self.tls = server_identity(service.config.state_dir)
        self.grpc, grpc_port = grpc_server(self.router, service.token)
        try:
            backends = {"h2": grpc_port, "http/1.1": self.server_address[1]}
            self.front = TlsFront(self.tls, service.config.tls_port or 0, backends)
        except OSError as exc:  # name the port that failed: the HTTP one is already bound
            self.grpc.stop(grace=None)
            self.server_close()
            raise OSError(exc.errno, exc.strerror, f"127.0.0.1:{service.config.tls_port}") from exc
        except BaseException:
            self.grpc.stop(grace=None)
            self.server_close()
            raise
        self.guard = Guard((self.server_address[1], self.front.port), service.token)
        service.client_env = {
            **local_auth.client_settings(self.url, self.api_endpoint, str(self.tls.roots_file)),
            local_auth.TOKEN_ENV: service.token,
            "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE": str(service.config.state_dir / "token"),
        }

    @property
    def api_endpoint(self) -> str:
        """`localhost:PORT`: the SDK's `api_endpoint`, TLS, for gRPC and REST alike."""
        return f"localhost:{self.front.port}"

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
        self.api_endpoint = server.api_endpoint
        self.token = server.service.token
        config = self.service.config
        self.runtime_file = local_auth.publish(
            self.url,
            config.state_dir,
            config.storage_root,
            api_endpoint=self.api_endpoint,
            roots_file=server.tls.roots_file,
        )
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.1}, name="http", daemon=True
        )

    def __enter__(self) -> "Running":
        self.server.grpc.start()
        self.server.front.start()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving, stop every replica (their jobs are queued again), close the state."""
        local_auth.withdraw(self.runtime_file)
        self.server.front.stop()
        self.server.grpc.stop(grace=1.0)
        self.server.shutdown()
        self.server.server_close()
        self.service.close()


def running(service: LocalVertex) -> Running:
    """Start `service` and serve it in a background thread (use as a context manager)."""
    server = Server(service)  # bind first: a busy port fails before anything starts
    try:
        service.start()
    except BaseException:
        server.front.stop()
        server.grpc.stop(grace=None)
        server.server_close()
        service.close()
        raise
    return Running(server)
