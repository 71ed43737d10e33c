"""Routing for the REST front end, and the shapes every resource's routes share.

Each resource package (`custom_jobs`, `tuning`, `models`, `pipeline_jobs`, `schedules`) has a
`routes.py` that adds its methods to one `Router` with the patterns built here:

    collection("customJobs")            /v1/projects/{p}/locations/{l}/customJobs
    resource("customJobs", "job")       .../customJobs/{job}  (the ID as `request.params["job"]`)

Both match `/v1/` and `/v1beta1/`; `request.params["parent"]` is `projects/{p}/locations/{l}`.
List methods read `filter`, `orderBy`, `pageSize` and `pageToken` with `Request.list_args` and
answer with `list_page`; long-running operations are read through `operation_routes`.
"""

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import proto
from google.protobuf import json_format

from vtp.local.base import errors, nesting
from vtp.local.base.resources import rest_json

M = TypeVar("M", bound=proto.Message)

PARENT = r"/(?P<version>v1|v1beta1)/(?P<parent>projects/[^/]+/locations/[^/]+)"
"""A location, the parent of every resource (`-` stands for any project or location)."""

OPERATIONS_PARENT = PARENT.replace("v1|v1beta1", "v1|v1beta1|ui")
"""Where clients read operations: the GAPIC operations client asks under /ui/ first, as Vertex's
console does, and Vertex answers both."""


_LOCATION_API = re.compile(
    r"/(?:v1|v1beta1|ui)/projects/[^/]+/locations/[^/]+/(?P<kind>[^/:]+)(?P<rest>.*)"
)


def collection(kind: str) -> str:
    """The path pattern of a resource collection, e.g. `customJobs`, under a location."""
    return f"{PARENT}/{kind}"


def resource(kind: str, group: str) -> str:
    """The path pattern of one resource of `kind`; its ID is captured as `group`."""
    return f"{collection(kind)}/(?P<{group}>[^/:]+)"


@dataclass(frozen=True)
class ListArgs:
    """The standard list parameters (AIP-132, AIP-160), checked."""

    filter: str
    order_by: str
    page_size: int
    page_token: str


@dataclass
class Request:
    """One HTTP request as a route handler sees it."""

    method: str
    path: str
    params: dict[str, str]
    query: dict[str, list[str]]
    body: bytes = b""
    enum_ints: bool = field(init=False)

    def __post_init__(self) -> None:
        self.enum_ints = "enum-encoding=int" in ";".join(self.query.get("$alt", []))

    def arg(self, key: str, default: str = "") -> str:
        """The first value of query parameter `key`."""
        return self.query.get(key, [default])[0]

    def integer(self, key: str, default: int = 0) -> int:
        """Query parameter `key` as a non-negative integer; INVALID_ARGUMENT naming it."""
        return non_negative(key, self.arg(key, str(default)))

    def list_args(self) -> ListArgs:
        """filter, orderBy, pageSize and pageToken."""
        return ListArgs(
            self.arg("filter"), self.arg("orderBy"), self.integer("pageSize"), self.arg("pageToken")
        )

    def json(self) -> dict:
        """The body as a JSON object; raise INVALID_ARGUMENT when it is not one."""
        try:
            value = json.loads(self.body or b"{}")
        except (ValueError, RecursionError) as exc:
            raise errors.invalid_argument(f"Invalid JSON payload received. {exc}") from None
        if not isinstance(value, dict):
            raise errors.invalid_argument("Invalid JSON payload received: expected an object.")
        return value


def parse_message(message_type: type[M], body: bytes) -> M:
    """A proto-plus message (CustomJob, ...) from a JSON request body; unknown fields, wrong
    types, bad UTF-8 and runaway nesting are INVALID_ARGUMENT, as on Vertex."""
    try:
        return message_type.from_json(body or b"{}")
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        raise errors.invalid_argument(f"Invalid JSON payload received. {exc}") from None


def mask_fields(mask: str) -> list[str]:
    """The paths of an `updateMask` (`displayName,labels` or `display_name,labels`) as proto
    field names (`display_name`, `labels`)."""
    return [
        re.sub(r"(?<!^)(?=[A-Z])", "_", path.strip()).lower()
        for path in mask.split(",")
        if path.strip()
    ]


def set_fields(body: bytes, allowed: tuple[str, ...]) -> list[str]:
    """The fields of `allowed` a PATCH body sets, as proto field names: what an update without
    an `updateMask` changes."""
    try:
        value = json.loads(body or b"{}")
    except ValueError:
        return []
    if not isinstance(value, dict):
        return []
    fields = [re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower() for key in value]
    return [f for f in fields if f in allowed]


