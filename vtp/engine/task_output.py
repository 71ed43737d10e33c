"""What a local pipeline run prints of its tasks (a local pipeline job's log, and so `vtp
run`'s): each task's own lines, without kfp's bookkeeping.

kfp's executor logs the whole executor input (a JSON dump of every input and output path) at
the start of each task, and its loading chatter; both bury the lines a person follows (job
states, evaluation figures). `readable` drops them; `plain` drops colour codes.
"""

import re
from collections.abc import Iterable, Iterator

_DUMP_START = "Got executor_input:"
_NOISE = ("Looking for component `", "Loading KFP component ", "Wrote executor output file")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_EXECUTOR_PREFIX = re.compile(r"^\s*\[KFP Executor [^\]]*\]: ")
TAIL_LINES = 12


def plain(text: str) -> str:
    """`text` without terminal colour codes."""
    return _ANSI.sub("", text)


def executor_line(line: str) -> str:
    """A line of a task's output without the `[KFP Executor ...]:` prefix."""
    return _EXECUTOR_PREFIX.sub("", line)


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
