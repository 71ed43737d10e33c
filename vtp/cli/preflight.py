"""Pipeline parameters checked before anything runs, with the rules the tasks would apply later.

`vtp run` and `vtp submit` call `check(values)` once the values are typed: a `metric` the
evaluation does not know, a `scheduling_strategy` Vertex does not have, or a `worker_pool_specs`
entry that gcloud's syntax rejects would otherwise fail a task minutes into the run. Parameters
are recognised by name, so a user's own pipeline that uses the same names gets the same checks.

The trainer's task: a `--task` in `trainer_args` or `trial_args` that names another module than
the `task` parameter is refused (the pipelines put `--task=<task>` ahead of those args). With a
`folder` (`vtp run`'s, where local tasks and replicas run), the task must also be importable from
there, as a module of the folder or an installed one such as the built-in tasks; nothing is
imported to find out, not even the packages the module is in.
"""

import importlib.util
import sys
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from typing import Any

from vtp.cli import UsageError

TASK_ARGS = ("trainer_args", "trial_args")
"""The parameters whose lists are trainer flags (and so may hold a `--task`)."""


def check(values: dict[str, Any], folder: Path | None = None) -> None:
    """UsageError naming the `--param` whose value a task would refuse; with `folder`, also a
    trainer task that a replica started there could not import."""
    from google.cloud.aiplatform_v1 import Scheduling

    from vtp.launchers.evaluation import HIGHER_IS_BETTER
    from vtp.trainer.config import Config

    metric = values.get("metric")
    # Another task may report metrics of its own: the evaluation names them if `metric` is not
    # one (the task is not imported here to find out).
    own_metrics = values.get("task", Config.task) != Config.task
    if isinstance(metric, str) and metric not in HIGHER_IS_BETTER and not own_metrics:
        raise UsageError(f"--param metric: {metric!r} is not one of {', '.join(HIGHER_IS_BETTER)}")
    if isinstance(metric, str) and not metric.isidentifier():
        raise UsageError(f"--param metric: {metric!r} is not a metric's name")
    strategy = values.get("scheduling_strategy")
    # proto.Enum is an IntEnum at run time, but untyped for mypy (no stubs): hence the ignore.
    strategies = [s.name for s in Scheduling.Strategy if s.value]  # type: ignore[attr-defined]
    if isinstance(strategy, str) and strategy and strategy.upper() not in strategies:
        raise UsageError(
            f"--param scheduling_strategy: {strategy!r} is not one of {', '.join(strategies)}"
        )
    pools = values.get("worker_pool_specs")
    if isinstance(pools, list) and pools:
        _check_pools(pools)
    _check_task(values, folder)


def _check_task(values: dict[str, Any], folder: Path | None) -> None:
    from vtp.vertex.task_flags import named_tasks

    task = values.get("task")
    tasks = {"task": task} if isinstance(task, str) else {}
    for param in TASK_ARGS:
        args = values.get(param)
        for named in named_tasks(args) if isinstance(args, list) else []:
            if isinstance(task, str) and named != task:
                raise UsageError(
                    f"--param {param}: --task={named} contradicts --param task={task}; "
                    f"name the task with --param task={named} only"
                )
            tasks.setdefault(param, named)
    if folder is None:
        return
    for param, name in tasks.items():
        if not findable(name, folder):
            where = "--param task" if param == "task" else f"--param {param}: --task"
            raise UsageError(
                f"{where}={name}: no such module in {folder} or installed (a built-in task "
                "is vtp.trainer.tasks.<name>)"
            )


def findable(module: str, folder: Path) -> bool:
    """Whether `module` can be imported by a process started in `folder` (on its import path
    first), found without importing it or any package above it."""
    parts = module.split(".")
    if not all(part.isidentifier() for part in parts):
        return False
    importlib.invalidate_caches()
    spec: ModuleSpec | None = PathFinder.find_spec(parts[0], [str(folder), *sys.path])
    if spec is None:  # an installed package that only a meta path finder knows (editable)
        try:
            spec = importlib.util.find_spec(parts[0])
        except ValueError:  # imported already, without a spec
            return parts[0] in sys.modules
    for depth in range(1, len(parts)):
        locations = spec.submodule_search_locations if spec is not None else None
        if locations is None:
            return False
        spec = PathFinder.find_spec(".".join(parts[: depth + 1]), list(locations))
    return spec is not None


def _check_pools(specs: list[Any]) -> None:
    from vtp.vertex.poolspec import check_software, parse_worker_pool_spec
    from vtp.vertex.protodict import SpecError

    if not all(isinstance(spec, str) for spec in specs):
        raise UsageError("--param worker_pool_specs: a list of gcloud --worker-pool-spec strings")
    try:
        check_software([parse_worker_pool_spec(s, i) for i, s in enumerate(specs)], [])
    except SpecError as exc:
        raise UsageError(f"--param worker_pool_specs: {exc}") from None