def update_fields(mask: str, updatable: Iterable[str]) -> list[str]:
    """The proto field names an update's `updateMask` names; INVALID_ARGUMENT when it names
    none, or one outside `updatable`."""
    fields, allowed = mask_fields(mask), tuple(updatable)
    if not fields:
        raise errors.invalid_argument("updateMask is required: name the fields to update.")
    for path in fields:
        if path not in allowed:
            raise errors.invalid_argument(
                f"updateMask: {path!r} cannot be updated; updatable: {', '.join(allowed)}."
            )
    return fields


def read_masked(item: dict, mask: str) -> dict:
    """`item` (a resource in REST JSON) with only the fields a list's `readMask` names
    (`name,displayName,pipelineSpec.pipelineInfo`, snake_case taken too), as Vertex's
    simple views return them; a path the item lacks is left out."""
    kept: dict = {}
    for path in mask.split(","):
        keys = [_camel(key.strip()) for key in path.split(".") if key.strip()]
        value: object = item
        for key in keys:
            value = value.get(key, _ABSENT) if isinstance(value, dict) else _ABSENT
        if not keys or value is _ABSENT:
            continue
        target = kept
        for key in keys[:-1]:
            target = target.setdefault(key, {})
        target[keys[-1]] = value
    return kept


_ABSENT = object()


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def non_negative(name: str, value: object) -> int:
    """`value` (text of ASCII digits, or an int) as an int >= 0; INVALID_ARGUMENT naming `name`."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise errors.invalid_argument(f"Invalid {name} {value!r}: expected an integer.")
    if isinstance(value, str):
        if not (value.isascii() and value.isdigit() and len(value) <= 18):
            raise errors.invalid_argument(f"Invalid {name} {value!r}: expected an integer.")
        value = int(value)
    if value < 0:
        raise errors.invalid_argument(f"Invalid {name} {value!r}: expected an integer >= 0.")
    return value


def list_page(key: str, items: list[dict], token: str) -> str:
    """A list response: `{key: items, "nextPageToken": token}`, empty parts left out."""
    body: dict = {key: items} if items else {}
    if token:
        body["nextPageToken"] = token
    return json.dumps(body)


Handler = Callable[[Request], str]


@dataclass
class _Route:
    method: str
    pattern: str
    handler: Handler
    kind: str | None
    """The collection every path it matches names right under a location (`_LOCATION_API`'s
    `kind`), when its pattern says so literally; None: any path may match it."""
    compiled: re.Pattern | None = None

    def fullmatch(self, path: str) -> re.Match | None:
        if self.compiled is None:
            self.compiled = re.compile(self.pattern)
        return self.compiled.fullmatch(path)


class Router:
    """Routes (method, path regex) to handlers that return a JSON string.

    A route's pattern is compiled when a request first needs it, and a request under a location
    tries only the routes of the collection it names (and those that could match any): compiling
    all 160-odd patterns up front took half of a service's start."""

    def __init__(self) -> None:
        self._routes: list[_Route] = []
        self.kinds: set[str] = set()
        """The resource collections served under a location (customJobs, models, ...)."""

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        """Route `method` requests whose path fully matches `pattern` to `handler`."""
        kind = None
        if pattern.startswith(PARENT + "/"):
            head, *cut = re.split(r"([/:(])", pattern[len(PARENT) + 1 :], maxsplit=1)
            self.kinds.add(head)
            if cut[:1] != ["("] and re.fullmatch(r"[A-Za-z0-9_-]+", head):
                kind = head  # followed by "/", ":" or the end: the path's segment is `head`
        self._routes.append(_Route(method, pattern, handler, kind))

    def routes(self) -> list[tuple[str, str]]:
        """(method, path pattern) of every route, in the order `dispatch` tries them."""
        return [(route.method, route.pattern) for route in self._routes]

    def dispatch(self, method: str, target: str, body: bytes) -> tuple[int, str]:
        """The HTTP status and JSON body for one request."""
        url = urlsplit(target)
        query = parse_qs(url.query, keep_blank_values=True)
        located = _LOCATION_API.match(url.path)
        kind = located["kind"] if located else None
        for route in self._routes:
            if route.kind is not None and route.kind != kind:
                continue  # a path this route's pattern cannot match
            match = route.fullmatch(url.path)
            if match and route.method == method:
                request = Request(method, url.path, match.groupdict(), query, body)
                try:
                    _check_nesting(body)
                    return 200, route.handler(request)
                except errors.ApiError as exc:
                    return exc.http_status, exc.to_json()
        error = self._unknown(method, url.path)
        return error.http_status, error.to_json()

    def _unknown(self, method: str, path: str) -> errors.ApiError:
        """UNIMPLEMENTED for a Vertex API this service lacks, NOT_FOUND for anything else."""
        match = _LOCATION_API.match(path)
        if not match or (match["kind"] in self.kinds and "/" not in match["rest"]):
            return errors.not_found(f"The requested URL {path} ({method}) was not found.")
        served = ", ".join(sorted(self.kinds))
        return errors.ApiError(
            errors.UNIMPLEMENTED,
            f"{method} {path} ({match['kind']}) is not supported by the local Vertex service; "
            f"it serves {served} (and operations).",
        )


