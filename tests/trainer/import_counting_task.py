"""A test task: the digits task, which appends this process's id to `$IMPORT_LOG` (when set) as
it is imported, so a test can count the processes that imported it."""

import os

from vtp.trainer.tasks.digits import build_datasets, build_model, labels

__all__ = ["build_datasets", "build_model", "labels"]

if os.environ.get("IMPORT_LOG"):
    with open(os.environ["IMPORT_LOG"], "a") as log:
        log.write(f"{os.getpid()}\n")
