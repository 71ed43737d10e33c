"""Resource names and JSON forms of the API's messages, as Vertex writes them."""

import base64
import json
import re
import secrets
from collections.abc import Callable, Collection, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

import proto

from vtp.local.base import errors
from vtp.local.base.filters import compile_filter

M = TypeVar("M", bound=proto.Message)
T = TypeVar("T")
Page = tuple[list[Any], str]
"""One page of a list method's resources, and the next page token ("" after the last)."""


def rest_json(message: proto.Message, enum_ints: bool = False) -> str:
    """A resource as the REST API returns it: camelCase, defaults left out, enums as names (or
    integers when the request asked for `$alt=json;enum-encoding=int`)."""
    return type(message).to_json(
        message,
        use_integers_for_enums=enum_ints,
        always_print_fields_with_no_presence=False,
        indent=None,
    )


ORDER_FIELDS = ("create_time", "update_time", "display_name")
"""What Vertex's resources may be listed by (`orderBy`), unless a collection says otherwise."""


def matching_page(
    resources: Iterable[M],
    filter: str,
    page_size: int,
    page_token: str,
    default_size: int = 100,
    *,
    order_by: str = "",
    allowed: tuple[str, ...] = ORDER_FIELDS,
    as_dict: Callable[[M], dict] | None = None,
    functions: Collection[str] = (),
) -> tuple[list[M], str]:
    """One page of the `resources` whose dict form matches the AIP-160 `filter`, in `order_by`'s
    order (`ordered`, over the fields `allowed`), and the next page token: what every list
    method answers. The dict form is the REST form unless `as_dict` adds to it (ML Metadata's
    `inContext`); `functions` are the filter's calls allowed."""
    predicate = compile_filter(filter, functions)
    form = as_dict or (lambda resource: json.loads(rest_json(resource)))
    chosen = ordered((r for r in resources if predicate(form(r))), order_by, allowed)
    return page(chosen, page_size, page_token, default_size)


def ordered(
    resources: Iterable[M], order_by: str, allowed: tuple[str, ...] = ORDER_FIELDS
) -> list[M]:
    """`resources` sorted by `orderBy` ("create_time desc, display_name"): by each field's value
    (a time as a time, a step as a number), stable, the first key first. A field not in
    `allowed`, or one the resources' message type has not (a metadata schema has no display
    name), is INVALID_ARGUMENT."""
    result = list(resources)
    kinds = {type(resource) for resource in result}
    keys = []
    for part in filter(None, (p.strip() for p in order_by.split(","))):
        field, _, direction = part.partition(" ")
        direction = direction.strip().lower()
        if field not in allowed or direction not in ("", "asc", "desc"):
            raise errors.invalid_argument(
                f"Invalid orderBy {order_by!r}: use {', '.join(allowed)}, each optionally "
                "followed by desc."
            )
        for kind in kinds:
            if field not in kind.meta.fields:
                raise errors.invalid_argument(
                    f"Invalid orderBy {order_by!r}: a {kind.__name__} has no {field}."
                )
        keys.append((field, direction == "desc"))
    for field, descending in reversed(keys):  # stable sorts, last key first
        result.sort(key=lambda resource: _sort_value(getattr(resource, field)), reverse=descending)
    return result


def _sort_value(value: object) -> tuple[bool, Any]:
    """A field's value as a sort key: unset (None) after every set value in ascending order,
    before them in descending order."""
    return (value is None, value)


def page(items: list, page_size: int, page_token: str, default_size: int) -> tuple[list, str]:
    """One page of `items` (at most 1000) and the token of the next page ("" at the end)."""
    start = _decode_token(page_token)
    size = min(page_size or default_size, 1000)
    more = start + size < len(items)
    return items[start : start + size], _encode_token(start + size) if more else ""


def done_operation(name: str, metadata_type: str) -> dict:
    """A finished long-running Operation with an Empty response, as Vertex returns for deletes."""
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    return {
        "name": name,
        "metadata": {
            "@type": f"type.googleapis.com/google.cloud.aiplatform.v1.{metadata_type}",
            "genericMetadata": {"createTime": now, "updateTime": now},
        },
        "done": True,
        "response": {"@type": "type.googleapis.com/google.protobuf.Empty"},
    }


def resource_operation(
    name: str, metadata_type: str, resource: proto.Message, version: str = "v1"
) -> dict:
    """A finished long-running Operation whose response is `resource` (a create's, an update's),
    typed for the API `version` the client called (its client unpacks by that type)."""
    operation = done_operation(name, metadata_type)
    api = f"type.googleapis.com/google.cloud.aiplatform.{version}"
    operation["metadata"]["@type"] = f"{api}.{metadata_type}"
    body = json.loads(rest_json(resource))
    operation["response"] = {"@type": f"{api}.{type(resource).__name__}", **body}
    return operation


def new_id() -> str:
    """A 19-digit resource ID, like Vertex's."""
    return str(secrets.randbelow(9 * 10**18) + 10**18)


RESOURCE_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,127}")
"""An ID a create request may choose (`contextId`, `tensorboardRunId`, ...)."""


def chosen_id(field: str, wanted: str) -> str:
    """The ID a create request's `field` chose (`wanted`), else a new one; INVALID_ARGUMENT
    where it is not 1 to 128 characters of [a-z0-9-] starting with a letter or digit."""
    if not wanted:
        return new_id()
    if not RESOURCE_ID.fullmatch(wanted):
        raise errors.invalid_argument(
            f"Invalid {field} {wanted!r}: use 1 to 128 characters of [a-z0-9-], starting with "
            "a letter or digit."
        )
    return wanted


def _encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def _decode_token(token: str) -> int:
    if not token:
        return 0
    try:
        kind, _, value = base64.urlsafe_b64decode(token.encode()).decode().partition(":")
        if kind == "offset" and value.isdigit():
            return int(value)
    except (ValueError, UnicodeDecodeError):
        pass
    raise errors.invalid_argument(f"Invalid pageToken {token!r}.")


def set_times(message: object, when: datetime, *fields: str) -> None:
    """Set the Timestamp `fields` of a proto-plus message to `when`.

    proto-plus takes (and hands back) datetimes for Timestamp fields, while aiplatform's generated
    hints give those fields protobuf's own Timestamp type; setting them by name states what
    really happens without a type error at every assignment.
    """
    for field in fields:
        setattr(message, field, when)


def time_of(message: object, field: str) -> datetime:
    """A Timestamp field of a proto-plus message as the datetime proto-plus hands out."""
    value = getattr(message, field)
    if not isinstance(value, datetime):
        raise TypeError(f"{field} is not set")
    return value


def clear_output_only(resource: object, fields: Iterable[str]) -> None:
    """Clear the output-only `fields` of a resource a client sent: Vertex ignores whatever a
    request sets in them (a name, a state, times) and fills them in itself."""
    for field in fields:
        delattr(resource, field)


def require_ended(resource: Any, ended: Collection[Any]) -> None:
    """Raise FAILED_PRECONDITION unless `resource` (a job or pipeline) is in a state of `ended`:
    Vertex deletes only what has ended."""
    if resource.state not in ended:
        raise errors.still_running(resource.name, resource.state.name)
