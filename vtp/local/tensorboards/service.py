"""Vertex TensorBoard on the local service: tensorboards, experiments, runs, time series, data.

As on Vertex:

- a tensorboard's ID is generated; experiments and runs are created under the ID the request
  gives (`tensorboardExperimentId`, `tensorboardRunId`, required), time series under one it
  gives or a generated one; a time series' display name is unique within its run;
- creating and updating a tensorboard, and every delete, answer a done Operation; a delete
  takes everything under the resource with it;
- one tensorboard per location is the default (`isDefault`): making another the default
  takes it from the one that had it;
- `blobStoragePathPrefix` is `vtp-tensorboards/<id>`, a folder of the service's Cloud Storage,
  where the SDK's uploader puts blobs;
- written data points are kept per time series and step (a step written again replaces its
  point); a write names time series by ID under the run, each of the value type it was created
  with; reads return up to `maxDataPoints` points (1000 scalars, 100 tensors, 10 blob
  sequences by default), evenly spread over the steps, the last always included.
"""

import json
from datetime import UTC, datetime
from typing import Any

from google.cloud.aiplatform_v1 import (
    Tensorboard,
    TensorboardTimeSeries,
    TimeSeriesData,
    TimeSeriesDataPoint,
    WriteTensorboardRunDataRequest,
)

from vtp.local.base import errors
from vtp.local.base.filters import compile_filter
from vtp.local.base.named_store import split
from vtp.local.base.names import location
from vtp.local.base.resources import (
    Page,
    chosen_id,
    matching_page,
    new_id,
    ordered,
    page,
    set_times,
    time_of,
)
from vtp.local.base.routing import mask_fields, parse_message, set_fields
from vtp.local.base.services import DatabaseService
from vtp.local.service import Service
from vtp.local.tensorboards.store import MESSAGES, SCHEMA, TensorboardStore

BLOB_BUCKET = "vtp-tensorboards"
ID_PARAMS = {
    "experiments": "tensorboardExperimentId",
    "runs": "tensorboardRunId",
    "timeSeries": "tensorboardTimeSeriesId",
}
UPDATABLE = {
    "tensorboards": ("display_name", "description", "labels", "is_default"),
    "experiments": ("display_name", "description", "labels"),
    "runs": ("display_name", "description", "labels"),
    "timeSeries": ("display_name", "description", "plugin_name", "plugin_data"),
}
ValueType = TensorboardTimeSeries.ValueType
DEFAULT_POINTS = {ValueType.SCALAR: 1000, ValueType.TENSOR: 100, ValueType.BLOB_SEQUENCE: 10}
MAX_POINTS = 10000
MAX_BATCH_READ = 20
DEFAULT_PAGE_SIZE = 50


