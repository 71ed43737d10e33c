"""What a local pipeline run prints (`vtp run`, a local pipeline job's log): each task's own log
lines, without kfp.local's bookkeeping, and the cause of a failure.

kfp's executor logs the whole executor input (a JSON dump of every input and output path) at
the start of each task, and kfp.local warns on every task that the project image is not a plain
Python image. Both bury the lines a person follows: job states, evaluation figures. `quiet()`
replaces kfp.local's subprocess printer with one that drops them, keeps the last lines of a task
that fails (`failure_tail`, the cause a failed run ends with), and turns kfp.local's colours off
when stdout is not a terminal.
"""

import os
import re
import sys
import warnings
from collections import deque
from collections.abc import Iterable, Iterator

from vtp.engine import fork_tasks

_DUMP_START = "Got executor_input:"
_NOISE = ("Looking for component `", "Loading KFP component ", "Wrote executor output file")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_EXECUTOR_PREFIX = re.compile(r"^\s*\[KFP Executor [^\]]*\]: ")
TAIL_LINES = 12
DEBUG_ENV = "VTP_DEBUG"
"""Set (as `vtp --debug` does) to print tasks' tracebacks whole."""
_failed_tails: list[list[str]] = []


def quiet() -> None:
    """Filter kfp.local's task output from now on (idempotent)."""
    from kfp.local import subprocess_task_handler as handler

    warnings.filterwarnings(
        "ignore", message="You may be attemping to run a task that uses custom", module="kfp"
    )
    if handler.run_local_subprocess is not run_task_process:
        handler.run_local_subprocess = run_task_process
    if not sys.stdout.isatty():
        from kfp.local import logging_utils

        logging_utils.color_text = lambda text, _color: text


def plain(text: str) -> str:
    """`text` without terminal colour codes."""
    return _ANSI.sub("", text)


def failure_tail() -> list[str]:
    """The last lines a failed task printed (of the latest failure), for the run's summary."""
    return list(_failed_tails[-1]) if _failed_tails else []


def executor_line(line: str) -> str:
    """A line of a task's output without the `[KFP Executor ...]:` prefix."""
    return _EXECUTOR_PREFIX.sub("", line)


def run_task_process(full_command: list[str], env_vars: dict[str, str] | None = None) -> int:
    """kfp.local's `run_local_subprocess`, printing the task's lines through `readable`; the
    task is forked from a warm process when it can be (`fork_tasks`)."""
    with fork_tasks.task_process(full_command, {**os.environ, **(env_vars or {})}) as process:
        tail: deque[str] = deque(maxlen=TAIL_LINES)
        frames = os.environ.get(DEBUG_ENV, "") not in ("", "0")
        in_traceback = False
        for line in readable(process.lines):
            # The cause is in the lines, not in the frames: a traceback shows its last line
            # only (all of it with --debug).
            if line.startswith("Traceback (most recent call last)"):
                in_traceback = True
            elif not (in_traceback and line[:1].isspace()):
                in_traceback = False
                tail.append(_EXECUTOR_PREFIX.sub("", plain(line.rstrip())))
            elif not frames:
                continue
            if frames or not line.startswith("Traceback (most recent call last)"):
                print(line, end="")
        code = process.wait()
        if code:
            _failed_tails.append(list(tail))
        return code


def readable(lines: Iterable[str]) -> Iterator[str]:
    """The lines without the executor-input JSON dump and the executor's loading chatter."""
    closing: str | None = None  # the dump's last line: its top-level brace, as indented
    for line in lines:
        if closing == "":
            closing = line.rstrip().replace("{", "}")  # the opening brace's indentation
            continue
        if closing is not None:
            closing = None if line.rstrip() == closing else closing
            continue
        if line.rstrip().endswith(_DUMP_START):
            closing = ""
            continue
        if "[KFP Executor" in line and any(noise in line for noise in _NOISE):
            continue
        yield line
