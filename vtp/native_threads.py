"""How many threads this process runs, native ones included: what decides whether it may fork
(a lock another thread holds would stay held in the child). The pipeline fork server, the warm
replica server and a trainer node on the CPU ask before they fork."""

import os
import threading


def native_threads() -> int:
    """How many threads this process has (native ones too: a library's pool counts)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()
