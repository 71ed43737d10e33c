"""The service's hold on its state directory: an exclusive lock, then a fresh token.

Two services on one state directory would each recover the other's jobs and kill its replicas,
so the lock is the first thing a service takes, before it reads any state, binds a port or writes
its TLS files; the token is written only once the lock is held.
"""

import fcntl
from pathlib import Path
from typing import IO

from vtp.vertex import local_auth


class StateDirInUse(RuntimeError):
    """Another running service holds the state directory (it would kill that one's replicas)."""


class StateDir:
    """A state directory held by this process until `release()`."""

    def __init__(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock: IO[bytes] | None = open(path / "service.lock", "wb")  # noqa: SIM115 (held)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            self._lock = None
            raise StateDirInUse(
                f"another local Vertex service uses the state directory {path}"
            ) from None
        self.token = local_auth.new_token(path)
        """The bearer token every API request must carry (also in `<state-dir>/token`)."""

    def release(self) -> None:
        """Let another service take the directory (closing the file releases the flock)."""
        if self._lock:
            self._lock.close()
            self._lock = None
