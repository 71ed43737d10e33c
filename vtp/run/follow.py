"""Following a local pipeline job to its end: its log as it grows, its state, and Ctrl-C.

`follow` prints each complete line of the run's log as it appears, until the job ends: it asks
the service's `:logs` long poll, which answers as soon as there is a new line or the job has
ended (with the job's state), so neither is seen a poll interval late. While it follows,
SIGINT and SIGTERM do not end the process (`Interrupts`): the first asks the service to cancel
the job, which stops the running task and what the tasks started (jobs cancelled, models
undeployed, each noted in the log), and following goes on until the job is CANCELLED; a second
stops waiting. Nothing is left half-done by a signal landing in the middle
of a request: the handler only counts.

Lines a task printed carry its path (`[train] ...`): a traceback among them shows only its last
line, and a chain of them (`raise ... from`, an error while handling another) only the last
one's, which carries the message, unless `VTP_DEBUG` is set (`vtp --debug`); each error is
printed once. The last lines of each task are kept for the summary (`TaskLines.tails`).

Output that cannot be written (the reader of a pipe has gone, as `vtp run | tee` loses `tee` on
Ctrl-C) is dropped, so the run is still cancelled and reported on stderr, without a
BrokenPipeError.
"""

import contextlib
import os
import re
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType
from typing import TextIO

from google.api_core.exceptions import BadRequest, FailedPrecondition

from vtp.local.pipeline_jobs.teardown import NOTE
from vtp.run.job import RunClient
from vtp.vertex.states import PIPELINE_ENDED

POLL_SECONDS = 0.3
"""The longest a `:logs` long poll waits for a line or the end: how late a signal (Ctrl-C) may
be acted on, since the handler only counts it."""
TAIL_LINES = 12
DEBUG_ENV = "VTP_DEBUG"
"""Set (as `vtp --debug` does) to print tasks' tracebacks whole."""
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TASK = re.compile(r"^\[([^\]\s]+)\] ")
_EXECUTOR = re.compile(r"^\s*\[KFP Executor [^\]]*\]: ")
_CHAINED = frozenset(
    {
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:",
    }
)
"""The lines between two tracebacks of one chain: the first one's exception caused the next."""


class Interrupts:
    """SIGINT and SIGTERM counted, not acted on, while `installed()`."""

    def __init__(self) -> None:
        self.count = 0
        self._event = threading.Event()

    @contextlib.contextmanager
    def installed(self) -> Iterator["Interrupts"]:
        """Count the signals for the duration; the previous handlers come back after."""
        previous = {s: signal.signal(s, self._handle) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield self
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def wait(self, seconds: float) -> None:
        """Sleep up to `seconds`, less if a signal comes."""
        self._event.wait(seconds)
        self._event.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1
        self._event.set()


def write(stream: TextIO, text: str) -> None:
    """Write and flush `text`; a stream whose reader has gone is replaced by /dev/null."""
    try:
        stream.write(text)
        stream.flush()
    except (BrokenPipeError, ValueError):  # ValueError: closed
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())


@dataclass
class LogReader:
    """A run's log read on from where it was left, complete lines only."""

    client: RunClient
    name: str
    offset: int = 0
    partial: str = ""

    def new_lines(self, final: bool = False, wait: float = 0.0) -> list[str]:
        """The lines written since the last call (`final`: an unterminated last one too);
        `wait`: up to that many seconds for the first text, or the run's end (the state the
        last answer gave is `client.last_state`)."""
        lines: list[str] = []
        while True:
            text, offset = self.client.logs(self.name, self.offset, wait)
            wait = 0.0
            self.offset, data = offset, self.partial + text
            *complete, self.partial = data.split("\n")
            lines += [f"{line}\n" for line in complete]
            if not text:
                break
        return lines + (self.rest() if final else [])

    def rest(self) -> list[str]:
        """The unterminated last line, if any, as a line: for when the log has no more to
        give (an empty answer once the run had ended), so no request need ask again."""
        rest, self.partial = self.partial, ""
        return [rest + "\n"] if rest else []


