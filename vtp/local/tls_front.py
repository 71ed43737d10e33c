"""The Vertex endpoint as the SDK expects one: `localhost:PORT` over TLS, gRPC and REST on the
same port, as aiplatform.googleapis.com serves both.

The aiplatform SDK takes one `api_endpoint` for both of its transports (gRPC by default; REST when
asked, and on its own after an `aiplatform.init()` without a project), and always speaks TLS.
This front terminates TLS with the state dir's CA-signed certificate (`base/tls.py`) and, by the
protocol the client negotiated (ALPN), hands the plain bytes on:

    h2        -> the gRPC server (`grpc_server.py`) on an internal loopback port
    http/1.1  -> the HTTP server (`server.py`), the same one http://127.0.0.1:PORT reaches

Both back ends check the bearer token themselves, so the front adds no trust. It runs on its own
asyncio loop in one thread; a client that stalls in the handshake is dropped after
`handshake_timeout` (30 s). What comes after the handshake is bounded by the back ends: the
HTTP server's request deadline and idle timeout (`server.Limits`), gRPC's idle and HTTP/2
handshake timeouts (`grpc_server`); when a back end closes, the front closes the client.
"""

import asyncio
import contextlib
import logging
import socket
import ssl
import tempfile
import threading
from pathlib import Path

from vtp.local.base.tls import ServerIdentity

_log = logging.getLogger(__name__)

HANDSHAKE_TIMEOUT_SECONDS = 30.0
BACKLOG = max(128, socket.SOMAXCONN)
_CHUNK = 1 << 16


class TlsFront:
    """Accepts TLS on 127.0.0.1:`port` (0: a free one) and forwards by ALPN protocol to the
    local ports in `backends` (`{"h2": grpc_port, "http/1.1": http_port}`)."""

    def __init__(
        self,
        identity: ServerIdentity,
        port: int,
        backends: dict[str, int],
        handshake_timeout: float = HANDSHAKE_TIMEOUT_SECONDS,
    ) -> None:
        self._context = _server_context(identity)
        self._backends = backends
        self._loop = asyncio.new_event_loop()
        self._server = self._loop.run_until_complete(
            asyncio.start_server(
                self._connection,
                "127.0.0.1",
                port,
                ssl=self._context,
                ssl_handshake_timeout=handshake_timeout,
                reuse_address=True,
                backlog=BACKLOG,
            )
        )
        self.port: int = self._server.sockets[0].getsockname()[1]
        self._thread = threading.Thread(target=self._loop.run_forever, name="tls", daemon=True)

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting and close every forwarded connection."""
        if not self._loop.is_closed():
            if self._thread.is_alive():
                asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=10)
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=10)
            else:
                self._loop.run_until_complete(self._close())
            self._loop.close()

    async def _close(self) -> None:
        self._server.close()
        for task in asyncio.all_tasks(self._loop) - {asyncio.current_task()}:
            task.cancel()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tls = writer.get_extra_info("ssl_object")
        protocol = (tls.selected_alpn_protocol() if tls else None) or "http/1.1"
        port = self._backends.get(protocol)
        try:
            if port is None:
                return
            back_reader, back_writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                await asyncio.gather(_pump(reader, back_writer), _pump(back_reader, writer))
            finally:
                back_writer.close()
        except (OSError, asyncio.IncompleteReadError) as exc:
            _log.debug("TLS connection ended: %s", exc)
        except asyncio.CancelledError:
            # The front is closing (`_close`). Ending here, not cancelled, is what keeps
            # asyncio's stream callback (which asks a handler's task for its exception) from
            # logging a CancelledError traceback for every connection still open at a stop.
            _log.debug("TLS connection closed with the front")
        finally:
            writer.close()
            with contextlib.suppress(OSError, ssl.SSLError):
                await writer.wait_closed()


async def _pump(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
    """Copy `source` to `target` until `source` ends, then end `target`'s writing side."""
    try:
        while data := await source.read(_CHUNK):
            target.write(data)
            await target.drain()
    except (OSError, ssl.SSLError):
        pass
    finally:
        if target.can_write_eof():
            with contextlib.suppress(OSError, RuntimeError):
                target.write_eof()
        else:
            target.close()


def _server_context(identity: ServerIdentity) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["h2", "http/1.1"])
    # ssl loads a chain only from files: write the pair to a private temporary file for the call.
    with tempfile.TemporaryDirectory() as folder:
        pair = Path(folder) / "server.pem"
        pair.write_bytes(identity.key_pem + identity.cert_pem)
        context.load_cert_chain(pair)
    return context
