"""Expected failures as one line each: what happened and what to do, never a traceback.

`call(request, where)` runs one API call and turns the errors a user can meet (no credentials,
expired ones, no network, a refused call) into `Failed`, which `vtp.cli.main` prints as
`vtp: error: ...` with exit status 1. `describe` is the same mapping for errors raised anywhere
else; `--debug` (or VTP_DEBUG=1) adds the traceback.
"""

import http
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # imported when a command fails, so that `vtp --help` stays fast
    from google.api_core import exceptions as api_exceptions

T = TypeVar("T")

CREDENTIALS_HINT = "run `gcloud auth application-default login`"


class Failed(Exception):
    """A command failed for a reason outside the program; the message says what to do."""


def call(request: Callable[[], T], where: str) -> T:
    """Run one call to `where` (a service or URL); raise Failed for the errors users meet."""
    try:
        return request()
    except Exception as exc:
        message = describe(exc, where)
        if message is None:
            raise
        raise Failed(message) from exc


def describe(exc: BaseException, where: str = "Google Cloud") -> str | None:
    """One line for a failure a user can meet and act on; None for anything else (a bug)."""
    import google.auth.exceptions
    import requests
    from google.api_core import exceptions as api_exceptions

    from vtp.private_files import UnsafePath

    if isinstance(exc, UnsafePath):  # a folder of the user's that another user could replace
        return str(exc)
    local = where.startswith("http://")
    if isinstance(exc, google.auth.exceptions.DefaultCredentialsError):
        return f"no Google credentials; {CREDENTIALS_HINT}"
    if isinstance(exc, google.auth.exceptions.RefreshError):
        return f"Google credentials were refused or have expired ({_first_line(exc)}); " + (
            CREDENTIALS_HINT
        )
    unreachable = (
        requests.ConnectionError,
        requests.Timeout,
        google.auth.exceptions.TransportError,
        api_exceptions.RetryError,
        ConnectionError,
        TimeoutError,
    )
    if isinstance(exc, unreachable):
        hint = "start it with `vtp local serve`" if local else "check your network connection"
        return f"cannot reach {where}; {hint}"
    if isinstance(exc, api_exceptions.GoogleAPICallError):
        # REST errors read "POST https://...: message"; the URL is noise to the user.
        message = re.sub(r"^[A-Z]+ \S+: ", "", exc.message or "")
        return f"{_status(exc)}: {message}"
    return None


def _status(exc: "api_exceptions.GoogleAPICallError") -> str:
    """The status by name: BAD_REQUEST; one HTTP does not name (499) by its gRPC name."""
    if not exc.code:
        return "error"
    try:
        return http.HTTPStatus(exc.code).name
    except ValueError:  # api_core gives some errors a bare int code (Cancelled is 499)
        return exc.grpc_status_code.name if exc.grpc_status_code else str(exc.code)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
