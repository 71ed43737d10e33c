"""The HTTP front under hostile clients (security issue #26), over real sockets: /healthz reads
no body, resets cost no traceback, a trickling client is cut off by the request deadline, an
idle keep-alive connection is closed, and a burst of connections is queued, not refused.

The service here runs with a short request deadline and idle timeout (the environment
variables `vtp local serve` reads), so nothing waits long; no assertion is on wall time.
"""

import json
import shutil
import socket
import ssl
import struct
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.fixtures import LocalService
from vtp.vertex.local_auth import published

DEADLINE_S = 2
PATIENCE_S = 60.0
"""How long a test waits for the service to answer or close: generous, never the measure."""

PARENT = "projects/local/locations/us-central1"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    limits = {"VTP_LOCAL_REQUEST_DEADLINE": str(DEADLINE_S), "VTP_LOCAL_IDLE_TIMEOUT": "2"}
    started = LocalService(tmp_path_factory.mktemp("http"), env=limits).start()
    yield started
    started.stop()


def _port(service: LocalService) -> int:
    return int(service.url.rsplit(":", 1)[1])


def _connect(service: LocalService) -> socket.socket:
    return socket.create_connection(("127.0.0.1", _port(service)), timeout=PATIENCE_S)


def _read_to_close(sock: socket.socket) -> bytes:
    """Everything the service sends until it closes the connection."""
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _headers(answer: bytes) -> dict[str, str]:
    lines = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}


def _body(answer: bytes) -> bytes:
    return answer.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_healthz_takes_get_and_head_only_and_reads_no_body(service, method) -> None:
    # A body of 1 GB is declared and never sent: an answer at all means none was read (reading
    # would wait, then time out with 408), and 405 rather than 413 means the method was checked
    # before the declared size.
    with _connect(service) as sock:
        sock.sendall(
            f"{method} /healthz HTTP/1.1\r\nHost: 127.0.0.1:{_port(service)}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n".encode()
        )
        answer = _read_to_close(sock)
    assert _status(answer) == 405
    assert _headers(answer)["allow"] == "GET, HEAD"
    assert _headers(answer)["connection"] == "close"
    error = json.loads(_body(answer))["error"]
    assert "/healthz" in error["message"] and method in error["message"]


def test_healthz_answers_get_and_head(service) -> None:
    with _connect(service) as sock:
        host = f"Host: 127.0.0.1:{_port(service)}\r\n"
        sock.sendall(f"HEAD /healthz HTTP/1.1\r\n{host}\r\n".encode())
        sock.sendall(f"GET /healthz HTTP/1.1\r\n{host}Connection: close\r\n\r\n".encode())
        answer = _read_to_close(sock)
    head, get = answer.split(b"HTTP/1.1 ")[1:]
    assert head.startswith(b"200") and head.endswith(b"\r\n\r\n")  # HEAD: headers, no body
    assert get.startswith(b"200") and get.endswith(b'{"status": "ok"}')


