"""Waiting in the main thread for SIGINT or SIGTERM, whichever of the process's threads takes it.

Linux gives a signal sent to a process to one of its threads that does not block it: the main
thread when it can take it, else another. The main thread cannot while a signal is already
pending on it, as one is for a moment after a child's SIGCHLD was queued to the process (the
child ended while the thread that started it had every signal blocked, as CPython's subprocess
and glibc's pthread_create do for an instant); under load that moment lasts until the main
thread is scheduled, and a SIGTERM that comes then goes to another thread. CPython runs Python
signal handlers in the main thread only, and the C handler that ran in the other thread only
notes the signal: a main thread asleep in `threading.Event().wait()` is not woken, so the
handler runs, and a service stops, only when a second signal reaches the main thread.

`StopSignals` does not depend on which thread takes the signal. The C handler also writes the
signal's number to the wakeup fd (`signal.set_wakeup_fd`) in whichever thread it runs, and
`wait()` reads that socket. A second signal while the process is stopping changes nothing: the
handlers stay installed until the `with` block ends.
"""

import contextlib
import signal
import socket
from collections.abc import Callable, Iterable
from types import FrameType, TracebackType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_Handler = Callable[[int, FrameType | None], object] | int | None
"""A signal's disposition, as `signal.signal` returns it."""

_REQUEST = 0
"""What `request` writes: no signal has number 0."""


class StopSignals:
    """While entered (in the main thread), `signals` are caught and `wait()` returns once one
    came, or once another thread called `request()`; one that came before `wait()` counts."""

    def __init__(self, signals: Iterable[signal.Signals] = STOP_SIGNALS) -> None:
        self._signals = tuple(signals)
        self._stops = {_REQUEST, *(int(s) for s in self._signals)}
        self._reader, self._writer = socket.socketpair()
        self._writer.setblocking(False)  # the C handler must never wait on it
        self._previous_fd = -1
        self._previous: dict[signal.Signals, _Handler] = {}

    def __enter__(self) -> "StopSignals":
        self._previous_fd = signal.set_wakeup_fd(self._writer.fileno(), warn_on_full_buffer=False)
        for signum in self._signals:
            self._previous[signum] = signal.signal(signum, _noted)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        signal.set_wakeup_fd(self._previous_fd)
        self._reader.close()
        self._writer.close()

    def request(self) -> None:
        """Make `wait()` return, as a signal would; from any thread."""
        with contextlib.suppress(OSError):  # full: a wake-up is waiting already; closed: done
            self._writer.send(bytes([_REQUEST]))

    def wait(self) -> None:
        """Block until one of the signals came (or `request()`), in whichever thread."""
        while True:
            data = self._reader.recv(256)
            if not data or self._stops.intersection(data):
                return


def _noted(signum: int, frame: FrameType | None) -> None:
    """The Python handler: nothing to do, the C handler has written `signum` to the wakeup fd."""