def _check_nesting(body: bytes) -> None:
    """INVALID_ARGUMENT naming the body when it nests deeper than any route reads: the one
    check before every handler, whichever parser it uses."""
    if body and nesting.deeper_than(body):
        raise errors.invalid_argument(
            "Invalid JSON payload received: the request body nests arrays and objects deeper "
            f"than {nesting.MAX_DEPTH} levels."
        )


Lister = Callable[[str, str, int, str], tuple[list[Any], str]]
"""A service's list method: (parent, filter, page size, page token) -> (page, next token)."""


@dataclass(frozen=True)
class Collection:
    """One resource collection's routes: its path patterns, the resource name a request means,
    and the standard get, list and delete methods (AIP-131, -132, -135) over a service."""

    kind: str
    """The collection's name in paths, and the key of its list responses (`schedules`)."""

    group: str
    """The route parameter that captures a resource's ID (`schedule`)."""

    @property
    def path(self) -> str:
        """The collection's path pattern."""
        return collection(self.kind)

    @property
    def item(self) -> str:
        """One resource's path pattern."""
        return resource(self.kind, self.group)

    def name(self, request: Request) -> str:
        """The resource name the request's path means."""
        return f"{request.params['parent']}/{self.kind}/{request.params[self.group]}"

    def add_standard(
        self,
        router: "Router",
        get: Callable[[str], Any],
        list_page_of: Lister,
        delete: Callable[[str], dict],
    ) -> None:
        """Route get, list and delete to the service's functions; answers in REST JSON."""
        router.add("GET", self.item, lambda r: rest_json(get(self.name(r)), r.enum_ints))
        router.add("GET", self.path, lambda r: self._list(list_page_of, r))
        router.add("DELETE", self.item, lambda r: json.dumps(delete(self.name(r))))

    def add_create(self, router: "Router", create: Callable[[str, bytes], Any]) -> None:
        """Route POST on the collection to `create(parent, body)`; answers the new resource."""
        router.add(
            "POST", self.path, lambda r: rest_json(create(r.params["parent"], r.body), r.enum_ints)
        )

    def add_operations(self, router: "Router", get: Callable[[str], dict]) -> None:
        """Route the operations of this collection's resources (`{item}/operations/{op}`, as
        Vertex names a resource's create, delete or deploy) to `get(name)`."""
        operation_routes(router, f"{OPERATIONS_PARENT}/{self.kind}/[^/:]+", get)

    def add_action(self, router: "Router", verb: str, act: Callable[[str], object]) -> None:
        """Route `POST {item}:{verb}` to `act(name)`; answers `{}` (Vertex's Empty), as the
        cancel, pause and similar custom methods do (AIP-136)."""

        def handler(request: Request) -> str:
            act(self.name(request))
            return "{}"

        router.add("POST", f"{self.item}:{verb}", handler)

    def _list(self, list_page_of: Lister, request: Request) -> str:
        args = request.list_args()
        parent = request.params["parent"]
        found, token = list_page_of(parent, args.filter, args.page_size, args.page_token)
        items = [json.loads(rest_json(m, request.enum_ints)) for m in found]
        if mask := request.arg("readMask"):
            items = [read_masked(item, mask) for item in items]
        return list_page(self.kind, items, token)


def operation_routes(router: Router, under: str, get: Callable[[str], dict]) -> None:
    """Route GET `{under}/operations/{op}` and its `:wait` to `get(name)`.

    `under` is a pattern whose match, up to `/operations`, is the operation's parent resource
    (`OPERATIONS_PARENT` for a location, or a resource under it).
    """

    def handler(request: Request) -> str:
        parent = request.path.split("/", 2)[2].rsplit("/operations/", 1)[0]
        return json.dumps(get(f"{parent}/operations/{request.params['op']}"))

    pattern = f"{under}/operations/(?P<op>[^/:]+)"
    router.add("GET", pattern, handler)
    router.add("POST", pattern + ":wait", handler)
