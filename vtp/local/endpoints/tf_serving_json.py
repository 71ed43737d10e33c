"""TensorFlow Serving's REST `predict` JSON, to and from numpy arrays (pure: numpy only, no
TensorFlow), as TF Serving's own conversion (`json_tensor.cc`) reads and writes it.

What Vertex's prebuilt TensorFlow prediction images answer on `predict` and `rawPredict` (they
run TF Serving on the SavedModel; docs: tensorflow.org/tfx/serving/api_rest):

    {"signature_name": S, "instances": [...]}  ->  {"predictions": [...]}   (the row format)
    {"signature_name": S, "inputs": ...}       ->  {"outputs": ...}         (the columnar format)

- `signature_name` is optional (`serving_default`).
- Row format: each instance is an object naming every input of the signature, or, for a signature
  with one input, that input's value itself; every instance's values have one shape, and the
  instances are batched along a new first dimension.
- Columnar format: `inputs` is an object naming every input (each a whole tensor, batch included;
  the inputs need not share a batch size), or, for one input, its value itself.
- Values: numbers for the float and integer types (NaN and Infinity included for floats; an
  integer type takes whole numbers only, within its range), true/false for bool, a string (its
  UTF-8 bytes) or `{"b64": base64}` for string tensors. A tensor is a nested list of one shape
  throughout.
- Answers: a signature with one output answers its values alone, one with several an object
  naming each (row format: one such value or object per instance, so every output must be
  batched like the inputs). Floats are written as short as reads back the same (float32's
  0.7310586, not 0.7310585975646973), and NaN and Infinity as JSON's extension tokens, as TF
  Serving writes them; strings as text, or `{"b64": ...}` for an output whose name ends in
  `_bytes`.

Every body this cannot take is a RequestError (400) whose message starts with the field it is
about (`instances[1].x: ...`); the inputs are checked against the signature's dtypes and known
dimensions here, before TensorFlow sees them. The server (`tf_serving_server.py`) hands in each
signature's inputs as `TensorSpec`s and gets arrays for `tf.constant`.
"""

import base64
import binascii
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy

DEFAULT_SIGNATURE = "serving_default"
BYTES_SUFFIX = "_bytes"
"""An output whose name ends so holds binary strings, written as `{"b64": ...}`."""
STRING = "string"
FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})
INTEGERS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
BOOL = "bool"
SUPPORTED = FLOATS | INTEGERS | {BOOL, STRING}
"""The dtypes TF Serving's JSON carries (`DataType.name` as TensorFlow names them)."""
_FLOAT_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
"""Bits of each float type's significand: a larger whole number would lose precision."""
_FLOAT_MAX = {
    "float16": 65504.0,
    "bfloat16": 3.3895313892515355e38,
    "float32": 3.4028234663852886e38,
}
"""The largest finite value of each float type narrower than Python's."""


class RequestError(ValueError):
    """A body TF Serving's JSON cannot take for the signature; the message starts with the field."""


@dataclass(frozen=True)
class TensorSpec:
    """One input of a signature, as the server reads it from TensorFlow's."""

    dtype: str
    """TensorFlow's name of its type: `float32`, `int64`, `bool`, `string`..."""
    shape: tuple[int | None, ...] | None = None
    """Its dimensions (None where any size goes, the batch's usually); None for any rank."""


@dataclass(frozen=True)
class Request:
    """A predict request, parsed for the signature it names."""

    signature: str
    inputs: dict[str, numpy.ndarray]
    """Each input of the signature as an array TensorFlow takes (strings: an object array of
    bytes; bfloat16: float32, cast by TensorFlow)."""
    row: bool
    """It came in the row format (`instances`): the answer is `predictions`, else `outputs`."""


