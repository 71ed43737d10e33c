"""What `vtp run` prints: each task's own log lines, without kfp.local's bookkeeping.

kfp's executor logs the whole executor input (a JSON dump of every input and output path) at
the start of each task, and kfp.local warns on every task that the project image is not a plain
Python image. Both bury the lines a person follows: job states, evaluation figures. `quiet()`
replaces kfp.local's subprocess printer with one that drops them; nothing else changes.
"""

import os
import subprocess
import warnings
from collections.abc import Iterable, Iterator

_DUMP_START = "Got executor_input:"
_NOISE = ("Looking for component `", "Loading KFP component ", "Wrote executor output file")


def quiet() -> None:
    """Filter kfp.local's task output from now on (idempotent)."""
    from kfp.local import subprocess_task_handler as handler

    warnings.filterwarnings(
        "ignore", message="You may be attemping to run a task that uses custom", module="kfp"
    )
    if handler.run_local_subprocess is not run_task_process:
        handler.run_local_subprocess = run_task_process


def run_task_process(full_command: list[str], env_vars: dict[str, str] | None = None) -> int:
    """kfp.local's `run_local_subprocess`, printing the task's lines through `readable`."""
    env = {**os.environ, **env_vars} if env_vars else None
    with subprocess.Popen(
        full_command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
        env=env,
    ) as process:
        for line in readable(iter(process.stdout.readline, "")):
            print(line, end="")
        return process.wait()


def readable(lines: Iterable[str]) -> Iterator[str]:
    """The lines without the executor-input JSON dump and the executor's loading chatter."""
    in_dump = False
    for line in lines:
        if in_dump:
            in_dump = line.rstrip() != "}"  # the dump ends with its top-level closing brace
            continue
        if line.rstrip().endswith(_DUMP_START):
            in_dump = True
            continue
        if "[KFP Executor" in line and any(noise in line for noise in _NOISE):
            continue
        yield line
