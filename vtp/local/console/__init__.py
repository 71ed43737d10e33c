"""The local console: pages at `/console/` on the service's own port, behind the same guard.

The pages are static files shipped in this package (`static/`: our HTML, script and styles,
plus dagre for the pipeline graph and uPlot for the charts, vendored as published). They hold
no data and are served without the token; everything they show they read from the same REST
API a client uses, with the same bearer token (`vtp.local.base.guard`).

`console_url` is the address `vtp local serve`, `vtp local console` and `vtp run` print. It
carries a one-time sign-in code in its fragment (`#code=...`, `signin.py`), which the browser
never sends to a server: `signin.js` takes it out of the address bar before any other script
runs and trades it at `/console/signin` for the token, which it keeps in the tab's
sessionStorage; `app.js` sends that as `Authorization: Bearer` on every call. The token itself
is never in an address (so never in the browser's history), and there is no cookie: a cookie
goes to every port of 127.0.0.1, and would be a credential any local server the browser visits
could collect.
"""

import mimetypes
from pathlib import Path
from urllib.parse import quote, urlsplit

from vtp.local.base import errors
from vtp.local.base.guard import CONSOLE_PREFIX
from vtp.local.console import signin
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


def console_url(service_url: str, token: str, page: str = "") -> str:
    """The console's address with a fresh one-time code that signs a browser in (minted with
    the service's `token`), in the fragment, and optionally the page to show (`/runs/<id>`)."""
    fragment = f"code={signin.mint(token)}"
    if page:
        fragment += f"&page={quote(page, safe='/?=')}"
    return f"{service_url.rstrip('/')}{CONSOLE_PREFIX}#{fragment}"


def is_console_path(path: str) -> bool:
    """Whether `path` is a console page or file (`/console` itself included)."""
    url = urlsplit(path).path
    return url == CONSOLE_PREFIX.rstrip("/") or url.startswith(CONSOLE_PREFIX)


def serve(path: str, method: str, storage_root: Path) -> Reply:
    """The answer to a console request the guard let through: a static file (any query is
    ignored), or `settings.json` (the guard asked for the token), which tells the pages where
    gs:// lives on this machine, so they show each artifact's local path."""
    url = urlsplit(path)
    if method != "GET":
        refused = errors.ApiError(
            errors.INVALID_ARGUMENT, "The console's pages are read with GET.", http_status=405
        )
        return _refusal(refused)
    if url.path == f"{CONSOLE_PREFIX}settings.json":
        return Reply.of({"storageRoot": str(storage_root.resolve())}, headers=_SECURITY)
    if url.path == CONSOLE_PREFIX.rstrip("/"):
        return Reply(status=308, headers={"Location": CONSOLE_PREFIX, **_SECURITY})
    relative = url.path[len(CONSOLE_PREFIX) :] or "index.html"
    try:
        file = (STATIC / relative).resolve()
        found = file.is_relative_to(STATIC) and file.is_file()
    except (OSError, ValueError):  # a name the file system cannot hold (too long, NUL)
        found = False
    if not found:
        return _refusal(errors.not_found(f"No console page {url.path[:200]!r}."))
    kind = _TYPES.get(file.suffix) or mimetypes.guess_type(file.name)[0] or "text/plain"
    return Reply(body=file.read_bytes(), content_type=kind, headers=dict(_SECURITY))


def _refusal(error: errors.ApiError) -> Reply:
    """An error in Google's JSON shape, as the API answers it."""
    return Reply(status=error.http_status, body=error.to_json().encode())