def parse_request(body: Any, signatures: Mapping[str, Mapping[str, TensorSpec]]) -> Request:
    """The request in `body` (parsed JSON) for one of `signatures` (name -> its inputs);
    RequestError naming the field otherwise."""
    if not isinstance(body, dict):
        raise RequestError(
            "the body must be a JSON object with 'instances' (the row format) or 'inputs' (the "
            "columnar format)"
        )
    name = body.get("signature_name", DEFAULT_SIGNATURE)
    if not isinstance(name, str):
        raise RequestError(f"signature_name: must be a string, not {_json_type(name)}")
    if name not in signatures:
        known = ", ".join(sorted(signatures)) or "none"
        raise RequestError(f"signature_name: the model has no signature {name!r} (it has {known})")
    specs = signatures[name]
    if not specs:
        raise RequestError(f"signature_name: the signature {name!r} takes no inputs")
    if "instances" in body and "inputs" in body:
        raise RequestError("instances, inputs: send one of them, not both")
    if "instances" in body:
        inputs = _from_instances(body["instances"], specs)
    elif "inputs" in body:
        inputs = _from_inputs(body["inputs"], specs)
    else:
        raise RequestError(
            "instances: missing; send 'instances' (the row format) or 'inputs' (the columnar "
            "format)"
        )
    for key, array in inputs.items():
        _check_shape(key, array, specs[key], "instances" in body)
    return Request(name, inputs, "instances" in body)


def make_response(outputs: Mapping[str, numpy.ndarray], row: bool) -> dict[str, Any]:
    """TF Serving's answer holding `outputs` (a signature's, by name): `predictions` for a
    request in the row format, `outputs` for one in the columnar format; RequestError when the
    row format cannot hold them (an output not batched like the others)."""
    if not outputs:
        raise RequestError("outputs: the signature returned none")
    names = sorted(outputs)
    if not row:
        values = {key: _json_values(key, numpy.asarray(outputs[key])) for key in names}
        return {"outputs": values[names[0]] if len(names) == 1 else values}
    batch = None
    for key in names:
        shape = numpy.shape(outputs[key])
        if not shape:
            raise RequestError(
                f"outputs: {key} is a scalar, which the row format ('instances') cannot answer "
                "one per instance; send 'inputs' (the columnar format)"
            )
        if batch is not None and shape[0] != batch:
            raise RequestError(
                f"outputs: {key} has {shape[0]} rows where the other outputs have {batch}; send "
                "'inputs' (the columnar format)"
            )
        batch = shape[0]
    columns = {key: _json_values(key, numpy.asarray(outputs[key])) for key in names}
    if len(names) == 1:
        return {"predictions": columns[names[0]]}
    return {"predictions": [{key: columns[key][i] for key in names} for i in range(batch or 0)]}


def _from_instances(instances: Any, specs: Mapping[str, TensorSpec]) -> dict[str, numpy.ndarray]:
    """The row format's instances, batched: one array per input."""
    if not isinstance(instances, list):
        raise RequestError(f"instances: must be a list, not {_json_type(instances)}")
    if not instances:
        raise RequestError("instances: the list is empty")
    named = _is_object(instances[0])
    if not named and len(specs) > 1:
        raise RequestError(
            f"instances[0]: an object naming the inputs {_names(specs)} is required (the "
            "signature has several)"
        )
    columns: dict[str, list[Any]] = {key: [] for key in specs}
    shapes: dict[str, tuple[int, ...]] = {}
    only = next(iter(specs))
    for index, instance in enumerate(instances):
        where = f"instances[{index}]"
        if named != _is_object(instance):
            wanted = "an object naming the inputs" if named else "a value (not an object)"
            raise RequestError(f"{where}: {wanted}, as instances[0] is, is required")
        items = instance if named else {only: instance}
        for key in items:
            if key not in specs:
                raise RequestError(
                    f"{where}.{key}: the signature has no input {key!r} (its inputs: "
                    f"{_names(specs)})"
                )
        missing = [key for key in specs if key not in items]
        if missing:
            raise RequestError(f"{where}: no value for the input {', '.join(sorted(missing))}")
        for key, value in items.items():
            field = f"{where}.{key}" if named else where
            flat, shape = _dense(value, specs[key].dtype, field)
            first = shapes.setdefault(key, shape)
            if shape != first:
                raise RequestError(
                    f"{field}: shape {list(shape)} where instances[0] has {list(first)} (every "
                    "instance's value of an input has one shape)"
                )
            columns[key].extend(flat)
    return {
        key: _array(columns[key], (len(instances), *shapes[key]), specs[key].dtype) for key in specs
    }


