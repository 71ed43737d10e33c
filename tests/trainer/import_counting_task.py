"""A test task: the digits task, which appends a line to `$IMPORT_LOG` (when set) each time it
is imported: the process id, the RANK it saw then, and whether the process was spawned. It
trains only where the RANK it was imported under is its process's own, as a task written for
torchrun may read it on import."""

import json
import os
import sys

from vtp.trainer.tasks import digits

labels = digits.labels
build_model = digits.build_model
IMPORTED_UNDER_RANK = os.environ.get("RANK")

if os.environ.get("IMPORT_LOG"):
    with open(os.environ["IMPORT_LOG"], "a") as log:
        spawned = "spawn_main" in " ".join(sys.orig_argv)
        line = {"pid": os.getpid(), "rank": IMPORTED_UNDER_RANK, "spawned": spawned}
        log.write(json.dumps(line) + "\n")


def build_datasets(config):
    """The digits data sets, in a process that imported this module under its own RANK."""
    rank = os.environ.get("RANK")
    if rank != IMPORTED_UNDER_RANK:
        raise RuntimeError(f"imported under RANK={IMPORTED_UNDER_RANK}, runs as RANK={rank}")
    return digits.build_datasets(config)
