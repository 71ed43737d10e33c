"""Vertex's `schedules` REST routes, added to the local service's router.

    POST   /v1/projects/{p}/locations/{l}/schedules               create
    GET    /v1/projects/{p}/locations/{l}/schedules               list (filter, pageSize...)
    GET    /v1/projects/{p}/locations/{l}/schedules/{id}          get
    DELETE /v1/projects/{p}/locations/{l}/schedules/{id}          delete -> Operation
    POST   /v1/projects/{p}/locations/{l}/schedules/{id}:pause    pause -> {}
    POST   /v1/projects/{p}/locations/{l}/schedules/{id}:resume   resume {"catchUp": bool} -> {}

(and the same under /v1beta1/). Enums are names, or integers when the request asks for
`$alt=json;enum-encoding=int`.
"""

import json

from vtp.local.base import errors
from vtp.local.base.routing import Request, Router, collection, list_page, resource
from vtp.local.schedules.service import Schedules, schedule_json

_SCHEDULES = collection("schedules")
_SCHEDULE = resource("schedules", "schedule")


def add_routes(router: Router, schedules: Schedules) -> None:
    """Route the schedules methods to `schedules`."""
    router.add(
        "POST",
        _SCHEDULES,
        lambda r: schedule_json(schedules.create(r.params["parent"], r.body), r.enum_ints),
    )
    router.add("GET", _SCHEDULES, lambda r: _list(schedules, r))
    router.add("GET", _SCHEDULE, lambda r: schedule_json(schedules.get(_name(r)), r.enum_ints))
    router.add("DELETE", _SCHEDULE, lambda r: json.dumps(schedules.delete(_name(r))))
    router.add("POST", _SCHEDULE + ":pause", lambda r: _pause(schedules, r))
    router.add("POST", _SCHEDULE + ":resume", lambda r: _resume(schedules, r))


def _list(schedules: Schedules, request: Request) -> str:
    args = request.list_args()
    found, token = schedules.list(
        request.params["parent"], args.filter, args.page_size, args.page_token
    )
    page = [json.loads(schedule_json(s, request.enum_ints)) for s in found]
    return list_page("schedules", page, token)


def _pause(schedules: Schedules, request: Request) -> str:
    schedules.pause(_name(request))
    return "{}"


def _resume(schedules: Schedules, request: Request) -> str:
    catch_up = request.json().get("catchUp", False)
    if not isinstance(catch_up, bool):
        raise errors.invalid_argument(f"Invalid catchUp {catch_up!r}: expected true or false.")
    schedules.resume(_name(request), catch_up)
    return "{}"


def _name(request: Request) -> str:
    return f"{request.params['parent']}/schedules/{request.params['schedule']}"
