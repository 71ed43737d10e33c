"""`python -m trainer [--flag=value ...]`: train as one node (Vertex replica) of a job.

Flags are the fields of trainer.config.Config (`--help` lists them); exit statuses are listed in
trainer.launch.
"""

import os
import sys
from collections.abc import Sequence

from trainer.config import parse_args
from trainer.launch import EXIT_USAGE, launch, plan


def main(argv: Sequence[str] | None = None, gpus: int | None = None) -> int:
    """Parse flags, check the cluster, GPUs and task, and run this node's processes. `gpus`:
    the GPUs this node sees, default the visible ones (a caller may say how many)."""
    config = parse_args(argv)
    try:
        nodes, nproc = plan(config, os.environ, gpus)
    except ValueError as exc:
        print(f"python -m trainer: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return launch(config, nodes, nproc)


if __name__ == "__main__":
    sys.exit(main())
