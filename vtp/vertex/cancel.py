"""SIGTERM cancels what a pipeline task started on Vertex, then the task exits 128 + 15.

Vertex Pipelines stops a task with SIGTERM (the run was cancelled, or the task timed out). A
job or long-running operation the task started would go on running, and billing, behind it; so
every launcher that starts one wraps the start and the wait in `CancelOnSigterm().installed()`
and names what to cancel with `attach` as soon as it exists.

The guard is installed before the create request is sent: a SIGTERM that lands while the request
is in flight is remembered and acted on when `attach` names what the request started, so no job
is left running behind a cancelled task.
"""

import logging
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

_log = logging.getLogger(__name__)


class CancelOnSigterm:
    """While installed, SIGTERM runs the attached cancel and exits 128 + the signal number."""

    def __init__(self) -> None:
        self.cancel: Callable[[], object] | None = None
        self.what = ""
        self.pending: int | None = None
        """A signal that came before anything was attached, acted on by `attach`."""

    @contextmanager
    def installed(self) -> Iterator["CancelOnSigterm"]:
        """Handle SIGTERM while inside; restore the previous handler after."""
        previous = signal.signal(signal.SIGTERM, self._handle)
        try:
            yield self
        finally:
            signal.signal(signal.SIGTERM, previous)

    def attach(self, what: str, cancel: Callable[[], object]) -> None:
        """`what` (for the log) now exists and `cancel` stops it; run it now if SIGTERM came."""
        self.what, self.cancel = what, cancel
        if self.pending is not None:
            self._cancel(self.pending, cancel)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.cancel is None:
            _log.warning("Received signal %d while submitting: cancelling once submitted", signum)
            self.pending = signum
            return
        self._cancel(signum, self.cancel)

    def _cancel(self, signum: int, cancel: Callable[[], object]) -> None:
        _log.warning("Received signal %d: cancelling %s", signum, self.what)
        cancel()
        raise SystemExit(128 + signum)
