"""Resource names, and the one lookup every resource type uses.

A name is `projects/{p}/locations/{l}/{collection}/{id}`. In a request, `-` may stand for the
project or the location (`projects/-/locations/-/customJobs/123`), as Vertex accepts for reads;
a stored name never holds `-`. A lookup that finds nothing is NOT_FOUND, naming the resource kind
as Vertex does ("CustomJob projects/... not found.").
"""

import re
from collections.abc import Callable
from typing import TypeVar

from vtp.local.base import errors

R = TypeVar("R")
ANY = "-"
"""Stands for any project or location in a requested name."""
LOCAL_PROJECT_NUMBER = "100000000001"
"""The number of the one local project, whatever its ID (buckets, project lookups and default
service accounts report it)."""

_NAME = re.compile(r"projects/(?P<p>[^/]+)/locations/(?P<l>[^/]+)/(?P<c>[^/]+)/(?P<id>[^/:@]+)")


def resource_id(name: str, collection: str) -> str | None:
    """The ID in `name` if it names a resource of `collection` (`@...` after the ID is allowed
    and dropped, as in `models/1@2`), else None."""
    match = _NAME.fullmatch(name.partition("@")[0])
    return match["id"] if match and match["c"] == collection else None


def location(name: str) -> str:
    """`projects/P/locations/L` of a resource name (or of a location's own name)."""
    return "/".join(name.split("/")[:4])


def name_matches(pattern: str, name: str) -> bool:
    """True when the stored `name` is what `pattern` names, `-` standing for any one segment
    (`projects/-/locations/us-central1/...`)."""
    wanted, actual = pattern.split("/"), name.split("/")
    return len(wanted) == len(actual) and all(
        w in (ANY, a) for w, a in zip(wanted, actual, strict=True)
    )


def find(
    name: str,
    collection: str,
    kind: str,
    get: Callable[[str], R | None],
    stored_name: Callable[[R], str],
) -> R:
    """The stored resource `name` means: `get(id)`, checked against its stored name's project and
    location; raise NOT_FOUND `"{kind} {name} not found."` otherwise (a malformed name too: no
    resource has it)."""
    found_id = resource_id(name, collection)
    found = get(found_id) if found_id else None
    if found is None or not name_matches(name.partition("@")[0], stored_name(found)):
        raise errors.not_found(f"{kind} {name} not found.")
    return found
