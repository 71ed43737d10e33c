"""The service's front ends: HTTP on 127.0.0.1, and the Vertex endpoint `localhost:PORT+1`.

`FrontEnds` binds all three listeners over one `Router`: the HTTP server (REST, Cloud Storage's
JSON API, the console), the gRPC server (each call transcoded to its REST route,
`grpc_server.py`) and the TLS front (`tls_front.py`), which hands a TLS connection to gRPC or
to HTTP by ALPN. Every request passes the `Guard` (token, Host, Origin, body checks) before its
body is read. Nothing here knows a resource type: the composition root (`vtp.local.app`) adds
their routes to the router. Errors use Google's JSON shape.

What one connection may cost the HTTP server (`Limits`):

- a request's line, headers and body must all be in within `Limits.request` seconds of its first
  byte (plus a second per MiB of declared body, for uploads), or the client gets 408 and the
  connection is closed: a client that trickles bytes holds a thread for that long at most;
- a connection waits at most `Limits.idle` seconds for a request (kept alive or fresh);
- a client that resets or stops reading costs one debug line (`--verbose`), never a traceback;
- `/healthz` takes GET and HEAD only (405 otherwise) and reads no body; methods the service
  does not serve get 501, malformed request lines and headers a JSON 4xx naming what is wrong.
"""

import contextlib
import io
import logging
import math
import os
import socket
import socketserver
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import SplitResult, parse_qs, urlsplit

from vtp.http_limits import REQUEST_TIMEOUT_SECONDS
from vtp.local import console
from vtp.local.base import callers, errors
from vtp.local.base.config import ServiceConfig
from vtp.local.base.guard import SIGNIN_PATH, Guard
from vtp.local.base.routing import Router
from vtp.local.base.tls import server_identity
from vtp.local.console.signin import SignIn
from vtp.local.grpc_server import grpc_server
from vtp.local.service import Addresses
from vtp.local.storage.routes import Reply, StorageApi, StorageRequest, is_storage_path
from vtp.local.storage.uploads import remove_stale
from vtp.local.tls_front import TlsFront

_log = logging.getLogger(__name__)

REQUEST_DEADLINE_ENV = "VTP_LOCAL_REQUEST_DEADLINE"
"""Seconds a request's line, headers and body may take to arrive (default 30)."""

IDLE_TIMEOUT_ENV = "VTP_LOCAL_IDLE_TIMEOUT"
"""Seconds a connection may wait for its next request (default 30)."""

BODY_BYTES_PER_SECOND = 1 << 20
"""The slowest upload rate a request's deadline allows for: a second more per MiB of body."""

WRITE_TIMEOUT_SECONDS = REQUEST_TIMEOUT_SECONDS
"""A client that reads none of an answer for this long is dropped."""

BACKLOG = max(128, socket.SOMAXCONN)
"""Connections the kernel queues before the server accepts them (a burst of clients)."""

LINGER_SECONDS, LINGER_BYTES = 2.0, 16 << 20
"""How long, and how much, a closing connection's unread input is read and dropped."""

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
"""The methods the service serves; others get 501."""

HEALTH_PATH = "/healthz"
HEALTH_METHODS = "GET, HEAD"


@dataclass(frozen=True)
class Limits:
    """How long the HTTP server waits on a client."""

    request: float = REQUEST_TIMEOUT_SECONDS
    """Seconds from a request's first byte until its headers and body must be in."""

    idle: float = REQUEST_TIMEOUT_SECONDS
    """Seconds a connection may wait for a request before it is closed."""

    @classmethod
    def from_env(cls) -> "Limits":
        """The defaults, or $VTP_LOCAL_REQUEST_DEADLINE and $VTP_LOCAL_IDLE_TIMEOUT."""
        return cls(
            _seconds(REQUEST_DEADLINE_ENV, cls.request), _seconds(IDLE_TIMEOUT_ENV, cls.idle)
        )

    def body_deadline(self, length: int) -> float:
        """Seconds a request with a body of `length` bytes may take to arrive."""
        return self.request + length / BODY_BYTES_PER_SECOND


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "")
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value < math.inf):
        _log.warning("$%s=%r is not a positive number of seconds; using %s", name, text, default)
        return default
    return value


