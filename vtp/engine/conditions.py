"""The expressions of a compiled pipeline, in CEL (the Common Expression Language) as Vertex
and the KFP backend evaluate them, with cel-python.

- **Trigger conditions** (`dsl.If` / `Elif` / `Else`, `dsl.Condition`): a task's
  `triggerPolicy.condition`, such as `int(inputs.parameter_values['pipelinechannel--n']) > 5`,
  over the task's resolved input parameters.
- **Parameter selectors** (a ParallelFor's sub-variables, `item.a`): an input's
  `parameterExpressionSelector`, such as `parseJson(string_value)["a"]`, over one value.

Parameter values are protobuf `Value`s on Vertex, so every number is a double here too; the
compiler writes `int(...)` where it compares integers.
"""

import json
from typing import Any

import celpy
from celpy import celtypes

_ENV = celpy.Environment()


class ExpressionError(ValueError):
    """An expression that does not compile or cannot be evaluated over the given values."""


def condition_holds(expression: str, parameters: dict[str, Any]) -> bool:
    """Whether a trigger condition is true for a task whose input parameters are `parameters`."""
    activation = {"inputs": _cel({"parameter_values": parameters})}
    result = _evaluate(expression, activation)
    if not isinstance(result, celtypes.BoolType):
        raise ExpressionError(f"condition {expression!r} gave {result!r}, not true or false")
    return bool(result)


def select(expression: str, value: Any) -> Any:
    """`value` through a parameter expression selector (`string_value` is the value as a
    string: JSON for anything but a string)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return _python(_evaluate(expression, {"string_value": celtypes.StringType(text)}))


def _evaluate(expression: str, activation: dict[str, Any]) -> Any:
    try:
        program = _ENV.program(_ENV.compile(expression), functions={"parseJson": _parse_json})
        result = program.evaluate(activation)
    except (celpy.CELParseError, celpy.CELEvalError, TypeError, ValueError) as exc:
        raise ExpressionError(f"cannot evaluate {expression!r}: {exc}") from exc
    if isinstance(result, celpy.CELEvalError):
        raise ExpressionError(f"cannot evaluate {expression!r}: {result}")
    return result


def _parse_json(text: Any) -> Any:
    return _cel(json.loads(str(text)))


def _cel(value: Any) -> Any:
    """A JSON-like Python value as CEL values, with protobuf's numbers (all doubles)."""
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int | float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, dict):
        return celtypes.MapType({celtypes.StringType(k): _cel(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return celtypes.ListType([_cel(v) for v in value])
    if value is None:
        return None
    return celtypes.StringType(str(value))


def _python(value: Any) -> Any:
    """A CEL result as a plain Python value (whole doubles stay floats: the caller types them)."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, celtypes.IntType | celtypes.UintType):
        return int(value)
    if isinstance(value, celtypes.DoubleType):
        return float(value)
    if isinstance(value, celtypes.StringType):
        return str(value)
    if isinstance(value, celtypes.MapType):
        return {str(k): _python(v) for k, v in value.items()}
    if isinstance(value, celtypes.ListType):
        return [_python(v) for v in value]
    return value