class TaskLines:
    """The log as a person reads it, task by task (a line's `[task path] ` prefix, which the
    engine puts on what a task prints): a traceback shows its exception only, a chain of them
    its last exception only (whole with `VTP_DEBUG`), and each task's last lines are kept, for
    the summary of a failed one.

    A traceback's exception lines are held until what follows shows whether they caused another
    (a chain's next traceback) and so go unprinted: until the task's next traceback, another
    task's line, a line of the run's own, the end of the next batch of lines (a traceback may
    be read in two), or the last batch."""

    def __init__(self) -> None:
        self.frames = os.environ.get(DEBUG_ENV, "") not in ("", "0")
        self.tails: dict[str, deque[str]] = {}
        self._in_traceback: dict[str, bool] = {}
        self._held: list[tuple[str, str]] = []
        """(task, line) after a traceback's frames, in the order they came."""
        self._waited = False
        """Whether the held lines have waited through the end of a batch already."""

    def shown(self, lines: list[str], final: bool = False) -> list[str]:
        """The lines of a batch to print, in order (`final`: the last batch); tasks' tails
        take what they say."""
        out = [kept for line in lines for kept in self._take(line)]
        if final or self._waited:
            return out + self._release()
        self._waited = bool(self._held)
        return out

    def _take(self, line: str) -> list[str]:
        found = _TASK.match(_ANSI.sub("", line))
        task = found[1] if found else ""
        out = self._release() if self._held and self._held[0][0] != task else []
        if found is None:
            return [*out, line]
        body = _ANSI.sub("", line)[found.end() :]
        if self.frames:
            return [*out, *self._said(task, line)]
        if body.startswith("Traceback (most recent call last)"):
            if self._chained():
                self._held.clear()  # the cause: the next exception's line says it again
            out += self._release()
            self._in_traceback[task] = True
            return out
        if self._in_traceback.get(task) and body[:1].isspace():
            return out
        if self._in_traceback.pop(task, False) or self._held:
            self._held.append((task, line))
            return out
        return [*out, *self._said(task, line)]

    def _chained(self) -> bool:
        """Whether the held lines end with a chain's link to the next traceback."""
        said = [_ANSI.sub("", line)[len(task) + 3 :].strip() for task, line in self._held]
        said = [text for text in said if text]
        return bool(said) and said[-1] in _CHAINED

    def _release(self) -> list[str]:
        held, self._held, self._waited = self._held, [], False
        return [kept for task, line in held for kept in self._said(task, line)]

    def _said(self, task: str, line: str) -> list[str]:
        """`line`, printed; its task's tail takes it."""
        body = _ANSI.sub("", line)[len(task) + 3 :]
        tail = self.tails.setdefault(task, deque(maxlen=TAIL_LINES))
        tail.append(_EXECUTOR.sub("", body.rstrip()))
        return [line]


@dataclass
class Followed:
    """What following a run saw."""

    notes: list[str] = field(default_factory=list)
    """What the service stopped with the run (its `NOTE` lines in the log)."""
    cancelled: bool = False
    """Whether a signal cancelled the run."""
    waited: bool = True
    """False when a second signal stopped the wait before the run ended."""
    tails: dict[str, list[str]] = field(default_factory=dict)
    """Each task's last lines (tracebacks but their last line), by the task's path."""


def follow(
    client: RunClient,
    name: str,
    interrupts: Interrupts,
    out: TextIO = sys.stdout,
    on_cancel: Callable[[], None] = lambda: None,
) -> Followed:
    """Print the run `name`'s log to `out` until it ends; the first signal cancels it (after
    `on_cancel()`), a second stops waiting."""
    log, seen, tasks = LogReader(client, name), Followed(), TaskLines()
    colours = out.isatty()
    while True:
        asked, offset = time.monotonic(), log.offset
        lines = log.new_lines(wait=POLL_SECONDS)
        ended = client.last_state in PIPELINE_ENDED  # as of before the text was read
        if log.offset == offset and not ended:  # a service that does not long-poll: at once
            interrupts.wait(POLL_SECONDS - (time.monotonic() - asked))
        if ended:  # its last answer was empty, and the run had ended before it was read
            lines += log.rest()  # an unterminated last line
        seen.notes += [line[len(NOTE) :].rstrip() for line in lines if line.startswith(NOTE)]
        for line in tasks.shown(lines, final=ended):
            write(out, line if colours else _ANSI.sub("", line))
        if ended:
            seen.tails = {task: list(tail) for task, tail in tasks.tails.items()}
            return seen
        if interrupts.count and not seen.cancelled:
            seen.cancelled = True
            on_cancel()
            with contextlib.suppress(FailedPrecondition, BadRequest):  # it has just ended
                client.cancel(name)
        elif interrupts.count > 1:
            seen.waited = False
            return seen