class _ConnectionLost(Exception):
    """The client reset or closed the connection, or stopped reading: nobody to answer."""


class _RequestTimeout(Exception):
    """The connection's deadline passed: no request came, or the one coming was too slow."""


class _Deadline:
    """When the current wait on a client ends (monotonic seconds)."""

    def __init__(self) -> None:
        self.at = math.inf

    def start(self, seconds: float) -> None:
        """End the wait `seconds` from now."""
        self.at = time.monotonic() + seconds


class _Reader(io.RawIOBase):
    """A connection's reading side: every read waits only until the deadline, so a request
    that trickles in one byte at a time still ends when its deadline does."""

    def __init__(self, sock: socket.socket, deadline: _Deadline) -> None:
        self._sock, self._deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._deadline.at - time.monotonic()
        if left <= 0:
            raise _RequestTimeout
        try:
            self._sock.settimeout(min(left, 1e6))
            return self._sock.recv_into(buffer)
        except TimeoutError:
            raise _RequestTimeout from None
        except OSError as exc:
            raise _ConnectionLost(str(exc)) from None


class _Writer(io.BufferedIOBase):
    """A connection's writing side: a client that reads nothing for WRITE_TIMEOUT_SECONDS,
    resets or goes away raises _ConnectionLost."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        try:
            self._sock.settimeout(WRITE_TIMEOUT_SECONDS)
            self._sock.sendall(data)
        except OSError as exc:  # TimeoutError included: the client stopped reading
            raise _ConnectionLost(str(exc)) from None
        with memoryview(data) as view:
            return view.nbytes


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "HttpServer"

    def setup(self) -> None:
        self.connection = self.request
        # An answer goes out in two writes (headers, then body): with Nagle's algorithm the
        # body would wait for the client's delayed ACK of the headers, ~40 ms on every request
        # of a kept-alive connection (what StreamRequestHandler.disable_nagle_algorithm does).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, True)
        self.deadline = _Deadline()
        self.input = io.BufferedReader(_Reader(self.connection, self.deadline))
        self.rfile = self.input
        self.wfile = _Writer(self.connection)

    def handle_one_request(self) -> None:
        """Wait (at most `Limits.idle`) for a request, read its line and headers by its
        deadline, answer it; a lost client or a passed deadline closes the connection."""
        self.command, self.requestline, self.request_version = "", "", "HTTP/1.1"
        self.close_connection = True  # until a request says otherwise
        self._head = self._expect_100 = self._responded = False
        limits = self.server.limits
        phase = "waiting for a request"
        try:
            self.deadline.start(limits.idle)
            if not self.input.peek(1):  # the client closed the connection
                return
            phase = "reading a request"
            self.started = time.monotonic()
            self.deadline.start(limits.request)
            self.raw_requestline = self.rfile.readline(65537)
            for _ in range(8):  # empty lines before a request are ignored (RFC 9112, 2.2)
                if self.raw_requestline not in (b"\r\n", b"\n"):
                    break
                self.raw_requestline = self.rfile.readline(65537)
            if len(self.raw_requestline) > 65536:
                self.send_error(HTTPStatus.REQUEST_URI_TOO_LONG, "The request line is too long.")
                return
            if not self.parse_request():  # answered (send_error)
                return
            if self.request_version == "HTTP/0.9":
                self.send_error(HTTPStatus.BAD_REQUEST, "HTTP/0.9 is not accepted: send HTTP/1.1.")
                return
            self._head = self.command == "HEAD"
            self._respond()
        except _ConnectionLost as exc:
            self.close_connection = True
            _log.debug("%s: connection lost %s: %s", self.address_string(), phase, exc)
        except _RequestTimeout:
            self.close_connection = True
            _log.debug("%s: deadline passed %s", self.address_string(), phase)
            if phase == "reading a request" and not self._responded:
                error = errors.ApiError(
                    errors.DEADLINE_EXCEEDED,
                    f"The request did not arrive within {limits.request:g} s "
                    f"(${REQUEST_DEADLINE_ENV}); the connection is closed.",
                    http_status=408,
                )
                with contextlib.suppress(_ConnectionLost):
                    self._send(_error_reply(error))

    def _respond(self) -> None:
        """Answer the parsed request."""
        try:
            reply = _checked(self._answer())
        except (_ConnectionLost, _RequestTimeout):
            raise
        except errors.ApiError as exc:  # refused before the body was read: close after answering
            self.close_connection = True
            reply = _error_reply(exc)
        except Exception:  # a bug: answer like Google's front end would, keep serving
            _log.exception("internal error on %s %s", self.command, self.path[:500])
            self.close_connection = True
            reply = _error_reply(errors.ApiError(errors.INTERNAL, "Internal error encountered."))
        self._send(reply)

    def _answer(self) -> Reply:
        url = _target(self.path)
        if url.path == HEALTH_PATH and self.command not in ("GET", "HEAD"):
            self.close_connection = self.close_connection or _declares_body(self.headers)
            refused = errors.ApiError(
                errors.INVALID_ARGUMENT,
                f"Method {self.command} is not allowed on {HEALTH_PATH}: use GET or HEAD.",
                http_status=405,
            )
            return _error_reply(refused, {"Allow": HEALTH_METHODS})
        if self.command not in METHODS:
            self.close_connection = self.close_connection or _declares_body(self.headers)
            return _error_reply(
                errors.ApiError(
                    errors.UNIMPLEMENTED,
                    f"Method {self.command[:40]!r} is not implemented; the service takes "
                    f"{', '.join(sorted(METHODS))}.",
                )
            )
        _check_framing(self.headers)
        method = "GET" if self._head else self.command
        media = is_storage_path(self.path)
        length = self.server.guard.check(method, self.path, self.headers, media)
        self.deadline.at = self.started + self.server.limits.body_deadline(length)
        if url.path == SIGNIN_PATH and method == "POST":
            self._continue(length)
            status, answer = self.server.signin.answer(self.rfile.read(length) if length else b"")
            return Reply(status=status, body=answer, headers={"Cache-Control": "no-store"})
        if url.path == HEALTH_PATH or console.is_console_path(self.path):
            self.close_connection = self.close_connection or bool(length)  # never read
            if url.path == HEALTH_PATH:
                status, text = self.server.router.dispatch("GET", self.path, b"")
                return Reply(status=status, body=text.encode())
            root = self.server.storage_root
            return console.serve(self.path, method, root)
        with callers.serving(self.server.guard.caller(self.headers)):
            if media:
                return self._storage(method, url, length)
            self._continue(length)
            body = self.rfile.read(length) if length else b""
            if len(body) < length:
                raise _ConnectionLost("the client closed the connection mid-body")
            status, text = self.server.router.dispatch(method, self.path, body)
        return Reply(status=status, body=text.encode())

    def _storage(self, method: str, url: SplitResult, length: int) -> Reply:
        """A Cloud Storage request: the body streams to its handler; media streams back."""
        body = _Body(self.rfile, length, lambda: self._continue(length))
        query = parse_qs(url.query, keep_blank_values=True)
        request = StorageRequest(method, url.path, query, self.headers, body, length)
        reply = self.server.storage.handle(request)
        if body.remaining:  # refused before reading: do not parse the rest as a request
            self.close_connection = True
        return reply

    def handle_expect_100(self) -> bool:
        """`Expect: 100-continue`: say so only once the request passed its checks."""
        self._expect_100 = True
        return True

    def _continue(self, length: int) -> None:
        if self._expect_100 and length:
            self._expect_100 = False
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A malformed request line or headers (http.server's checks): a JSON 4xx, then close."""
        self.close_connection = True
        self.request_version = "HTTP/1.1"  # a status line even when the version was the fault
        status = 400 if code >= 500 else code  # an unsupported HTTP version is the client's
        text = message or explain or HTTPStatus(code).phrase
        self._send(_error_reply(errors.ApiError(errors.INVALID_ARGUMENT, text, http_status=status)))

    def _send(self, reply: Reply) -> None:
        self._responded = True
        self.send_response(reply.status)
        if reply.status not in (204, 304):
            self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(reply.length if reply.file else len(reply.body)))
        for key, value in reply.headers.items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self._head:
            return
        if reply.file is None:
            self.wfile.write(reply.body)
            return
        with open(reply.file, "rb", opener=_without_waiting) as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):  # swapped since it was checked
                self.close_connection = True  # a FIFO would never end: the client gets less
                return
            file.seek(reply.offset)
            _copy_exactly(file, self.wfile, reply.length)

    def log_message(self, format: str, *args: object) -> None:
        _log.debug("%s %s", self.address_string(), format % args)


