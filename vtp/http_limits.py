"""What the local service and the model servers it starts accept from an HTTP client: the
loopback names a request's Host may carry, the largest body, how long a connection may sit
idle, and the one reading of a request's declared body length.

It sits in the bottom layer so that `vtp.trainer.serve` (which runs in the model's image, without
the service) applies the very limits the service applies to its own API.
"""

from typing import Protocol, overload

MAX_BODY_BYTES = 32 << 20
"""Largest API request body accepted (API requests are kilobytes)."""

REQUEST_TIMEOUT_SECONDS = 30.0
"""A connection that sends nothing for this long is closed."""

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""Host names (before `:port`) of a request sent to this machine's loopback."""


class Headers(Protocol):
    """A request's headers by name: http.server's (an `email.message.Message`, which matches
    names in any case), or a Mapping."""

    @overload
    def get(self, name: str, /) -> str | None: ...
    @overload
    def get(self, name: str, default: str, /) -> str: ...


class BodyRefused(ValueError):
    """A body the server will not read: `status` is the HTTP answer (400, 411 or 413)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def declared_length(headers: Headers, limit: int = MAX_BODY_BYTES) -> int:
    """The declared body length; BodyRefused for chunked, malformed or oversized bodies."""
    if "chunked" in headers.get("Transfer-Encoding", "").lower():
        raise BodyRefused(411, "Transfer-Encoding: chunked is not accepted; send Content-Length.")
    text = headers.get("Content-Length", "0").strip() or "0"
    if not (text.isascii() and text.isdigit()):
        raise BodyRefused(400, f"Invalid Content-Length {text!r}: expected a number.")
    if len(text) > 15 or int(text) > limit:
        raise BodyRefused(413, f"Request body of {text} bytes is larger than the {limit} accepted.")
    return int(text)
