"""Vertex's `schedules` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/schedules               create
    GET    /v1/projects/{p}/locations/{l}/schedules               list (filter, pageSize...)
    GET    /v1/projects/{p}/locations/{l}/schedules/{id}          get
    DELETE /v1/projects/{p}/locations/{l}/schedules/{id}          delete -> Operation
    POST   /v1/projects/{p}/locations/{l}/schedules/{id}:pause    pause -> {}
    POST   /v1/projects/{p}/locations/{l}/schedules/{id}:resume   resume {"catchUp": bool} -> {}
    PATCH  /v1/projects/{p}/locations/{l}/schedules/{id}?updateMask=cron,...  update -> Schedule

(and the same under /v1beta1/). Enums are names, or integers when the request asks for
`$alt=json;enum-encoding=int`.
"""

from vtp.local.base import errors
from vtp.local.base.resources import rest_json
from vtp.local.base.routing import Collection, Request, Router
from vtp.local.schedules.service import Schedules

SCHEDULES = Collection("schedules", "schedule")


def add_routes(router: Router, schedules: Schedules) -> None:
    """Route the schedules methods to `schedules`."""
    SCHEDULES.add_create(router, schedules.create)
    SCHEDULES.add_standard(router, schedules.get, schedules.list, schedules.delete)
    SCHEDULES.add_action(router, "pause", schedules.pause)
    router.add("POST", SCHEDULES.item + ":resume", lambda r: _resume(schedules, r))
    router.add("PATCH", SCHEDULES.item, lambda r: _update(schedules, r))


def _update(schedules: Schedules, request: Request) -> str:
    updated = schedules.update(SCHEDULES.name(request), request.body, request.arg("updateMask"))
    return rest_json(updated, request.enum_ints)


def _resume(schedules: Schedules, request: Request) -> str:
    catch_up = request.json().get("catchUp", False)
    if not isinstance(catch_up, bool):
        raise errors.invalid_argument(f"Invalid catchUp {catch_up!r}: expected true or false.")
    schedules.resume(SCHEDULES.name(request), catch_up)
    return "{}"