class Tensorboards(DatabaseService[TensorboardStore]):
    """Tensorboards and what they hold."""

    def __init__(self, root: Service) -> None:
        super().__init__(root.config.state_dir / "tensorboards.db", SCHEMA, TensorboardStore)
        self.root = root

    # Resources.

    def create_tensorboard(self, parent: str, body: bytes, version: str) -> dict:
        """Create a tensorboard; the done Operation."""
        tensorboard = parse_message(Tensorboard, body)
        if not tensorboard.display_name:
            raise errors.invalid_argument("tensorboard.displayName is required.")
        tensorboard_id = new_id()
        tensorboard.name = f"{location(parent)}/tensorboards/{tensorboard_id}"
        tensorboard.blob_storage_path_prefix = f"{BLOB_BUCKET}/{tensorboard_id}"
        (self.root.config.storage_root / BLOB_BUCKET).mkdir(parents=True, exist_ok=True)
        _stamp(tensorboard, created=True)
        with self._lock:
            if tensorboard.is_default:
                self._take_default(tensorboard.name)
            self.store.resources.insert(tensorboard)
        return self.root.operations.finished(
            location(parent),
            "CreateTensorboardOperationMetadata",
            self.get("tensorboards", tensorboard.name),
            version,
        )

    def create(self, kind: str, parent: str, body: bytes, resource_id: str) -> Any:
        """Create an experiment, run or time series under `parent`."""
        parent_kind = {"experiments": "tensorboards", "runs": "experiments", "timeSeries": "runs"}
        owner = self.get(parent_kind[kind], parent)
        resource = parse_message(MESSAGES[kind], body)
        return self._insert(kind, owner.name, resource, resource_id)

    def batch_create(self, kind: str, experiment: str, body: dict) -> list[Any]:
        """`runs:batchCreate` (under an experiment) or `:batchCreate` of time series (each
        request's parent a run of the experiment); all are checked before any is created."""
        owner = self.get("experiments", experiment)
        requests = body.get("requests", [])
        if not isinstance(requests, list) or not all(isinstance(r, dict) for r in requests):
            raise errors.invalid_argument("requests: expected a list of create requests.")
        field = "tensorboardRun" if kind == "runs" else "tensorboardTimeSeries"
        planned = []
        for index, request in enumerate(requests):
            parent = request.get("parent") or owner.name
            if not isinstance(parent, str):
                raise errors.invalid_argument(f"requests[{index}].parent: expected a name.")
            under = self.get("experiments" if kind == "runs" else "runs", parent)
            if not under.name.startswith(owner.name + "/") and under.name != owner.name:
                raise errors.invalid_argument(
                    f"requests[{index}].parent: {parent} is not in {owner.name}."
                )
            resource = parse_message(MESSAGES[kind], json.dumps(request.get(field, {})).encode())
            resource_id = request.get(ID_PARAMS[kind], "")
            if not isinstance(resource_id, str):
                raise errors.invalid_argument(
                    f"requests[{index}].{ID_PARAMS[kind]}: expected text."
                )
            planned.append((under.name, resource, resource_id))
        return [self._insert(kind, *plan) for plan in planned]

    def get(self, kind: str, name: str) -> Any:
        """The resource of `kind` that `name` means; NOT_FOUND naming it."""
        found = self.store.resources.get(name, kind)
        if kind == "tensorboards":
            found.run_count = sum(
                self.store.resources.count(experiment.name, "runs")
                for experiment in self.store.resources.children(found.name, "experiments")
            )
        return found

    def listing(
        self, kind: str, parent: str, filter: str, order_by: str, size: int, token: str
    ) -> Page:
        """One page of the resources of `kind` under `parent` that match `filter`."""
        if kind == "tensorboards":
            under = location(parent)
        else:
            parent_kind = {
                "experiments": "tensorboards",
                "runs": "experiments",
                "timeSeries": "runs",
            }
            under = self.get(parent_kind[kind], parent).name
        found = list(self.store.resources.children(under, kind))
        if kind == "tensorboards":
            found = [self.get(kind, t.name) for t in found]
        return matching_page(found, filter, size, token, DEFAULT_PAGE_SIZE, order_by=order_by)

    def update(self, kind: str, name: str, body: bytes, mask: str) -> Any:
        """Apply the fields `mask` names (else those the body sets) from `body`."""
        change = parse_message(MESSAGES[kind], body)
        fields = mask_fields(mask) or set_fields(body, UPDATABLE[kind])
        if not fields:
            raise errors.invalid_argument("updateMask is required: name the fields to update.")
        for field in fields:
            if field not in UPDATABLE[kind]:
                raise errors.invalid_argument(
                    f"updateMask: {field!r} cannot be updated; updatable: "
                    f"{', '.join(UPDATABLE[kind])}."
                )
        with self._lock:
            found = self.get(kind, name)
            if "display_name" in fields and kind == "timeSeries":
                self._check_series_name(split(found.name)[0], change.display_name, found.name)
            for field in fields:
                setattr(found, field, getattr(change, field))
            if kind == "tensorboards" and "is_default" in fields and found.is_default:
                self._take_default(found.name)
            _stamp(found)
            self.store.resources.update(found)
        return self.get(kind, found.name)

    def update_tensorboard(self, name: str, body: bytes, mask: str, version: str) -> dict:
        """Update a tensorboard; the done Operation."""
        updated = self.update("tensorboards", name, body, mask)
        return self.root.operations.finished(
            location(updated.name), "UpdateTensorboardOperationMetadata", updated, version
        )

    def delete(self, kind: str, name: str) -> dict:
        """Delete a resource and everything under it (data points too); the done Operation."""
        found = self.get(kind, name)
        with self._lock:
            self.store.forget(self.store.resources.delete(found.name))
        return self.root.operations.deleted(location(found.name))

    # Data.

    def write_run_data(self, run: str, series_data: list[TimeSeriesData]) -> None:
        """Store points of time series of a run; all are checked before any is stored."""
        found = self.get("runs", run)
        checked = []
        for index, data in enumerate(series_data):
            where = f"timeSeriesData[{index}]"
            if not data.tensorboard_time_series_id:
                raise errors.invalid_argument(f"{where}.tensorboardTimeSeriesId is required.")
            series = self.get(
                "timeSeries", f"{found.name}/timeSeries/{data.tensorboard_time_series_id}"
            )
            if data.value_type not in (ValueType.VALUE_TYPE_UNSPECIFIED, series.value_type):
                raise errors.invalid_argument(
                    f"{where}.valueType {data.value_type.name} does not match time series "
                    f"{series.name}, which holds {series.value_type.name}."
                )
            for point in data.values:
                _check_point(point, series.value_type, where)
            checked.append((series, list(data.values)))
        now = datetime.now(UTC)
        with self._lock:
            for series, points in checked:
                for point in points:
                    if "wall_time" not in point:
                        set_times(point, now, "wall_time")
                self.store.write(series.name, points)
                self._note_written(series, points)

    def write_experiment_data(self, experiment: str, body: bytes) -> None:
        """`:write` on an experiment: each request writes one run of it."""
        owner = self.get("experiments", experiment)
        try:
            requests = json.loads(body or b"{}").get("writeRunDataRequests", [])
        except (ValueError, AttributeError):
            raise errors.invalid_argument("Invalid JSON payload received.") from None
        if not isinstance(requests, list):
            raise errors.invalid_argument("writeRunDataRequests: expected a list.")
        parsed = [
            parse_message(WriteTensorboardRunDataRequest, json.dumps(r).encode()) for r in requests
        ]
        for index, request in enumerate(parsed):
            if not self.get("runs", request.tensorboard_run).name.startswith(owner.name + "/"):
                raise errors.invalid_argument(
                    f"writeRunDataRequests[{index}].tensorboardRun is not in {owner.name}."
                )
        for request in parsed:
            self.write_run_data(request.tensorboard_run, list(request.time_series_data))

    def read(self, name: str, max_points: int = 0, filter: str = "") -> TimeSeriesData:
        """A time series' data: up to `max_points` points spread over its steps."""
        series = self.get("timeSeries", name)
        limit = max_points or DEFAULT_POINTS.get(series.value_type, 1000)
        if limit > MAX_POINTS:
            raise errors.invalid_argument(
                f"Invalid maxDataPoints {max_points}: at most {MAX_POINTS}."
            )
        predicate = compile_filter(filter)
        points = [
            p
            for p in self.store.points(series.name)
            if predicate(json.loads(TimeSeriesDataPoint.to_json(p, indent=None)))
        ]
        return TimeSeriesData(
            tensorboard_time_series_id=split(series.name)[2],
            value_type=series.value_type,
            values=_spread(points, limit),
        )

    def batch_read(self, tensorboard: str, names: list[str]) -> list[TimeSeriesData]:
        """The data of up to 20 time series of one tensorboard."""
        board = self.get("tensorboards", tensorboard)
        if len(names) > MAX_BATCH_READ:
            raise errors.invalid_argument(
                f"timeSeries: at most {MAX_BATCH_READ} time series a batch read, got {len(names)}."
            )
        found = []
        for name in names:
            series = self.get("timeSeries", name)
            if not series.name.startswith(board.name + "/"):
                raise errors.invalid_argument(f"timeSeries: {name} is not in {board.name}.")
            found.append(self.read(series.name))
        return found

    def export(self, name: str, body: dict) -> tuple[list[TimeSeriesDataPoint], str]:
        """Every point of a time series, a page at a time (`pageSize` up to 10000)."""
        series = self.get("timeSeries", name)
        size = body.get("pageSize", 0)
        token = body.get("pageToken", "")
        filter, order_by = body.get("filter", ""), body.get("orderBy", "")
        for key, value in (("filter", filter), ("orderBy", order_by), ("pageToken", token)):
            if not isinstance(value, str):
                raise errors.invalid_argument(f"Invalid {key} {value!r}: expected text.")
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise errors.invalid_argument(f"Invalid pageSize {size!r}: expected an integer >= 0.")
        predicate = compile_filter(filter)
        points = (
            p
            for p in self.store.points(series.name)
            if predicate(json.loads(TimeSeriesDataPoint.to_json(p, indent=None)))
        )
        chosen = ordered(points, order_by, ("step", "wall_time"))
        return page(chosen, min(size or 1000, MAX_POINTS), token, 1000)

    def size(self, tensorboard: str) -> dict:
        """`:readSize`: the bytes of stored points."""
        board = self.get("tensorboards", tensorboard)
        total = 0
        for experiment in self.store.resources.children(board.name, "experiments"):
            for run in self.store.resources.children(experiment.name, "runs"):
                for series in self.store.resources.children(run.name, "timeSeries"):
                    total += sum(
                        len(TimeSeriesDataPoint.to_json(p, indent=None))
                        for p in self.store.points(series.name)
                    )
        return {"storageSizeByte": str(total)}

    # Helpers.

    def _insert(self, kind: str, parent: str, resource: Any, resource_id: str) -> Any:
        if not resource_id and kind != "timeSeries":
            raise errors.invalid_argument(f"{ID_PARAMS[kind]} is required.")
        resource.name = f"{parent}/{kind}/{chosen_id(ID_PARAMS[kind], resource_id)}"
        if kind == "timeSeries":
            if not resource.display_name:
                raise errors.invalid_argument("tensorboardTimeSeries.displayName is required.")
            if resource.value_type == ValueType.VALUE_TYPE_UNSPECIFIED:
                raise errors.invalid_argument(
                    "tensorboardTimeSeries.valueType is required: SCALAR, TENSOR or BLOB_SEQUENCE."
                )
            resource.metadata = TensorboardTimeSeries.Metadata()
        _stamp(resource, created=True)
        with self._lock:
            if kind == "timeSeries":
                self._check_series_name(parent, resource.display_name)
            self.store.resources.insert(resource)
        return self.get(kind, resource.name)

    def _check_series_name(self, run: str, display_name: str, own: str = "") -> None:
        for series in self.store.resources.children(run, "timeSeries"):
            if series.display_name == display_name and series.name != own:
                raise errors.already_exists(
                    f"TensorboardTimeSeries {series.name} in {run} has displayName "
                    f"{display_name!r} already."
                )

    def _take_default(self, name: str) -> None:
        for other in self.store.resources.children(location(name), "tensorboards"):
            if other.is_default and other.name != name:
                other.is_default = False
                _stamp(other)
                self.store.resources.update(other)

    def _note_written(self, series: Any, points: list[TimeSeriesDataPoint]) -> None:
        if not points:
            return
        current = self.store.resources.find(series.name, "timeSeries") or series
        metadata = current.metadata
        last = max(points, key=lambda p: p.step)
        if last.step >= metadata.max_step:
            metadata.max_step = last.step
        latest = max(time_of(p, "wall_time") for p in points)
        if "max_wall_time" not in metadata or latest > time_of(metadata, "max_wall_time"):
            set_times(metadata, latest, "max_wall_time")
        if current.value_type == ValueType.BLOB_SEQUENCE:
            longest = max(len(p.blobs.values) for p in points)
            metadata.max_blob_sequence_length = max(metadata.max_blob_sequence_length, longest)
        current.metadata = metadata
        self.store.resources.update(current)


def _check_point(point: TimeSeriesDataPoint, value_type: Any, where: str) -> None:
    wanted = {
        ValueType.SCALAR: "scalar",
        ValueType.TENSOR: "tensor",
        ValueType.BLOB_SEQUENCE: "blobs",
    }.get(value_type)
    if wanted and wanted not in point:
        raise errors.invalid_argument(
            f"{where}.values: every point of a {value_type.name} time series has a {wanted}."
        )
    if point.step < 0:
        raise errors.invalid_argument(f"{where}.values: step {point.step} is negative.")


def _spread(points: list[TimeSeriesDataPoint], limit: int) -> list[TimeSeriesDataPoint]:
    """At most `limit` of `points`, evenly spaced, the last always kept."""
    if len(points) <= limit:
        return points
    if limit == 1:
        return points[-1:]
    last = len(points) - 1
    chosen = sorted({round(i * last / (limit - 1)) for i in range(limit)})
    return [points[i] for i in chosen]


def _stamp(resource: Any, created: bool = False) -> None:
    now = datetime.now(UTC)
    set_times(resource, now, *(["create_time"] if created else []), "update_time")
    resource.etag = new_id()
