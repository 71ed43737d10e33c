"""The router tries only the routes of the collection a path names, compiling each pattern when
first needed: every request reaches the route the first full match of all of them in order
would give, as before."""

import re
from urllib.parse import urlsplit

import pytest

from tests.vtp.local.route_walk import router_routes, sample_path
from vtp.local.base.routing import Router

ROUTES = router_routes()
METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE")


def first_full_match(method: str, target: str) -> int | None:
    """The route every pattern tried in order picks: the index of the first that matches."""
    path = urlsplit(target).path  # as the router reads it (no newline, no query)
    for index, (route_method, pattern) in enumerate(ROUTES):
        if route_method == method and re.fullmatch(pattern, path):
            return index
    return None


def paths() -> list[str]:
    """A path of every route, under each API version, plus with a suffix no route has."""
    found = set()
    for _, pattern in ROUTES:
        path = sample_path(pattern)
        found |= {path, path.replace("/v1/", "/v1beta1/", 1), path.replace("/v1/", "/ui/", 1)}
        found |= {path + ":nothing", path + "/nothing", path + "\n"}
    return sorted(found)


@pytest.fixture(scope="module")
def numbered() -> Router:
    """The service's routes, each answering its index."""
    router = Router()
    for index, (method, pattern) in enumerate(ROUTES):
        router.add(method, pattern, lambda _request, index=index: str(index))
    return router


def test_every_request_reaches_the_route_a_full_scan_would(numbered: Router) -> None:
    assert len(ROUTES) > 100
    differ = []
    for path in paths():
        for method in METHODS:
            status, body = numbered.dispatch(method, path, b"")
            got = int(body) if status == 200 else None
            if got != first_full_match(method, path):
                differ.append((method, path, got, first_full_match(method, path)))
    assert differ == []


def test_a_service_compiles_no_pattern_until_a_request_needs_one(numbered: Router) -> None:
    fresh = Router()
    for method, pattern in ROUTES:
        fresh.add(method, pattern, lambda _request: "{}")
    assert all(route.compiled is None for route in fresh._routes)
    fresh.dispatch("GET", "/v1/projects/p/locations/l/customJobs", b"")
    compiled = [route.pattern for route in fresh._routes if route.compiled is not None]
    assert compiled and len(compiled) < len(ROUTES) / 4
