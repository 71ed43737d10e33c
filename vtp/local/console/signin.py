"""One-time sign-in codes: what the console's address carries instead of the token.

A browser records every address it opens in its history database, fragment included, where it
outlives the tab. So the address `vtp` prints holds a code, not the token: `signin.js` posts it
to `/console/signin` at once, which answers the token (kept in the tab's sessionStorage), and
never takes the same code twice. What history keeps is a spent code.

A code is `<expiry>.<nonce>.<mac>`: the expiry (Unix seconds, hex), 16 random bytes, and an
HMAC-SHA256 of both under the service's token. Anyone holding the token can mint one without
asking the service (`vtp local serve` and `vtp run` print one each); a code dies when it is
spent, when it expires (CODE_TTL_SECONDS), and when the service restarts, since each start
has a new token. The service remembers spent nonces until their codes expire.
"""

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time

from vtp.local.base import errors
from vtp.local.base.guard import SIGNIN_PATH

__all__ = ["CODE_TTL_SECONDS", "SIGNIN_PATH", "SignIn", "mint"]

CODE_TTL_SECONDS = 12 * 3600
"""How long a printed address signs a browser in: a working day (a new one: `vtp local console`)."""

_PURPOSE = b"vtp-console-signin\0"
_MAX_CODE = 200


def mint(token: str, now: float | None = None, ttl: int = CODE_TTL_SECONDS) -> str:
    """A fresh code for the service whose token is `token`, good for `ttl` seconds."""
    expiry = f"{int(time.time() if now is None else now) + ttl:x}"
    nonce = _b64(secrets.token_bytes(16))
    return f"{expiry}.{nonce}.{_mac(token, expiry, nonce)}"


class SignIn:
    """The service's side: codes turn into the token once each."""

    def __init__(self, token: str) -> None:
        self._token = token
        self._spent: dict[str, int] = {}
        """Nonce -> expiry of each code taken, until it would have expired anyway."""
        self._lock = threading.Lock()

    def answer(self, body: bytes) -> tuple[int, bytes]:
        """`POST /console/signin` with `{"code": ...}`: 200 and `{"token": ...}`, or the error
        in Google's JSON shape (400 naming `code`, 401 for a spent, expired or foreign code)."""
        try:
            code = _code_of(body)
            token = self.redeem(code)
        except errors.ApiError as refused:
            return refused.http_status, refused.to_json().encode()
        return 200, json.dumps({"token": token}).encode()

    def redeem(self, code: str, now: float | None = None) -> str:
        """The token for `code`, which is spent from then on; ApiError(401) otherwise."""
        now = time.time() if now is None else now
        expiry_hex, nonce, mac = [*code.split("."), "", ""][:3]
        try:
            expiry = int(expiry_hex, 16)
        except ValueError:
            expiry = 0
        genuine = hmac.compare_digest(mac.encode(), _mac(self._token, expiry_hex, nonce).encode())
        with self._lock:
            self._spent = {n: e for n, e in self._spent.items() if e > now}
            if not genuine or expiry <= now or nonce in self._spent:
                raise errors.ApiError(
                    errors.UNAUTHENTICATED,
                    "This sign-in address was used already, has expired, or is from an "
                    "earlier start of the service: `vtp local console` prints a new one.",
                )
            self._spent[nonce] = expiry
        return self._token


def _code_of(body: bytes) -> str:
    try:
        value = json.loads(body or b"null")
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser
        value = None
    code = value.get("code") if isinstance(value, dict) else None
    if not isinstance(code, str) or not 0 < len(code) <= _MAX_CODE:
        raise errors.ApiError(
            errors.INVALID_ARGUMENT,
            f'code: the body must be {{"code": "<the code after #code= in the console\'s '
            f'address>"}} ({_MAX_CODE} characters at most).',
        )
    return code


def _mac(token: str, expiry: str, nonce: str) -> str:
    message = _PURPOSE + f"{expiry}.{nonce}".encode()
    return _b64(hmac.new(token.encode(), message, hashlib.sha256).digest())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