def _from_inputs(inputs: Any, specs: Mapping[str, TensorSpec]) -> dict[str, numpy.ndarray]:
    """The columnar format's inputs: one array per input."""
    if not _is_object(inputs):
        if len(specs) > 1:
            raise RequestError(
                f"inputs: an object naming the inputs {_names(specs)} is required (the signature "
                "has several)"
            )
        key = next(iter(specs))
        flat, shape = _dense(inputs, specs[key].dtype, "inputs")
        return {key: _array(flat, shape, specs[key].dtype)}
    arrays = {}
    for key, spec in specs.items():
        if key not in inputs:
            raise RequestError(f"inputs.{key}: missing (the signature's inputs: {_names(specs)})")
        flat, shape = _dense(inputs[key], spec.dtype, f"inputs.{key}")
        arrays[key] = _array(flat, shape, spec.dtype)
    return arrays


def _dense(value: Any, dtype: str, field: str) -> tuple[list[Any], tuple[int, ...]]:
    """The leaves of the (nested) list `value`, converted to `dtype`, and its shape (the first
    element's at every level, which every other element must have too)."""
    if dtype not in SUPPORTED:
        raise RequestError(f"{field}: the input's type {dtype} has no JSON form in TF Serving")
    shape: list[int] = []
    probe = value
    while isinstance(probe, list):
        shape.append(len(probe))
        if not probe:
            break
        probe = probe[0]
    flat: list[Any] = []

    def walk(item: Any, level: int, where: str) -> None:
        if isinstance(item, list):
            if level >= len(shape):
                raise RequestError(f"{where}: a list where a value is expected (shape {shape})")
            if len(item) != shape[level]:
                raise RequestError(
                    f"{where}: a list of {len(item)} where {shape[level]} are expected (the "
                    f"first one's length at this depth; shape {shape})"
                )
            for position, element in enumerate(item):
                walk(element, level + 1, f"{where}[{position}]")
            return
        if level != len(shape):
            raise RequestError(f"{where}: a value where a list is expected (shape {shape})")
        flat.append(_leaf(item, dtype, where))

    walk(value, 0, field)
    return flat, tuple(shape)


def _leaf(value: Any, dtype: str, where: str) -> Any:
    """One JSON value as an element of a `dtype` tensor."""
    if dtype == STRING:
        if isinstance(value, str):
            return value.encode()
        if _is_base64(value):
            try:
                return base64.b64decode(value["b64"], validate=True)
            except (binascii.Error, ValueError):
                raise RequestError(f"{where}: its 'b64' is not base64") from None
        raise RequestError(f"{where}: {_json_type(value)} where a string is expected")
    if dtype == BOOL:
        if isinstance(value, bool):
            return value
        raise RequestError(f"{where}: {_json_type(value)} where true or false is expected")
    if isinstance(value, bool) or not isinstance(value, int | float):
        kind = "a number" if dtype in FLOATS else "a whole number"
        raise RequestError(f"{where}: {_json_type(value)} where {kind} ({dtype}) is expected")
    if dtype in FLOATS:
        digits, largest = _FLOAT_DIGITS[dtype], _FLOAT_MAX.get(dtype, math.inf)
        lossy = (
            abs(value) > (1 << digits) - 1
            if isinstance(value, int)
            else math.isfinite(value) and abs(value) > largest
        )
        if lossy:
            raise RequestError(f"{where}: {value} cannot be a {dtype} without loss of precision")
        return float(value)
    if not isinstance(value, int):
        raise RequestError(f"{where}: {value} where a whole number ({dtype}) is expected")
    info = numpy.iinfo(numpy.dtype(dtype))
    if not info.min <= value <= info.max:
        raise RequestError(f"{where}: {value} is out of {dtype}'s range [{info.min}, {info.max}]")
    return value