def _reset(sock: socket.socket) -> None:
    """Close with RST (SO_LINGER 0), as a killed client's kernel does."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def test_client_resets_cost_no_traceback(service) -> None:
    port, token = _port(service), service.token
    head = f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
    partial = (
        f"GET /v1/{PARENT}/customJobs HTTP/1.1\r\n{head}".encode(),  # mid-headers
        f"POST /v1/{PARENT}/customJobs HTTP/1.1\r\n{head}Content-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n{".encode(),  # mid-body
        f"POST /upload/storage/v1/b/b/o?uploadType=media&name=x HTTP/1.1\r\n{head}"
        "Content-Length: 100000\r\n\r\nabc".encode(),  # mid-upload
        b"GET /heal",  # mid-request-line
    )
    before = service.service_log()
    for index in range(50):
        sock = _connect(service)
        sock.sendall(partial[index % len(partial)])
        _reset(sock)
    # The service answers on: fresh connections are served after every reset.
    healthz = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    for _ in range(3):
        with _connect(service) as sock:
            sock.sendall(healthz.encode())
            assert _status(_read_to_close(sock)) == 200
    added = service.service_log()[len(before) :]
    assert "Traceback" not in added
    assert len(added.splitlines()) <= 50


class _Trickle(threading.Thread):
    """Sends `data` one byte at a time, `interval` apart, until done, told to stop, or the
    service closes the connection."""

    def __init__(self, sock: socket.socket, data: bytes, interval: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.sock, self.data, self.interval = sock, data, interval
        self.stop = threading.Event()
        self.sent = 0

    def run(self) -> None:
        for byte in self.data:
            if self.stop.wait(self.interval):
                return
            try:
                self.sock.send(bytes([byte]))
            except OSError:
                return
            self.sent += 1


@pytest.mark.parametrize("part", ["headers", "body"])
def test_a_trickling_request_is_cut_off_by_its_deadline(service, part) -> None:
    # One byte every half second never trips a per-read timeout; only a deadline on the whole
    # request ends it. The request is long enough to take over a minute to send.
    host = f"Host: 127.0.0.1:{_port(service)}\r\nAuthorization: Bearer {service.token}\r\n"
    body = json.dumps({"displayName": "x" * 200}).encode()
    head = (
        f"POST /v1/{PARENT}/customJobs HTTP/1.1\r\n{host}Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
    ).encode()
    if part == "headers":
        first, rest = head[:10], head[10:] + b"X-Padding: " + b"p" * 200 + b"\r\n\r\n" + body
    else:
        first, rest = head + b"\r\n", body
    with _connect(service) as sock:
        sock.sendall(first)
        trickle = _Trickle(sock, rest)
        trickle.start()
        try:
            answer = _read_to_close(sock)  # returns when the service closes
        finally:
            trickle.stop.set()
            trickle.join(timeout=PATIENCE_S)
    assert trickle.sent < len(rest)  # cut off, not finished
    assert _status(answer) == 408
    error = json.loads(_body(answer))["error"]
    assert error["status"] == "DEADLINE_EXCEEDED" and f"{DEADLINE_S} s" in error["message"]


def test_an_idle_keep_alive_connection_is_closed(service) -> None:
    with _connect(service) as sock:
        sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{_port(service)}\r\n\r\n".encode())
        answer = _read_to_close(sock)  # the answer, then nothing: closed once idle
    assert _status(answer) == 200 and answer.count(b"HTTP/1.1") == 1


def test_a_burst_of_connections_all_get_answers(service) -> None:
    port = _port(service)
    request = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    start = threading.Barrier(100)

    def one(_: int) -> int:
        start.wait(timeout=PATIENCE_S)
        with _connect(service) as sock:
            sock.sendall(request.encode())
            return _status(_read_to_close(sock))

    with ThreadPoolExecutor(max_workers=100) as pool:
        statuses = list(pool.map(one, range(100)))
    assert statuses == [200] * 100


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read the backlog")
def test_the_listen_backlog_fits_a_burst(service) -> None:
    listening = subprocess.run(
        ["ss", "-ltnH", f"sport = :{_port(service)}"], capture_output=True, text=True, check=True
    ).stdout.split()
    backlog = int(listening[2])  # Send-Q of a listening socket: its backlog
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    assert backlog >= min(128, somaxconn)


def _tls(service: LocalService, protocol: str) -> ssl.SSLSocket:
    """A TLS connection to the service's Vertex endpoint that negotiated `protocol` (ALPN)."""
    info = published(service.url)
    assert info is not None
    context = ssl.create_default_context(cafile=info["roots_file"])
    context.set_alpn_protocols([protocol])
    port = int(info["api_endpoint"].rsplit(":", 1)[1])
    sock = context.wrap_socket(
        socket.create_connection(("127.0.0.1", port), timeout=PATIENCE_S),
        server_hostname="localhost",
    )
    assert sock.selected_alpn_protocol() == protocol
    return sock


def test_the_tls_front_cuts_off_a_trickling_request(service) -> None:
    with _tls(service, "http/1.1") as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: local")  # and nothing more
        answer = _read_tls_to_close(sock)
    assert _status(answer) == 408


def test_the_tls_front_closes_an_idle_http2_connection(service) -> None:
    with _tls(service, "h2") as sock:  # no call: gRPC sends GOAWAY and closes
        _read_tls_to_close(sock)  # returns only once closed (a hang times out and fails)


def _read_tls_to_close(sock: ssl.SSLSocket) -> bytes:
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except (ssl.SSLEOFError, ConnectionResetError):  # closed without close_notify
        pass
    return answer
