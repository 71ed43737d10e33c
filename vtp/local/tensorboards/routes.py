"""Vertex TensorBoard's REST routes (TensorboardService), added to the local service's router.

    POST   {location}/tensorboards                              create -> Operation
    GET    {location}/tensorboards[/{t}]                        list, get
    PATCH  {location}/tensorboards/{t}?updateMask=              update -> Operation
    DELETE {location}/tensorboards/{t}                          delete -> Operation
    GET    .../tensorboards/{t}:batchRead?timeSeries=...        read up to 20 time series
    GET    .../tensorboards/{t}:readSize, :readUsage
    POST   .../tensorboards/{t}/experiments?tensorboardExperimentId=      create
    POST   .../experiments/{e}/runs?tensorboardRunId=                     create
    POST   .../experiments/{e}/runs:batchCreate, .../experiments/{e}:batchCreate (time series)
    POST   .../runs/{r}/timeSeries?tensorboardTimeSeriesId=               create
    GET    (list, get), PATCH ?updateMask= (update), DELETE (-> Operation) of each of those
    POST   .../experiments/{e}:write, .../runs/{r}:write                  write data points
    GET    .../timeSeries/{s}:read?maxDataPoints=&filter=                 read data points
    POST   .../timeSeries/{s}:exportTensorboardTimeSeries                 every point, paged

({location} is /v1/projects/{p}/locations/{l}, and the same under /v1beta1/.)
"""

import json
from urllib.parse import unquote

from google.cloud.aiplatform_v1 import TimeSeriesData, WriteTensorboardRunDataRequest

from vtp.local.base.resources import rest_json
from vtp.local.base.routing import Request, Router, collection, list_page, parse_message
from vtp.local.tensorboards.service import ID_PARAMS, Tensorboards

BOARDS = collection("tensorboards")
BOARD = BOARDS + "/(?P<tensorboard>[^/:]+)"
EXPERIMENTS = BOARD + "/experiments"
EXPERIMENT = EXPERIMENTS + "/(?P<experiment>[^/:]+)"
RUNS = EXPERIMENT + "/runs"
RUN = RUNS + "/(?P<run>[^/:]+)"
SERIES_ALL = RUN + "/timeSeries"
SERIES = SERIES_ALL + "/(?P<series>[^/:]+)"
PATTERNS = {
    "tensorboards": (BOARDS, BOARD),
    "experiments": (EXPERIMENTS, EXPERIMENT),
    "runs": (RUNS, RUN),
    "timeSeries": (SERIES_ALL, SERIES),
}


def add_routes(router: Router, boards: Tensorboards) -> None:
    """Route the TensorboardService methods to `boards`."""
    for kind, (items, item) in PATTERNS.items():
        _add_kind(router, boards, kind, items, item)
    router.add("GET", BOARD + ":batchRead", lambda r: _batch_read(boards, r))
    router.add("GET", BOARD + ":readSize", lambda r: json.dumps(boards.size(_name(r))))
    router.add("GET", BOARD + ":readUsage", lambda r: _read_usage(boards, r))
    router.add("POST", RUNS + ":batchCreate", lambda r: _batch_create(boards, "runs", r))
    router.add(
        "POST", EXPERIMENT + ":batchCreate", lambda r: _batch_create(boards, "timeSeries", r)
    )
    router.add("POST", EXPERIMENT + ":write", lambda r: _write_experiment(boards, r))
    router.add("POST", RUN + ":write", lambda r: _write_run(boards, r))
    router.add("GET", SERIES + ":read", lambda r: _read(boards, r))
    router.add("POST", SERIES + ":exportTensorboardTimeSeries", lambda r: _export(boards, r))


def _add_kind(router: Router, boards: Tensorboards, kind: str, items: str, item: str) -> None:
    def create(request: Request) -> str:
        if kind == "tensorboards":
            version = request.params["version"]
            return json.dumps(boards.create_tensorboard(_parent(request), request.body, version))
        found = boards.create(kind, _parent(request), request.body, request.arg(ID_PARAMS[kind]))
        return rest_json(found, request.enum_ints)

    def listing(request: Request) -> str:
        args = request.list_args()
        found, token = boards.listing(
            kind, _parent(request), args.filter, args.order_by, args.page_size, args.page_token
        )
        key = "tensorboardTimeSeries" if kind == "timeSeries" else _list_key(kind)
        return list_page(key, [json.loads(rest_json(m, request.enum_ints)) for m in found], token)

    def update(request: Request) -> str:
        mask = request.arg("updateMask")
        if kind == "tensorboards":
            version = request.params["version"]
            return json.dumps(
                boards.update_tensorboard(_name(request), request.body, mask, version)
            )
        return rest_json(boards.update(kind, _name(request), request.body, mask), request.enum_ints)

    router.add("POST", items, create)
    router.add("GET", items, listing)
    router.add("GET", item, lambda r: rest_json(boards.get(kind, _name(r)), r.enum_ints))
    router.add("PATCH", item, update)
    router.add("DELETE", item, lambda r: json.dumps(boards.delete(kind, _name(r))))


def _list_key(kind: str) -> str:
    return {"tensorboards": "tensorboards", "experiments": "tensorboardExperiments"}.get(
        kind, "tensorboardRuns"
    )


def _batch_create(boards: Tensorboards, kind: str, request: Request) -> str:
    created = boards.batch_create(kind, _name(request).removesuffix("/runs"), request.json())
    key = "tensorboardRuns" if kind == "runs" else "tensorboardTimeSeries"
    return json.dumps({key: [json.loads(rest_json(c, request.enum_ints)) for c in created]})


def _write_run(boards: Tensorboards, request: Request) -> str:
    parsed = parse_message(WriteTensorboardRunDataRequest, request.body)
    boards.write_run_data(_name(request), list(parsed.time_series_data))
    return "{}"


def _write_experiment(boards: Tensorboards, request: Request) -> str:
    boards.write_experiment_data(_name(request), request.body)
    return "{}"


def _read(boards: Tensorboards, request: Request) -> str:
    data = boards.read(_name(request), request.integer("maxDataPoints"), request.arg("filter"))
    return json.dumps({"timeSeriesData": _data(data, request)})


def _batch_read(boards: Tensorboards, request: Request) -> str:
    names = [unquote(n) for n in request.query.get("timeSeries", [])]
    found = boards.batch_read(_name(request), names)
    return json.dumps({"timeSeriesData": [_data(d, request) for d in found]})


def _export(boards: Tensorboards, request: Request) -> str:
    points, token = boards.export(_name(request), request.json())
    items = [json.loads(rest_json(p, request.enum_ints)) for p in points]
    return list_page("timeSeriesDataPoints", items, token)


def _read_usage(boards: Tensorboards, request: Request) -> str:
    boards.get("tensorboards", _name(request))
    return "{}"


def _data(data: TimeSeriesData, request: Request) -> dict:
    return json.loads(rest_json(data, request.enum_ints))


def _name(request: Request) -> str:
    """The resource (or collection) name the path means, without `:verb` and the version."""
    return unquote(request.path.split("/", 2)[2].partition(":")[0])


def _parent(request: Request) -> str:
    """The parent of the collection the path means."""
    return _name(request).rpartition("/")[0]
