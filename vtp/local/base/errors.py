"""API errors in Google's shape, so the real clients raise their usual exceptions."""

import json

# google.rpc.Code -> (HTTP status, canonical name), as Google's REST front ends map them.
_CODES = {
    1: (499, "CANCELLED"),
    3: (400, "INVALID_ARGUMENT"),
    4: (504, "DEADLINE_EXCEEDED"),
    5: (404, "NOT_FOUND"),
    6: (409, "ALREADY_EXISTS"),
    8: (429, "RESOURCE_EXHAUSTED"),
    9: (400, "FAILED_PRECONDITION"),
    7: (403, "PERMISSION_DENIED"),
    12: (501, "UNIMPLEMENTED"),
    13: (500, "INTERNAL"),
    16: (401, "UNAUTHENTICATED"),
}

CANCELLED = 1
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
UNIMPLEMENTED = 12
INTERNAL = 13
UNAUTHENTICATED = 16


class ApiError(Exception):
    """A request the service refuses; `code` is a google.rpc.Code."""

    def __init__(self, code: int, message: str, http_status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self._http_status = http_status

    @property
    def http_status(self) -> int:
        """The HTTP status Google's REST front ends use for this code (or the one given)."""
        return self._http_status or _CODES[self.code][0]

    @property
    def status(self) -> str:
        """The canonical code name (`INVALID_ARGUMENT`, ...)."""
        return _CODES[self.code][1]

    def to_json(self) -> str:
        """`{"error": {"code": 400, "message": ..., "status": "INVALID_ARGUMENT"}}`."""
        body = {"code": self.http_status, "message": self.message, "status": self.status}
        return json.dumps({"error": body})


def invalid_argument(message: str) -> ApiError:
    """400 INVALID_ARGUMENT: the request itself is wrong."""
    return ApiError(INVALID_ARGUMENT, message)


def failed_precondition(message: str) -> ApiError:
    """400 FAILED_PRECONDITION: valid request, but not in this state or on this machine."""
    return ApiError(FAILED_PRECONDITION, message)


def still_running(name: str, state: str) -> ApiError:
    """FAILED_PRECONDITION for deleting a resource that has not ended, in Vertex's words."""
    return failed_precondition(
        f"{name} is in state {state}; cancel it and wait for it to end before deleting it."
    )


def already_ended(name: str, state: str) -> ApiError:
    """FAILED_PRECONDITION for cancelling a resource that has ended, in Vertex's words."""
    return failed_precondition(f"Cannot cancel {name}: it is already in state {state}.")


def not_found(message: str) -> ApiError:
    """404 NOT_FOUND."""
    return ApiError(NOT_FOUND, message)


def already_exists(message: str) -> ApiError:
    """409 ALREADY_EXISTS: a create named an ID that is taken."""
    return ApiError(ALREADY_EXISTS, message)
