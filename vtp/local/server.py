"""The service's front ends: HTTP on 127.0.0.1, and the Vertex endpoint `localhost:PORT+1`.

`FrontEnds` binds all three listeners over one `Router`: the HTTP server (REST, Cloud Storage's
JSON API, the console), the gRPC server (each call transcoded to its REST route,
`grpc_server.py`) and the TLS front (`tls_front.py`), which hands a TLS connection to gRPC or
to HTTP by ALPN. Every request passes the `Guard` (token, Host, Origin, body checks) before its
body is read. Nothing here knows a resource type: the composition root (`vtp.local.app`) adds
their routes to the router. Errors use Google's JSON shape.
"""

import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BufferedIOBase
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import parse_qs, urlsplit

from vtp.local import console
from vtp.local.base import errors
from vtp.local.base.config import ServiceConfig
from vtp.local.base.guard import REQUEST_TIMEOUT_SECONDS, Guard
from vtp.local.base.routing import Router
from vtp.local.base.tls import server_identity
from vtp.local.grpc_server import grpc_server
from vtp.local.service import Addresses
from vtp.local.storage.routes import Reply, StorageApi, StorageRequest, is_storage_path
from vtp.local.storage.uploads import remove_stale
from vtp.local.tls_front import TlsFront

_log = logging.getLogger(__name__)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT_SECONDS  # applied to the socket: no read waits forever
    server: "HttpServer"

    def _handle(self) -> None:
        try:
            media = is_storage_path(self.path)
            length = self.server.guard.check(self.command, self.path, self.headers, media)
            if media:
                self._storage(length)
                return
            if console.is_console_path(self.path):
                self.close_connection = self.close_connection or bool(length)
                root = self.server.storage_root
                self._send(console.serve(self.path, self.command, root))
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

    def __init__(self, stream: BufferedIOBase, length: int) -> None:
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


def _copy_exactly(source: BinaryIO, target: BufferedIOBase, length: int) -> None:
    while length > 0:
        chunk = source.read(min(length, 1 << 20))
        if not chunk:  # the file shrank under us: the client sees a short body
            return
        target.write(chunk)
        length -= len(chunk)


class HttpServer(ThreadingHTTPServer):
    """The HTTP listener on 127.0.0.1: REST routes, Cloud Storage and the console."""

    daemon_threads = True
    allow_reuse_address = True

    guard: Guard
    """Set by `FrontEnds` once every port is known, before anything is served."""

    def __init__(self, port: int, router: Router, storage_root: Path) -> None:
        self.router, self.storage_root = router, storage_root
        self.storage = StorageApi(storage_root)
        remove_stale(self.storage.buckets)
        super().__init__(("127.0.0.1", port), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request (a task killed by a cancel, Ctrl-C on a
        client) is logged, not printed as a traceback on the service's terminal."""
        import sys

        if isinstance(sys.exception(), ConnectionError):
            _log.debug("%s went away: %s", client_address, sys.exception())
            return
        super().handle_error(request, client_address)


class FrontEnds:
    """HTTP, gRPC and TLS listeners over one router, bound (ports taken) but not yet serving."""

    def __init__(self, config: ServiceConfig, token: str, router: Router) -> None:
        self.http = HttpServer(config.port, router, config.storage_root)
        http_port = self.http.server_address[1]
        self.tls = server_identity(config.state_dir)
        self.grpc, grpc_port = grpc_server(router, token)
        try:
            backends = {"h2": grpc_port, "http/1.1": http_port}
            self.front = TlsFront(self.tls, config.tls_port or 0, backends)
        except OSError as exc:  # name the port that failed: the HTTP one is already bound
            self.grpc.stop(grace=None)
            self.http.server_close()
            raise OSError(exc.errno, exc.strerror, f"127.0.0.1:{config.tls_port}") from exc
        except BaseException:
            self.grpc.stop(grace=None)
            self.http.server_close()
            raise
        self.http.guard = Guard((http_port, self.front.port), token)
        self.addresses = Addresses(
            url=f"http://127.0.0.1:{http_port}",
            api_endpoint=f"localhost:{self.front.port}",
            roots_file=self.tls.roots_file,
        )
        self._thread = threading.Thread(
            target=self.http.serve_forever, kwargs={"poll_interval": 0.1}, name="http", daemon=True
        )

    def start(self) -> None:
        """Serve: gRPC, the TLS front and HTTP (in a background thread)."""
        self.grpc.start()
        self.front.start()
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the ports (also when `start` never ran)."""
        self.front.stop()
        self.grpc.stop(grace=1.0)
        if self._thread.is_alive():
            self.http.shutdown()
        self.http.server_close()
