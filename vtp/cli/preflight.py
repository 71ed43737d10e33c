"""Pipeline parameters checked before anything runs, with the rules the tasks would apply later.

`vtp run` and `vtp submit` call `check(values)` once the values are typed: a `metric` the
evaluation does not know, a `scheduling_strategy` Vertex does not have, or a `worker_pool_specs`
entry that gcloud's syntax rejects would otherwise fail a task minutes into the run. Parameters
are recognised by name, so a user's own pipeline that uses the same names gets the same checks.
"""

from typing import Any

from vtp.cli import UsageError


def check(values: dict[str, Any]) -> None:
    """UsageError naming the `--param` whose value a task would refuse."""
    from google.cloud.aiplatform_v1 import Scheduling

    from vtp.launchers.evaluation import HIGHER_IS_BETTER

    metric = values.get("metric")
    if isinstance(metric, str) and metric not in HIGHER_IS_BETTER:
        raise UsageError(f"--param metric: {metric!r} is not one of {', '.join(HIGHER_IS_BETTER)}")
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


def _check_pools(specs: list[Any]) -> None:
    from vtp.vertex.poolspec import check_software, parse_worker_pool_spec
    from vtp.vertex.protodict import SpecError

    if not all(isinstance(spec, str) for spec in specs):
        raise UsageError("--param worker_pool_specs: a list of gcloud --worker-pool-spec strings")
    try:
        check_software([parse_worker_pool_spec(s, i) for i, s in enumerate(specs)], [])
    except SpecError as exc:
        raise UsageError(f"--param worker_pool_specs: {exc}") from None
