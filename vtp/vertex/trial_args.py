"""Hyperparameters as the flags Vertex appends to a trial's args: `--<parameterId>=<value>`.

The `custom_job` component appends its `parameters` this way (so a retrain with the best trial's
values runs as that trial ran), and the local service appends a trial's parameters the same way.
Numbers arrive as doubles (protobuf `Value`s, a pipeline's JSON): 32.0 is written `32`, so that
an `int` argparse flag takes it; other numbers keep Python's shortest round-trip form.
"""

from collections.abc import Mapping, Sequence
from typing import Any

from google.cloud import aiplatform_v1


def flag_value(value: Any) -> str:
    """The command-line form of one parameter value: whole numbers without a decimal point."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return str(value)
    return str(int(value)) if value.is_integer() else repr(value)


def trial_args(parameters: Mapping[str, Any]) -> list[str]:
    """`--<id>=<value>` for each parameter, in the mapping's order."""
    return [f"--{key}={flag_value(value)}" for key, value in parameters.items()]


def numbers_as_text(job_spec: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a CustomJobSpec (REST dict, as a pipeline passes one) whose pools' commands,
    args and env values hold text: a number there (a pipeline's dict, where every number is a
    double) is written as `flag_value` writes it, `16.0` as `16`, as gcloud would send it."""
    spec = dict(job_spec)
    pools = spec.get("workerPoolSpecs")
    if isinstance(pools, list):
        spec["workerPoolSpecs"] = [_pool_as_text(pool) for pool in pools]
    return spec


def _pool_as_text(pool: Any) -> Any:
    if not isinstance(pool, Mapping):
        return pool
    pool = dict(pool)
    for task in ("containerSpec", "pythonPackageSpec"):
        if not isinstance(pool.get(task), Mapping):
            continue
        task_spec = pool[task] = dict(pool[task])
        for key in ("command", "args"):
            if isinstance(task_spec.get(key), list):
                task_spec[key] = [_as_text(value) for value in task_spec[key]]
        if isinstance(task_spec.get("env"), list):
            task_spec["env"] = [
                {**e, "value": _as_text(e["value"])} if isinstance(e, Mapping) and "value" in e
                else e
                for e in task_spec["env"]
            ]  # fmt: skip
    return pool


def _as_text(value: Any) -> Any:
    """Numbers as flag text; anything else (text, or a mistake the spec's checks name) as is."""
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return flag_value(value) if is_number else value


def append_args(spec: aiplatform_v1.CustomJobSpec, args: Sequence[Any]) -> None:
    """Append `args` to every pool's container or Python package args (skipped pools have none).
    A number among them (from a pipeline's list, where every number is a double) is written as
    `flag_value` writes it: `2.0` as `2`."""
    args = [flag_value(arg) for arg in args]
    for pool in spec.worker_pool_specs:
        if "container_spec" in pool:
            pool.container_spec.args.extend(args)
        elif "python_package_spec" in pool:
            pool.python_package_spec.args.extend(args)
