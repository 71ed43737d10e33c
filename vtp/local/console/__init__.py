"""The local console: pages at `/console/` on the service's own port, behind the same guard.

The pages are static files shipped in this package (`static/`: our HTML, script and styles,
plus dagre for the pipeline graph and uPlot for the charts, vendored as published); they read
the same REST API a client uses, with the session cookie (`vtp.local.base.guard`). `console_url`
is the address `vtp local serve` and `vtp run` print: it signs the browser in once.
"""

import mimetypes
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from vtp.local.base import errors
from vtp.local.base.guard import CONSOLE_PREFIX, SESSION_COOKIE
from vtp.local.storage.routes import Reply

STATIC = Path(__file__).resolve().parent / "static"
_TYPES = {".js": "text/javascript; charset=UTF-8", ".css": "text/css; charset=UTF-8"}
_SECURITY = {
    "Content-Security-Policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def console_url(service_url: str, token: str) -> str:
    """The console's address with the token that signs a browser in."""
    return f"{service_url.rstrip('/')}{CONSOLE_PREFIX}?token={token}"


def is_console_path(path: str) -> bool:
    """Whether `path` is a console page or file (`/console` itself included)."""
    url = urlsplit(path).path
    return url == CONSOLE_PREFIX.rstrip("/") or url.startswith(CONSOLE_PREFIX)


def serve(path: str, method: str, session: str, storage_root: Path) -> Reply:
    """The answer to a console request the guard let through. `settings.json` tells the pages
    where gs:// lives on this machine, so they show each artifact's local path."""
    url = urlsplit(path)
    if method != "GET":
        refused = errors.ApiError(
            errors.INVALID_ARGUMENT, "The console's pages are read with GET.", http_status=405
        )
        return _refusal(refused)
    if url.path == f"{CONSOLE_PREFIX}settings.json":
        return Reply.of({"storageRoot": str(storage_root.resolve())}, headers=_SECURITY)
    if "token" in parse_qs(url.query) or url.path == CONSOLE_PREFIX.rstrip("/"):
        # Signed in by the URL: keep the session in a cookie, drop the token from the address.
        cookie = f"{SESSION_COOKIE}={session}; Path=/; HttpOnly; SameSite=Strict"
        return Reply(status=303, headers={"Location": CONSOLE_PREFIX, "Set-Cookie": cookie})
    relative = url.path[len(CONSOLE_PREFIX) :] or "index.html"
    file = (STATIC / relative).resolve()
    if not file.is_relative_to(STATIC) or not file.is_file():
        return _refusal(errors.not_found(f"No console page {url.path!r}."))
    kind = _TYPES.get(file.suffix) or mimetypes.guess_type(file.name)[0] or "text/plain"
    return Reply(body=file.read_bytes(), content_type=kind, headers=dict(_SECURITY))


def _refusal(error: errors.ApiError) -> Reply:
    """An error in Google's JSON shape, as the API answers it."""
    return Reply(status=error.http_status, body=error.to_json().encode())
