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