def _without_waiting(path: str, flags: int) -> int:
    """Open a media file without waiting on it: opening a FIFO for reading waits for a writer."""
    return os.open(path, flags | os.O_NONBLOCK)


def _checked(reply: Reply) -> Reply:
    """`reply`, if it can be framed: a negative length or offset is a bug (a client would
    wait for a body that never ends), answered as one."""
    if not 100 <= reply.status <= 599 or reply.length < 0 or reply.offset < 0:
        raise ValueError(
            f"malformed reply: status {reply.status}, offset {reply.offset}, length {reply.length}"
        )
    return reply


def _target(path: str) -> SplitResult:
    """The request target as a URL; INVALID_ARGUMENT unless it is a path (origin form)."""
    try:
        url = urlsplit(path)
    except ValueError:
        url = None
    if url is None or not path.startswith("/"):
        raise errors.invalid_argument(
            f"Invalid request target {path[:200]!r}: expected a path such as /v1/..."
        )
    return url


def _check_framing(headers: Any) -> None:
    """One Content-Length at most, and no Transfer-Encoding but chunked (which the guard
    refuses with its own message): where a body ends is never a guess (request smuggling)."""
    for name in ("Content-Length", "Transfer-Encoding"):
        if len(headers.get_all(name, ())) > 1:
            raise errors.invalid_argument(f"More than one {name} header: send one.")
    coding = headers.get("Transfer-Encoding", "")
    if coding and "chunked" not in coding.lower():
        raise errors.ApiError(
            errors.INVALID_ARGUMENT,
            f"Transfer-Encoding {coding[:100]!r} is not accepted; send Content-Length.",
            http_status=411,
        )


