"""Values as people read them in logs and summaries: 0.9694, not 0.9694444444444444; 32, not 32.0.

Protobuf `Value`s carry every number as a double, so a tuning trial's integer parameter comes
back as 32.0; the JSON of a kfp output does the same.
"""

from typing import Any


def readable(value: Any) -> str:
    """`value` with floats rounded to 4 significant digits and whole floats as integers."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.4g}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {readable(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(readable(v) for v in value) + "]"
    return str(value)
