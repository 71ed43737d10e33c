"""Check a REST-form dict (parsed YAML or JSON) against an aiplatform_v1 message before parsing it.

`json_format.ParseDict` stops at the first problem with a message that names the protobuf type,
not where the user wrote it. This walker reports the path the user wrote (`studySpec.parameters[1]
.doubleValueSpec.minValue`), suggests the nearest field name for a typo, and lists the allowed
values of an enum. Only then is the dict parsed into the proto-plus type.
"""

import difflib
import re
from collections.abc import Mapping
from typing import Any, TypeVar

import proto
from google.protobuf import descriptor, json_format
from google.protobuf.descriptor import FieldDescriptor

M = TypeVar("M", bound=proto.Message)

_INT_TYPES = {
    FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_INT64,
    FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64,
    FieldDescriptor.TYPE_SINT32,
    FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_FIXED64,
    FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_SFIXED64,
}
_FLOAT_TYPES = {FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT}
_DURATION = re.compile(r"^-?\d+(\.\d{1,9})?s$")
# Well-known types whose JSON form is not an object of their fields.
_OPAQUE = {"google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue"}


class SpecError(ValueError):
    """A spec field is wrong; `path` is where the user wrote it, the message says how to fix it."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path = path


def join(path: str, key: str | int) -> str:
    """`a.b` + `c` -> `a.b.c`; `a.b` + 2 -> `a.b[2]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def parse(message_type: type[M], data: Any, path: str = "") -> M:
    """Check `data` field by field against `message_type`, then parse it; raise SpecError."""
    check(message_type.pb().DESCRIPTOR, data, path)
    try:
        return message_type.wrap(json_format.ParseDict(data, message_type.pb()()))
    except json_format.ParseError as exc:  # what the walker does not model (e.g. int ranges)
        raise SpecError(path, str(exc)) from None


def check(desc: descriptor.Descriptor, data: Any, path: str) -> None:
    """Raise SpecError at the first unknown field, wrong type, bad enum value or oneof clash."""
    if not isinstance(data, Mapping):
        raise SpecError(path, f"expected a mapping of {desc.name} fields, got {_kind(data)}")
    by_json = {f.json_name: f for f in desc.fields}
    seen_oneofs: dict[str, str] = {}
    for key, value in data.items():
        field = by_json.get(key)
        if field is None:
            raise SpecError(join(path, str(key)), _unknown_field(str(key), desc))
        if field.containing_oneof is not None and value is not None:
            other = seen_oneofs.setdefault(field.containing_oneof.name, key)
            if other != key:
                raise SpecError(path, f"set only one of {other!r} and {key!r} (they are a oneof)")
        _check_field(field, value, join(path, key))


def _unknown_field(key: str, desc: descriptor.Descriptor) -> str:
    names = [f.json_name for f in desc.fields]
    snake = {f.name: f.json_name for f in desc.fields}
    if key in snake:
        return f"unknown field; did you mean {snake[key]!r}? (REST fields are camelCase)"
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"{desc.name} fields: {', '.join(names)}"
    return f"unknown field; {hint}"


def _check_field(field: FieldDescriptor, value: Any, path: str) -> None:
    if value is None:
        return
    if _is_map(field):
        if not isinstance(value, Mapping):
            raise SpecError(path, f"expected a mapping, got {_kind(value)}")
        value_field = field.message_type.fields_by_name["value"]
        for key, item in value.items():
            _check_single(value_field, item, join(path, str(key)))
    elif _is_repeated(field):
        if not isinstance(value, list):
            raise SpecError(path, f"expected a list, got {_kind(value)}")
        for index, item in enumerate(value):
            _check_single(field, item, join(path, index))
    else:
        _check_single(field, value, path)


def _check_single(field: FieldDescriptor, value: Any, path: str) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        _check_message_value(field.message_type, value, path)
    elif field.type == FieldDescriptor.TYPE_ENUM:
        _check_enum(field.enum_type, value, path)
    elif field.type == FieldDescriptor.TYPE_BOOL:
        if not isinstance(value, bool):
            raise SpecError(path, f"expected true or false, got {value!r}")
    elif field.type in _INT_TYPES:
        if isinstance(value, bool) or not _is_integer(value):
            raise SpecError(path, f"expected an integer, got {value!r}")
    elif field.type in _FLOAT_TYPES:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SpecError(path, f"expected a number, got {value!r}")
    elif field.type == FieldDescriptor.TYPE_STRING and not isinstance(value, str):
        raise SpecError(path, f"expected a string, got {value!r} (quote it in YAML)")


def _check_message_value(desc: descriptor.Descriptor, value: Any, path: str) -> None:
    if desc.full_name in _OPAQUE:
        return
    if desc.full_name == "google.protobuf.Duration":
        if not (isinstance(value, str) and _DURATION.match(value)):
            raise SpecError(path, f"expected a duration in seconds like '3600s', got {value!r}")
        return
    if desc.full_name == "google.protobuf.Timestamp":
        if not isinstance(value, str):
            raise SpecError(path, f"expected an RFC 3339 timestamp string, got {value!r}")
        return
    check(desc, value, path)


def _check_enum(enum: descriptor.EnumDescriptor, value: Any, path: str) -> None:
    names = [v.name for v in enum.values]
    if isinstance(value, int) and not isinstance(value, bool):
        if value in enum.values_by_number:
            return
    elif isinstance(value, str) and value in enum.values_by_name:
        return
    upper = str(value).upper().replace("-", "_")
    hint = f"; did you mean {upper!r}?" if upper in names else ""
    raise SpecError(path, f"{value!r} is not one of {', '.join(names)}{hint}")


def _is_integer(value: Any) -> bool:
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return value.is_integer()
    return isinstance(value, str) and re.fullmatch(r"-?\d+", value) is not None


def _is_repeated(field: FieldDescriptor) -> bool:
    return field.is_repeated  # `label` is deprecated in protobuf 6


def _is_map(field: FieldDescriptor) -> bool:
    return (
        _is_repeated(field)
        and field.type == FieldDescriptor.TYPE_MESSAGE
        and field.message_type.GetOptions().map_entry
    )


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"