def _declares_body(headers: Any) -> bool:
    return bool(headers.get("Transfer-Encoding")) or (
        headers.get("Content-Length", "0").strip() not in ("", "0")
    )


def _error_reply(error: errors.ApiError, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=error.http_status, body=error.to_json().encode(), headers=headers or {})


class _Body:
    """A request body of a known length read from the connection: `read` never goes past it,
    and raises _ConnectionLost when the client stops before the end (so a cut-off upload is
    never stored as an object). `first` runs before the first read (100 Continue)."""

    def __init__(self, stream: io.BufferedIOBase, length: int, first: Callable[[], None]) -> None:
        self._stream, self._first = stream, first
        self.remaining = length

    def read(self, size: int = -1) -> bytes:
        wanted = self.remaining if size is None or size < 0 else min(size, self.remaining)
        if not wanted:
            return b""
        self._first()
        data = self._stream.read(wanted)
        if not data:
            raise _ConnectionLost("the client closed the connection mid-body")
        self.remaining -= len(data)
        return data


def _copy_exactly(source: BinaryIO, target: io.BufferedIOBase, length: int) -> None:
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
    request_queue_size = BACKLOG

    guard: Guard
    """Set by `FrontEnds` once every port is known, before anything is served."""
    signin: SignIn
    """The console's one-time codes (`vtp.local.console.signin`), set with `guard`."""

    def __init__(
        self,
        port: int,
        router: Router,
        storage_root: Path,
        limits: Limits | None = None,
        strict_buckets: bool = False,
    ) -> None:
        self.router, self.storage_root = router, storage_root
        self.limits = limits or Limits()
        self.storage = StorageApi(storage_root, strict_buckets)
        remove_stale(self.storage.buckets)
        super().__init__(("127.0.0.1", port), _Handler)

    def server_bind(self) -> None:
        """Bind as HTTPServer does, less its `socket.getfqdn` of the address: a reverse DNS
        lookup of 127.0.0.1 (and the idna codec's import), 30 ms of every service's start, for
        a name nothing reads."""
        socketserver.TCPServer.server_bind(self)
        host, self.server_port = self.server_address[:2]
        self.server_name = str(host)

    def shutdown_request(self, request: Any) -> None:
        """Close a connection without losing its answer: a client still sending a body the
        service refused would otherwise get a reset instead of the answer. Reading what it
        sends (and dropping it) stops after LINGER_SECONDS or LINGER_BYTES."""
        try:
            request.shutdown(socket.SHUT_WR)
            deadline, taken = time.monotonic() + LINGER_SECONDS, 0
            while taken < LINGER_BYTES and (left := deadline - time.monotonic()) > 0:
                request.settimeout(left)
                chunk = request.recv(1 << 16)
                if not chunk:
                    break
                taken += len(chunk)
        except OSError:
            pass
        self.close_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request (a task killed by a cancel, Ctrl-C on a
        client) is logged, not printed as a traceback on the service's terminal."""
        import sys

        if isinstance(sys.exception(), ConnectionError | _ConnectionLost | _RequestTimeout):
            _log.debug("%s went away: %s", client_address, sys.exception())
            return
        super().handle_error(request, client_address)


