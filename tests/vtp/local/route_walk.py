"""Every route the local service has, each sent deep, huge and never-matching values.

The seeded fuzzer (`fuzz.py`) samples routes at random; this walks them all. The route table is
the service's own: `vtp.local.app.add_routes` registers every Vertex route on a `Router`, and
registering calls nothing on the services (a stand-in that answers every attribute takes their
place; no request reaches it). The Cloud Storage JSON API and the console's sign-in, which have
fronts of their own, are listed by hand.

For each route, `requests_for_route` gives:

- deep: a body nesting 100,000 levels (JSON routes) — a 400 naming the body;
- huge: a body with a 1 MiB string and a 200,000-item list, or 3,000-level filters and page
  sizes past any limit in the query (routes without a body);
- never: values that match nothing: IDs no resource has, a cron with no fire time
  (`0 0 30 2 *`), filters that select nothing, names in other projects.

None may answer 5xx (501, a method the service deliberately lacks, aside) or leave the client
waiting.
"""

import http.client
import json
import re
from collections.abc import Iterator
from urllib.parse import quote

from tests.vtp.local.fuzz import BODIES, BUCKET, OBJECT, PARENT, Sent
from vtp.local.app import add_routes
from vtp.local.base.routing import Router

NEVER = "never4242"
"""The ID put wherever a route's path takes one: no resource has it."""

DEEP = b'{"displayName": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
HUGE = json.dumps({"displayName": "x" * (1 << 20), "values": list(range(200_000))}).encode()
NEVER_BODY = {
    "displayName": NEVER,
    "name": f"projects/{NEVER}/locations/{NEVER}/things/{NEVER}",
    "cron": "0 0 30 2 *",
    "filter": f'display_name="{NEVER}"',
    "resourceNames": [f"projects/{NEVER}"],
}
NEVER_QUERY = "?filter=" + quote(NEVER_BODY["filter"]) + f"&pageSize=1000&pageToken={NEVER}"
HUGE_QUERY = "?filter=" + quote("(" * 3000 + "a=1" + ")" * 3000) + "&pageSize=" + "9" * 40
OTHER_FRONTS = (
    ("POST", "/storage/v1/b?project=local"),
    ("PATCH", f"/storage/v1/b/{BUCKET}"),
    ("PUT", f"/storage/v1/b/{BUCKET}/iam"),
    ("PATCH", f"/storage/v1/b/{BUCKET}/o/{OBJECT}"),
    ("POST", f"/storage/v1/b/{BUCKET}/o/{OBJECT}/compose"),
    ("POST", f"/storage/v1/b/{BUCKET}/o/{OBJECT}/copyTo/b/{BUCKET}/o/{NEVER}"),
    ("POST", f"/upload/storage/v1/b/{BUCKET}/o?uploadType=resumable"),
    ("POST", "/console/signin"),
)
"""JSON routes outside the router: Cloud Storage's JSON API and the console's sign-in."""


class _Unused:
    """Takes the place of every service while routes are only registered."""

    def __getattr__(self, name: str) -> "_Unused":
        return self

    def __call__(self, *args: object, **kwargs: object) -> "_Unused":
        return self


def router_routes() -> list[tuple[str, str]]:
    """(method, pattern) of every route of the service's router."""
    router = Router()
    add_routes(router, _Unused(), _Unused())  # type: ignore[arg-type]
    return router.routes()


def sample_path(pattern: str) -> str:
    """A path `pattern` matches, with `NEVER` for every ID."""
    path = re.sub(r"\(\?P<version>[^)]*\)", "v1", pattern)
    path = path.replace("(?P<parent>projects/[^/]+/locations/[^/]+)", PARENT)
    path = re.sub(r"\(\?P<\w+>\[\^/:\]\+\)", NEVER, path).replace("[^/:]+", NEVER)
    if not re.fullmatch(pattern, path):
        raise AssertionError(f"{path} does not match {pattern}: teach sample_path the pattern")
    return path


def json_routes() -> list[tuple[str, str]]:
    """(method, path) of every route that takes a JSON body, the router's and the others'."""
    routed = [(m, sample_path(p)) for m, p in router_routes() if m in ("POST", "PATCH", "PUT")]
    return routed + list(OTHER_FRONTS)


def requests_for_route(method: str, path: str, token: str) -> Iterator[tuple[str, Sent]]:
    """(kind, request) for one route: deep, huge and never-matching values."""
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if method not in ("POST", "PATCH", "PUT"):
        yield "huge", Sent(method, path + HUGE_QUERY, headers)
        yield "never", Sent(method, path + NEVER_QUERY, headers)
        return
    yield "deep", Sent(method, path, headers, DEEP)
    yield "huge", Sent(method, path, headers, HUGE)
    yield "never", Sent(method, path, headers, json.dumps(_never_body(path)).encode())


def _never_body(path: str) -> dict:
    """A valid body of the route's kind where the fuzzer has one, given never-matching values;
    otherwise `NEVER_BODY`."""
    kind = path.rsplit("/", 1)[-1]
    valid = BODIES.get(kind)
    if not isinstance(valid, dict):
        return NEVER_BODY
    return {**json.loads(json.dumps(valid)), **{k: v for k, v in NEVER_BODY.items() if k in valid}}


def every_request(token: str) -> Iterator[tuple[str, Sent]]:
    """Every route's requests: the router's (all methods) and the other fronts' JSON routes."""
    for method, pattern in router_routes():
        yield from requests_for_route(method, sample_path(pattern), token)
    for method, path in OTHER_FRONTS:
        yield from requests_for_route(method, path, token)


def send_one(address: tuple[str, int], sent: Sent, timeout: float) -> tuple[int, str]:
    """The status and body (text) of the answer to `sent`, on a connection of its own."""
    connection = http.client.HTTPConnection(*address, timeout=timeout)
    try:
        connection.request(sent.method, sent.path, body=sent.body or None, headers=sent.headers)
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()
