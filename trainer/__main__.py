"""`python -m vtp.trainer [--flag=value ...]`: train as one node (Vertex replica) of a job.

Flags are the fields of vtp.trainer.config.Config (`--help` lists them); exit statuses are listed in
vtp.trainer.launch.

Flags are read before PyTorch is imported (`--help` and a bad flag answer at once); as a command,
the trainer then says what it is doing, since importing PyTorch and meeting the job's other
processes take seconds in which a replica would otherwise be silent.
"""

import os
import sys
from collections.abc import Sequence

from vtp import import_gc
from vtp.process_exit import exit_now
from vtp.trainer.config import parse_args


def main(argv: Sequence[str] | None = None, gpus: int | None = None, announce: bool = False) -> int:
    """Parse flags, check the cluster, GPUs and task, and run this node's processes. `gpus`:
    the GPUs this node sees, default the visible ones (a caller may say how many); `announce`:
    print a first line before the imports."""
    config = parse_args(argv)
    if announce:
        peers = os.environ.get("CLUSTER_SPEC") or os.environ.get("MASTER_ADDR")
        then = "meeting the job's other nodes" if peers else "training"
        print(f"trainer: starting {config.task}: importing PyTorch and the task, then {then}",
              flush=True)  # fmt: skip
    with import_gc.paused():  # PyTorch's objects, frozen: training's collections skip them
        from vtp.trainer.launch import EXIT_USAGE, launch, plan

    try:
        nodes, nproc = plan(config, os.environ, gpus)
    except ValueError as exc:
        print(f"python -m vtp.trainer: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return launch(config, nodes, nproc)


RENAMED = "python -m trainer is now python -m vtp.trainer (the project's modules live under vtp)"
"""What `python -m trainer` says where this folder is importable as `trainer` (a checkout's top
folder), for one release: the name is a team's (Google's guide gives every team a `trainer/`)."""

if __name__ == "__main__" and __spec__ is not None and __spec__.name == "trainer.__main__":
    print(RENAMED, file=sys.stderr)
    sys.exit(2)
if __name__ == "__main__":
    # Not sys.exit: the interpreter's teardown of PyTorch's modules takes a second or two
    # after training has ended, and the job waits for it.
    exit_now(main(announce=True))
