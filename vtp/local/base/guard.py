"""Who may use the local service, and what a request may look like before anything reads it.

The service runs commands from job specs by design, so only the user who started it may use it
(the model is Jupyter's server):

- Every request but `GET /healthz` and the console's static files carries
  `Authorization: Bearer <token>`, the token the service wrote to `<state-dir>/token` (mode 0600)
  at start (`vtp.vertex.local_auth`), or the workload credential derived from it that
  containers get instead (`vtp.containers.workload_token`: the same API, but no console
  sign-in can be made from it). Nothing else is a credential: no cookie, no query parameter. A
  browser sends a header only when a page's own script adds it, so no navigation,
  form, frame or other site's page ever carries it, and cookies (which ignore ports) do not
  exist to be sent to another local port or replayed.
- The console's static files (`/console/`, its `.html`, `.js` and `.css`: code, no data) are
  served to anyone on loopback. The URL `vtp` prints carries a one-time sign-in code in its
  fragment (`/console/#code=...`), which a browser never sends; the console's script trades it
  for the token at `POST /console/signin` (open: the code is the credential, and it works once),
  keeps the token in the tab's sessionStorage (per origin, and the origin includes the port) and
  sends it as the bearer token on each API call it makes (`vtp.local.console`).
- `Host` must be the service's own loopback name and port: a page whose DNS name was rebound to
  127.0.0.1 sends its own name, and is refused.
- A request that carries `Origin` (a browser's) must come from the service's own origin.
- Bodies are JSON (`Content-Type: application/json`), which no cross-site form can send without
  a preflight the service never grants; `Content-Length` is a plain number no larger than
  MAX_BODY_BYTES, and chunked bodies are refused, so no reader waits on a length it cannot trust.
"""

from dataclasses import dataclass
from urllib.parse import urlsplit

from vtp import http_limits
from vtp.http_limits import LOOPBACK_NAMES, MAX_BODY_BYTES, Headers
from vtp.local.base import callers, errors
from vtp.vertex import local_auth

MAX_MEDIA_BYTES = 64 << 30
"""Largest Cloud Storage upload request (streamed to a file, never held in memory)."""

OPEN_PATHS = frozenset({"/healthz"})
CONSOLE_PREFIX = "/console/"
SIGNIN_PATH = "/console/signin"
"""Where the console trades its one-time code for the token (`vtp.local.console.signin`)."""
CONSOLE_STATIC_SUFFIXES = (".html", ".js", ".css")
"""The console's files served without the token: its pages, scripts and styles (no data)."""


@dataclass(frozen=True)
class Guard:
    """The checks for one service: its ports (plain HTTP first, then the TLS endpoint's) and
    its token."""

    ports: tuple[int, ...]
    token: str

    def check(self, method: str, path: str, headers: Headers, media: bool = False) -> int:
        """The body length to read; raise ApiError (4xx, naming what is wrong) otherwise.
        `media`: a Cloud Storage request, whose body may be of any type and up to
        MAX_MEDIA_BYTES."""
        self._check_host(headers.get("Host", ""))
        self._check_origin(headers.get("Origin"))
        length = body_length(headers, MAX_MEDIA_BYTES if media else MAX_BODY_BYTES)
        if not is_open(method, path):
            self._check_token(headers.get("Authorization", ""))
        if length and method in ("POST", "PUT", "PATCH") and not media:
            content_type = headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
            if content_type != "application/json":
                raise errors.ApiError(
                    errors.INVALID_ARGUMENT,
                    f"Content-Type {content_type or '(none)'!r} is not accepted: "
                    "request bodies must be application/json.",
                    http_status=415,
                )
        return length

    def _check_host(self, host: str) -> None:
        allowed = {f"{name}:{port}" for name in LOOPBACK_NAMES for port in self.ports}
        if host.lower() not in allowed:
            raise errors.ApiError(
                errors.PERMISSION_DENIED,
                f"Host {host!r} is not this service: use http://127.0.0.1:{self.ports[0]}.",
            )

    def _check_origin(self, origin: str | None) -> None:
        if origin is None:
            return
        allowed = {
            f"{scheme}://{name}:{port}"
            for scheme in ("http", "https")
            for name in LOOPBACK_NAMES
            for port in self.ports
        }
        if origin.lower() not in allowed:
            raise errors.ApiError(
                errors.PERMISSION_DENIED,
                f"Origin {origin!r} may not use this service (cross-site requests are refused).",
            )

    def caller(self, headers: Headers) -> callers.Caller:
        """Who holds the credential of a request `check` let through: the owner, or the
        workload its credential names (a request needing no token is the owner's: it reaches
        no resource)."""
        found = self._presented(headers.get("Authorization", ""))
        return callers.Caller(found) if found else callers.OWNER

    def _presented(self, authorization: str) -> str | None:
        """`local_auth.caller` of a bearer `Authorization` header; None for any other."""
        scheme, _, presented = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return None
        return local_auth.caller(self.token, presented.strip())

    def _check_token(self, authorization: str) -> None:
        if self._presented(authorization) is None:
            raise errors.ApiError(
                errors.UNAUTHENTICATED,
                "Request is missing the local service's bearer token. vtp commands find it "
                "themselves; gcloud takes --access-token-file=<state-dir>/token; "
                "`vtp local env` prints the settings for a shell.",
            )


def is_open(method: str, path: str) -> bool:
    """Whether a request needs no token: `/healthz`, the console's sign-in (whose one-time
    code is the credential), or a GET of one of the console's static files (whatever its
    query: an old `/console/?token=...` link gets the page, which takes nothing from it)."""
    url = urlsplit(path).path
    if url in OPEN_PATHS or (url == SIGNIN_PATH and method == "POST"):
        return True
    if method not in ("GET", "HEAD"):
        return False
    if url == CONSOLE_PREFIX.rstrip("/") or url == CONSOLE_PREFIX:
        return True
    return url.startswith(CONSOLE_PREFIX) and url.endswith(CONSOLE_STATIC_SUFFIXES)


def body_length(headers: Headers, limit: int = MAX_BODY_BYTES) -> int:
    """The declared body length; ApiError (400, 411 or 413) for chunked, malformed or
    oversized bodies."""
    try:
        return http_limits.declared_length(headers, limit)
    except http_limits.BodyRefused as refused:
        message, status = refused.message, refused.status
        raise errors.ApiError(errors.INVALID_ARGUMENT, message, http_status=status) from None
