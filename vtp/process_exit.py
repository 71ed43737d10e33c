"""Ending a process that has finished its work without the interpreter's teardown.

A Python process that imported PyTorch (or kfp and the aiplatform SDK) spends a second or more
at exit freeing its thousands of modules one by one. Nothing waits for that but whoever waits
for the process: a job for its replicas, a pipeline run for its worker. `exit_now` keeps what an
exit does that matters and skips the rest (the pipeline fork server's tasks end the same way).
"""

import atexit
import os
import sys
import threading
from typing import NoReturn


def exit_now(code: int) -> NoReturn:
    """End the process with `code` as `sys.exit(code)` would, less the teardown: non-daemon
    threads are waited for, atexit handlers run (logging's flush, a library's own), stdout
    and stderr are flushed, then the process ends."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
