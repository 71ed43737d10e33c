"""Importing without the cyclic garbage collector, as forking servers do.

Importing a large library allocates hundreds of thousands of objects that live as long as the
process (modules, functions, classes, protobuf descriptors) and almost no garbage cycles. The
collector runs anyway, every 700 allocations, and every so often a full pass over everything
allocated so far: while torch imports, that is a quarter of the CPU the import takes (torch:
1.33-1.59 s with the collector, 1.09-1.35 s without; torch.export after it: 1.32-1.51 s and
0.85-1.13 s; the aiplatform types, the service and kfp that `vtp run` imports before its job
exists: 0.61-0.64 s and 0.47-0.55 s of CPU).

`paused()` turns the collector off for a phase of imports; at its end everything allocated so
far moves to the permanent generation (`gc.freeze`), which later passes skip, and the collector
is on again, so what the process allocates afterwards is collected as before. A process forked
afterwards (a pipeline task from the fork server) then never walks the preloaded objects either,
and so does not copy the memory pages such a walk would write to. What the frozen phase left as
garbage cycles stays allocated: little, next to what it imported.
"""

import contextlib
import gc
from collections.abc import Iterator

_paused = False
"""Whether `pause` turned the collector off and `resume` has not turned it back on."""


def pause() -> None:
    """Turn the collector off until `resume`, if it is on (a phase that spans functions)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """End what `pause` began: freeze what exists, turn the collector back on. Nothing when
    `pause` did not turn it off (idempotent)."""
    global _paused
    if _paused:
        _paused = False
        _freeze_and_collect_on()


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The block without the collector, then `resume` (if the collector was on before it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            _freeze_and_collect_on()


def _freeze_and_collect_on() -> None:
    """Move everything allocated so far to the permanent generation, and collect again."""
    gc.freeze()
    gc.enable()
