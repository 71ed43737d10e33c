"""Check a REST-form dict (parsed YAML or JSON) against an aiplatform_v1 message before parsing it.

`json_format.ParseDict` stops at the first problem with a message that names the protobuf type,
not where the user wrote it. This walker reports the path the user wrote (`studySpec.parameters[1]
.doubleValueSpec.minValue`), suggests the nearest field name for a typo, and lists the allowed
values of an enum. Only then is the dict parsed into the proto-plus type.

`Rules` say how strictly: STRICT (a job file: REST names only, nothing unknown), REQUEST (a
request body, as ParseDict reads one: proto names too), PIPELINE (a compiled pipeline,
`vtp.engine.spec_check`: the engine parses it with `ignore_unknown_fields`, so a field this kfp
does not know is skipped rather than refused, as a newer compiler may add fields; but a null is
refused, as the service's own readers of the spec take an object or a list where the proto has
one, and so is a field spelled with its proto name, `deployment_spec`, which ParseDict would
read while the service's readers, which read `deploymentSpec`, would not see it).
"""

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
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
_STRING_TYPES = {FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES}
_INT32, _INT64 = (-(2**31), 2**31 - 1), (-(2**63), 2**63 - 1)
_INT_RANGES = {
    **dict.fromkeys((FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32), _INT32),
    FieldDescriptor.TYPE_SFIXED32: _INT32,
    **dict.fromkeys((FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32), (0, 2**32 - 1)),
    **dict.fromkeys((FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64), _INT64),
    FieldDescriptor.TYPE_SFIXED64: _INT64,
    **dict.fromkeys((FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64), (0, 2**64 - 1)),
}
"""What each integer type holds: ParseDict refuses a value outside it."""
_FLOAT_MAX = 3.4028234663852886e38
_DURATION = re.compile(r"^-?\d+(\.\d{1,9})?s$")
# Well-known types any JSON value fits (google.protobuf.Value).
_OPAQUE = {"google.protobuf.Value"}
_MESSAGE_WORDS = {
    "google.protobuf.ListValue": "a list",
    "google.protobuf.Duration": "a duration string",
    "google.protobuf.Timestamp": "a timestamp string",
}
"""What the JSON form of a well-known type is, where it is not a mapping."""
_SHOWN = 80
"""The most characters of a value a message repeats (a request may send megabytes)."""


@dataclass(frozen=True)
class Rules:
    """How `check` reads a dict."""

    skip_unknown: bool = False
    """Skip a field the message lacks (else refuse it, suggesting the nearest)."""
    proto_names: bool = False
    """Take a field by its proto name (`pipeline_spec`) as well as its JSON name."""
    nulls: bool = True
    """Take a null field as unset (else refuse it, unless null is one of its values)."""


STRICT = Rules()
REQUEST = Rules(proto_names=True)
PIPELINE = Rules(skip_unknown=True, nulls=False)


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


def check(desc: descriptor.Descriptor, data: Any, path: str, *, rules: Rules = STRICT) -> None:
    """Raise SpecError at the first unknown field, wrong type, bad enum value or oneof clash."""
    if not isinstance(data, Mapping):
        raise SpecError(path, f"expected a mapping of {desc.name} fields, got {_kind(data)}")
    by_json = {f.json_name: f for f in desc.fields}
    if rules.proto_names:
        by_json.update({f.name: f for f in desc.fields})
    seen_oneofs: dict[str, str] = {}
    for key, value in data.items():
        field = by_json.get(key)
        if field is None:
            _unknown(desc, str(key), join(path, str(key)), rules)
            continue
        if field.containing_oneof is not None and value is not None:
            other = seen_oneofs.setdefault(field.containing_oneof.name, key)
            if other != key:
                raise SpecError(path, f"set only one of {other!r} and {key!r} (they are a oneof)")
        _check_field(field, value, join(path, key), rules)


def _unknown(desc: descriptor.Descriptor, key: str, path: str, rules: Rules) -> None:
    """Refuse a field `desc` lacks, unless the rules skip it and it is no proto name of one."""
    by_name = {f.name: f.json_name for f in desc.fields}
    if not rules.skip_unknown:
        raise SpecError(path, _unknown_field(key, desc))
    if key in by_name:
        raise SpecError(path, f"write it {by_name[key]!r}, as kfp's compiler does (camelCase)")


def _unknown_field(key: str, desc: descriptor.Descriptor) -> str:
    names = [f.json_name for f in desc.fields]
    snake = {f.name: f.json_name for f in desc.fields}
    if key in snake:
        return f"unknown field; did you mean {snake[key]!r}? (REST fields are camelCase)"
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"{desc.name} fields: {', '.join(names)}"
    return f"unknown field; {hint}"