class FrontEnds:
    """HTTP, gRPC and TLS listeners over one router, bound (ports taken) but not yet serving."""

    def __init__(self, config: ServiceConfig, token: str, router: Router) -> None:
        limits = Limits.from_env()
        self.http = HttpServer(
            config.port, router, config.storage_root, limits, config.strict_buckets
        )
        http_port = self.http.server_address[1]
        self.tls = server_identity(config.state_dir)
        self.grpc, grpc_port = grpc_server(
            router, token, idle=limits.idle, handshake=limits.request
        )
        try:
            backends = {"h2": grpc_port, "http/1.1": http_port}
            self.front = TlsFront(
                self.tls, config.tls_port or 0, backends, handshake_timeout=limits.request
            )
        except OSError as exc:  # name the port that failed: the HTTP one is already bound
            self.grpc.stop(grace=None)
            self.http.server_close()
            raise OSError(exc.errno, exc.strerror, f"127.0.0.1:{config.tls_port}") from exc
        except BaseException:
            self.grpc.stop(grace=None)
            self.http.server_close()
            raise
        self.http.guard = Guard((http_port, self.front.port), token)
        self.http.signin = SignIn(token)
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
            self._shut_down_http()
        self.http.server_close()

    def _shut_down_http(self) -> None:
        """Stop the HTTP loop without waiting out its poll interval: `shutdown()` only sets a
        flag, which the loop reads when its select returns, so a connection to the listening
        port wakes it (the loop stops before accepting it; `server_close` drops it)."""
        stopping = threading.Thread(target=self.http.shutdown, name="http-shutdown", daemon=True)
        stopping.start()
        while stopping.is_alive():
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", self.http.server_port), timeout=1).close()
            stopping.join(0.01)