def _array(flat: Sequence[Any], shape: tuple[int, ...], dtype: str) -> numpy.ndarray:
    """`flat` as an array of `shape`: objects (bytes) for strings, float32 for bfloat16 (which
    numpy lacks; TensorFlow casts it)."""
    if dtype == STRING:
        array = numpy.empty(len(flat), dtype=object)
        array[:] = list(flat)
        return array.reshape(shape)
    kind = "float32" if dtype == "bfloat16" else dtype
    return numpy.array(flat, dtype=kind).reshape(shape)


def _check_shape(key: str, array: numpy.ndarray, spec: TensorSpec, row: bool) -> None:
    """RequestError unless `array` has the rank and the known dimensions of the input `spec`."""
    if spec.shape is None:
        return
    matches = len(array.shape) == len(spec.shape) and all(
        want is None or want == got for want, got in zip(spec.shape, array.shape, strict=True)
    )
    if matches:
        return
    taken = [-1 if size is None else size for size in spec.shape]
    if row:
        raise RequestError(
            f"instances: the input {key} of the instances, batched, has shape "
            f"{list(array.shape)} where the signature takes {taken} (-1: any size)"
        )
    raise RequestError(
        f"inputs.{key}: shape {list(array.shape)} where the signature takes {taken} (-1: any size)"
    )


def _json_values(name: str, array: numpy.ndarray) -> Any:
    """`array` as (nested) JSON values, as TF Serving writes a tensor named `name`."""
    if array.dtype == object or array.dtype.kind in "SU":
        as_bytes = name.endswith(BYTES_SUFFIX)
        return _map(array.tolist(), lambda item: _text(item, as_bytes))
    if array.dtype.kind == "b":
        return array.tolist()
    if array.dtype.kind in "iu":
        return array.tolist()
    if array.dtype.kind == "c":
        raise RequestError(f"outputs: {name} is complex ({array.dtype}), which has no JSON form")
    if array.dtype.kind != "f" or array.dtype.itemsize < 8:  # float16/32, bfloat16 (ml_dtypes)
        shortest = array.astype(numpy.float32).astype(str)  # the shortest repr that reads back
        return _map(shortest.tolist(), float)
    return array.tolist()


def _text(item: Any, as_bytes: bool) -> Any:
    """A string tensor's element: text, or `{"b64": ...}` for a `_bytes` output."""
    data = item if isinstance(item, bytes) else str(item).encode()
    if as_bytes:
        return {"b64": base64.b64encode(data).decode()}
    return data.decode("utf-8", errors="replace")


def _map(value: Any, convert: Any) -> Any:
    """`convert` applied to every leaf of the nested list `value` (or to `value` itself)."""
    if isinstance(value, list):
        return [_map(item, convert) for item in value]
    return convert(value)


def _is_base64(value: Any) -> bool:
    """Whether `value` is `{"b64": "<string>"}`, TF Serving's binary string."""
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("b64"), str)


def _is_object(value: Any) -> bool:
    """Whether `value` is a JSON object naming inputs (a `{"b64": ...}` string is not one)."""
    return isinstance(value, dict) and not _is_base64(value)


def _names(specs: Mapping[str, TensorSpec]) -> str:
    return ", ".join(sorted(specs))


def _json_type(value: Any) -> str:
    """How JSON names the type of `value`, with the value when short."""
    if value is None:
        return "null"
    kind = _JSON_TYPES.get(type(value), type(value).__name__)
    shown = "true" if value is True else "false" if value is False else repr(value)
    return f"{kind} {shown}" if len(shown) <= 40 else kind


_JSON_TYPES = {
    bool: "the boolean",
    int: "the number",
    float: "the number",
    str: "the string",
    list: "a list",
    dict: "an object",
}