def _check_field(field: FieldDescriptor, value: Any, path: str, rules: Rules) -> None:
    if value is None:
        if not rules.nulls and not _takes_null(field):
            raise SpecError(path, f"expected {_expected(field, whole=True)}, got null")
        return
    if _is_map(field):
        if not isinstance(value, Mapping):
            raise SpecError(path, f"expected a mapping, got {_kind(value)}")
        value_field = field.message_type.fields_by_name["value"]
        for key, item in value.items():
            _check_item(value_field, item, join(path, str(key)), rules)
    elif _is_repeated(field):
        if not isinstance(value, list):
            raise SpecError(path, f"expected a list, got {_kind(value)}")
        for index, item in enumerate(value):
            _check_item(field, item, join(path, index), rules)
    else:
        _check_single(field, value, path, rules)


def _check_item(field: FieldDescriptor, value: Any, path: str, rules: Rules) -> None:
    """One entry of a map or a list: a null one is refused in words unless null is a value of
    it (ParseDict refuses it too, in its own)."""
    if value is None and not _takes_null(field):
        raise SpecError(path, f"expected {_expected(field, whole=False)}, got null")
    _check_single(field, value, path, rules)


def _check_single(field: FieldDescriptor, value: Any, path: str, rules: Rules = STRICT) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        _check_message_value(field.message_type, value, path, rules)
    elif field.type == FieldDescriptor.TYPE_ENUM:
        _check_enum(field.enum_type, value, path)
    elif field.type == FieldDescriptor.TYPE_BOOL:
        if not isinstance(value, bool):
            raise SpecError(path, f"expected true or false, got {_shown(value)}")
    elif field.type in _INT_TYPES:
        if isinstance(value, bool) or not _is_integer(value):
            raise SpecError(path, f"expected an integer, got {_shown(value)}")
        low, high = _INT_RANGES[field.type]
        if not low <= int(value) <= high:
            raise SpecError(path, f"{_shown(value)} is out of range ({low} to {high})")
    elif field.type in _FLOAT_TYPES:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise SpecError(path, f"expected a number, got {_shown(value)}")
        if field.type == FieldDescriptor.TYPE_FLOAT and abs(float(value)) > _FLOAT_MAX:
            raise SpecError(path, f"{_shown(value)} is too large for a float")
    elif field.type in _STRING_TYPES and not isinstance(value, str):
        raise SpecError(path, f"expected a string, got {_shown(value)} (quote it in YAML)")


def _check_message_value(
    desc: descriptor.Descriptor, value: Any, path: str, rules: Rules = STRICT
) -> None:
    if desc.full_name in _OPAQUE:
        return
    if desc.full_name == "google.protobuf.Struct":
        if not isinstance(value, Mapping):
            raise SpecError(path, f"expected a mapping, got {_kind(value)}")
        return
    if desc.full_name == "google.protobuf.ListValue":
        if not isinstance(value, list):
            raise SpecError(path, f"expected a list, got {_kind(value)}")
        return
    if desc.full_name == "google.protobuf.Duration":
        if not (isinstance(value, str) and _DURATION.match(value)):
            raise SpecError(
                path, f"expected a duration in seconds like '3600s', got {_shown(value)}"
            )
        return
    if desc.full_name == "google.protobuf.Timestamp":
        if not isinstance(value, str):
            raise SpecError(path, f"expected an RFC 3339 timestamp string, got {_shown(value)}")
        return
    check(desc, value, path, rules=rules)


def _takes_null(field: FieldDescriptor) -> bool:
    """Whether null is a value of `field` (a google.protobuf.Value, or NullValue), not unset."""
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return field.message_type.full_name == "google.protobuf.Value"
    return field.type == FieldDescriptor.TYPE_ENUM and (
        field.enum_type.full_name == "google.protobuf.NullValue"
    )


def _expected(field: FieldDescriptor, whole: bool) -> str:
    """What a value of `field` is, in words (`whole`: the field, else one of its entries)."""
    if whole and _is_map(field):
        return "a mapping"
    if whole and _is_repeated(field):
        return "a list"
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _MESSAGE_WORDS.get(field.message_type.full_name, "a mapping")
    if field.type in _STRING_TYPES:
        return "a string"
    if field.type == FieldDescriptor.TYPE_BOOL:
        return "true or false"
    return "an enum value" if field.type == FieldDescriptor.TYPE_ENUM else "a number"


def _check_enum(enum: descriptor.EnumDescriptor, value: Any, path: str) -> None:
    names = [v.name for v in enum.values]
    if isinstance(value, int) and not isinstance(value, bool):
        if value in enum.values_by_number:
            return
    elif isinstance(value, str) and value in enum.values_by_name:
        return
    upper = str(value).upper().replace("-", "_")
    hint = f"; did you mean {upper!r}?" if upper in names else ""
    raise SpecError(path, f"{_shown(value)} is not one of {', '.join(names)}{hint}")


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
    return f"{type(value).__name__} {_shown(value)}"


def _shown(value: Any) -> str:
    """`value`'s repr, cut to _SHOWN characters: a message need not repeat a huge value."""
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}..."
