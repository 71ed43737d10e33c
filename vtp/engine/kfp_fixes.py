"""Fixes for kfp.local (2.17) that local pipeline runs need (`vtp run`, local pipelineJobs):
this one for conditions, and Vertex's placeholders and GCPC's components (`vertex_tasks.py`).

kfp.local resolves a `dsl.If` condition's task-output channels only for single-output components
(`task-Output`); a named output (`pipelinechannel--evaluate-checkpoints-passed`) falls through to
a parent-input lookup that fails, so the condition never runs. Vertex Pipelines reads the same
compiled condition correctly. The fix tries each `<task>-<output>` split of the channel against
the task outputs already in the IO store, and otherwise defers to kfp.
"""

import functools
import logging
from typing import Any

_PREFIX = "pipelinechannel--"


def apply() -> None:
    """Patch kfp.local once (idempotent)."""
    from kfp.local.orchestrator.enhanced_dag_orchestrator import ConditionEvaluator

    from vtp.engine import vertex_tasks

    vertex_tasks.apply()

    original = ConditionEvaluator._resolve_pipeline_channel
    if getattr(original, "_vtp_fixed", False):
        return

    @functools.wraps(original)
    def resolve(channel_ref: str, io_store: Any) -> Any:
        found, value = task_output(channel_ref.removeprefix(_PREFIX), io_store)
        return value if found else original(channel_ref, io_store)

    resolve._vtp_fixed = True  # type: ignore[attr-defined]  # a marker: apply() runs once
    ConditionEvaluator._resolve_pipeline_channel = staticmethod(resolve)


def task_output(reference: str, io_store: Any) -> tuple[bool, Any]:
    """(True, value) when `reference` is `<task>-<output>` of a task that already ran."""
    for cut in (i for i, char in enumerate(reference) if char == "-"):
        task, output = reference[:cut], reference[cut + 1 :]
        try:
            return True, io_store.get_task_output(task, output)
        except (KeyError, ValueError):
            continue
    logging.debug("no task output matches %s", reference)
    return False, None
