"""Managed datasets in the local service: datasets, their data items, import and export.

What the aiplatform SDK's `ImageDataset`, `TextDataset`, `VideoDataset`, `TabularDataset` and
`TimeSeriesDataset` call, as Vertex answers it:

- create and delete are long-running operations (done at once here); update takes
  `displayName`, `description` and `labels` under an `updateMask`;
- a tabular or time-series dataset only points at its source (`metadata.inputConfig`), as on
  Vertex; an image, text or video dataset holds data items, added by `import` from import files
  in Cloud Storage (local storage): JSON Lines (`imageGcsUri`, `textGcsUri`, `textContent`,
  `videoGcsUri`, with `dataItemResourceLabels` and annotations) or CSV (`[ml_use,]uri[,label]`).
  An item whose content is already in the dataset is not added twice. An import file missing
  from local storage fails the operation (NOT_FOUND, naming it), as on Vertex;
- `export` writes the items back as JSON Lines under `gcsDestination.outputUriPrefix`, all in one
  file, or (`exportUse: CUSTOM_CODE_TRAINING`) one file per split (fraction or filter split on
  `labels.aiplatform.googleapis.com/ml_use`) with the split's counts in `dataStats`.

Annotations are kept with their item and exported with it; there is no `annotations` resource.

A training pipeline's `inputDataConfig` naming a tabular or time-series dataset is checked by
`check_training_input` when the pipeline is created and exported by `export_for_training` when
its job starts (`tables.py`: the CSV source split into files, and the AIP_* data variables).
"""

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from google.cloud.aiplatform_v1 import (
    DataItem,
    Dataset,
    ExportDataConfig,
    ExportDataRequest,
    ImportDataRequest,
    InputDataConfig,
)
from google.protobuf import json_format, struct_pb2

from vtp import storage
from vtp.local.base import errors, stored_files
from vtp.local.base.resources import clear_output_only, matching_page, new_id, rest_json, set_times
from vtp.local.base.routing import parse_message, update_fields
from vtp.local.base.services import CollectionService
from vtp.local.base.store import Record, ResourceStore
from vtp.local.datasets import tables
from vtp.local.models.upload import LABEL_KEY, LABEL_VALUE
from vtp.local.service import Service

SCHEMA_PREFIX = "gs://google-cloud-aiplatform/schema/dataset/metadata/"
KINDS = {f"{SCHEMA_PREFIX}{kind}_1.0.0.yaml": kind for kind in ("image", "text", "video")}
SOURCE_ONLY = {
    f"{SCHEMA_PREFIX}{kind}_1.0.0.yaml": kind for kind in ("tabular", "time_series", "multimodal")
}
UPDATABLE = ("display_name", "description", "labels")
MAX_IMPORT_FILE_BYTES = 128 << 20
"""The largest import file read (a JSON Lines or CSV list of data items, held in memory whole):
about half a million items."""
ML_USE = "aiplatform.googleapis.com/ml_use"
SPLITS = ("training", "validation", "test")
_CONTENT_KEYS = ("imageGcsUri", "textGcsUri", "videoGcsUri", "textContent")
_ITEM_KEYS = (*_CONTENT_KEYS, "dataItemResourceLabels", "mimeType")
_MIME = {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif"}
_MIME |= {".bmp": "image/bmp", ".webp": "image/webp", ".txt": "text/plain", ".mp4": "video/mp4"}
_TYPE = "type.googleapis.com/google.cloud.aiplatform.v1."
_log = logging.getLogger(__name__)


class Datasets(CollectionService[Dataset, Record]):
    """Datasets and their data items (`datasets.db` in the state directory)."""

    collection, kind = "datasets", "Dataset"

    def __init__(self, root: Service) -> None:
        self.root = root
        path = root.config.state_dir / "datasets.db"
        self.store: ResourceStore = ResourceStore(path, "datasets", Dataset)
        self.items = ResourceStore(path, "data_items", DataItem)
        self._lock = threading.Lock()

    def start(self) -> None:
        """Nothing runs in the background."""

    def close(self) -> None:
        """Close the stores."""
        self.items.close()
        self.store.close()

    # -- datasets -----------------------------------------------------------------------------

    def create(self, parent: str, body: bytes) -> dict:
        """Check and store a dataset; the done Operation whose response is the dataset."""
        dataset = parse_message(Dataset, body)
        if not dataset.display_name.strip():
            raise errors.invalid_argument("dataset.displayName is required.")
        if not dataset.metadata_schema_uri:
            raise errors.invalid_argument(
                f"dataset.metadataSchemaUri is required: one of {', '.join(_schemas())}."
            )
        if dataset.metadata_schema_uri not in KINDS | SOURCE_ONLY:
            raise errors.invalid_argument(
                f"dataset.metadataSchemaUri: {dataset.metadata_schema_uri!r} is not a dataset "
                f"schema; use one of {', '.join(_schemas())}."
            )
        _check_labels(dict(dataset.labels), "dataset.labels")
        if dataset.metadata_schema_uri in SOURCE_ONLY:
            _normalize_source(dataset)
        if "-" in parent.split("/"):
            raise errors.invalid_argument(f"Invalid parent {parent!r}: name one location.")
        clear_output_only(
            dataset, ("data_item_count", "etag", "saved_queries", "metadata_artifact")
        )
        dataset.name = f"{parent}/datasets/{new_id()}"
        now = datetime.now(UTC)
        set_times(dataset, now, "create_time", "update_time")
        dataset.etag = new_id()
        with self._lock:
            self.store.insert(Record(dataset))
        return self._operation(
            dataset.name, "CreateDatasetOperationMetadata", response=("Dataset", _json(dataset))
        )

    def update(self, name: str, body: bytes, mask: str) -> Dataset:
        """Apply the fields `mask` names (displayName, description, labels) from `body`."""
        change = parse_message(Dataset, body)
        fields = update_fields(mask, UPDATABLE)
        if "display_name" in fields and not change.display_name.strip():
            raise errors.invalid_argument("dataset.displayName must not be empty.")
        _check_labels(dict(change.labels), "dataset.labels")
        with self._lock:
            record = self._record(name)
            for field in fields:
                setattr(record.resource, field, getattr(change, field))
            set_times(record.resource, datetime.now(UTC), "update_time")
            record.resource.etag = new_id()
            self.store.update(record)
        return record.resource

    def delete(self, name: str) -> dict:
        """Delete a dataset and its data items; the done Operation."""
        with self._lock:
            record = self._record(name)
            for item in self._items(record.resource.name):
                self.items.delete(item.id)
            self.store.delete(record.id)
        return self._operation(record.resource.name, "DeleteOperationMetadata")

    # -- data items ---------------------------------------------------------------------------

    def list_data_items(
        self, name: str, filter: str = "", page_size: int = 0, page_token: str = ""
    ) -> tuple[list[DataItem], str]:
        """One page of a dataset's data items, and the next page token."""
        record = self._record(name)
        found = (r.resource for r in self._items(record.resource.name))
        return matching_page(found, filter, page_size, page_token)

    def import_data(self, name: str, body: bytes) -> dict:
        """Add the data items the import files list; the done Operation (failed when a file is
        missing or malformed, nothing added then)."""
        request = parse_message(ImportDataRequest, body)
        if not request.import_configs:
            raise errors.invalid_argument("importConfigs is required: at least one.")
        for index, config in enumerate(request.import_configs):
            if not config.gcs_source.uris:
                raise errors.invalid_argument(f"importConfigs[{index}].gcsSource.uris is required.")
        with self._lock:
            record = self._record(name)
            dataset = record.resource
            if dataset.metadata_schema_uri not in KINDS:
                raise errors.failed_precondition(
                    f"{dataset.name} is a {SOURCE_ONLY[dataset.metadata_schema_uri]} dataset: it "
                    "reads its source directly (metadata.inputConfig) and takes no import."
                )
            try:
                lines = [
                    (line, dict(config.data_item_labels))
                    for config in request.import_configs
                    for uri in config.gcs_source.uris
                    for line in self._read_import_file(uri)
                ]
            except _ImportError as exc:
                return self._operation(
                    dataset.name, "ImportDataOperationMetadata", error=(exc.code, str(exc))
                )
            added = self._add_items(dataset, lines)
            dataset.data_item_count = len(self._items(dataset.name))
            set_times(dataset, datetime.now(UTC), "update_time")
            self.store.update(record)
        _log.info("dataset %s: %d data items imported", record.id, added)
        return self._operation(
            dataset.name, "ImportDataOperationMetadata", response=("ImportDataResponse", {})
        )

    def export_data(self, name: str, body: bytes) -> dict:
        """Write the dataset's items as JSON Lines under the destination; the done Operation."""
        request = parse_message(ExportDataRequest, body)
        config = request.export_config
        prefix = config.gcs_destination.output_uri_prefix.rstrip("/")
        if not prefix:
            raise errors.invalid_argument(
                "exportConfig.gcsDestination.outputUriPrefix is required."
            )
        try:
            root = storage.path_under(self.root.config.storage_root, prefix + "/x").parent
        except ValueError as exc:
            raise errors.invalid_argument(
                f"exportConfig.gcsDestination.outputUriPrefix: {exc}."
            ) from None
        self.root.bucket_for_writing(prefix, "exportConfig.gcsDestination.outputUriPrefix")
        record = self._record(name)
        dataset = record.resource
        items = self._items(dataset.name)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        folder_name = f"export-data-{_slug(dataset.display_name)}-{stamp}"
        folder = root / folder_name
        folder.mkdir(parents=True, exist_ok=True)
        uri = f"{prefix}/{folder_name}"
        response: dict = {}
        if config.export_use == config.ExportUse.CUSTOM_CODE_TRAINING:
            split = _splitter(config)
            groups: dict[str, list[Record]] = {s: [] for s in SPLITS}
            for item in items:
                if (which := split(item)) is not None:
                    groups[which].append(item)
            files = []
            for which in SPLITS:
                _write_lines(folder / f"{which}.jsonl", groups[which])
                files.append(f"{uri}/{which}.jsonl")
            stats = {}
            for which in SPLITS:
                stats[f"{which}DataItemsCount"] = str(len(groups[which]))
                annotated = sum(len(i.runtime.get("annotations", [])) for i in groups[which])
                stats[f"{which}AnnotationsCount"] = str(annotated)
            response = {"exportedFiles": files, "dataStats": stats}
        else:
            _write_lines(folder / "data-00001-of-00001.jsonl", items)
            response = {"exportedFiles": [f"{uri}/data-00001-of-00001.jsonl"]}
        return self._operation(
            dataset.name, "ExportDataOperationMetadata", response=("ExportDataResponse", response)
        )

    # -- training input -----------------------------------------------------------------------

    def check_training_input(self, parent: str, config: InputDataConfig) -> None:
        """Refuse, naming the field, an inputDataConfig the local service cannot export."""
        dataset = self._training_dataset(parent, config)
        if "bigquery_destination" in config or "gcs_destination" not in config:
            raise errors.invalid_argument(
                "inputDataConfig.gcsDestination.outputUriPrefix is required: the local service "
                "exports a dataset to Cloud Storage (local storage), not to BigQuery."
            )
        try:
            storage.path_under(self.root.config.storage_root, _destination(config) + "/x")
        except ValueError as exc:
            raise errors.invalid_argument(
                f"inputDataConfig.gcsDestination.outputUriPrefix: {exc}."
            ) from None
        self.root.bucket_for_writing(
            _destination(config), "inputDataConfig.gcsDestination.outputUriPrefix"
        )
        _source_uris(dataset)
        try:
            tables.check_split(config)
        except tables.TableError as exc:
            raise errors.invalid_argument(f"inputDataConfig.{exc}.") from None

    def export_for_training(self, parent: str, config: InputDataConfig) -> dict[str, str]:
        """Split the dataset's rows into files under the destination, as Vertex does for a
        training pipeline; the AIP_* data variables that name them."""
        self.check_training_input(parent, config)
        dataset = self._training_dataset(parent, config)
        dataset_id = dataset.name.rsplit("/", 1)[1]
        root = self.root.config.storage_root
        try:
            header, rows = tables.read_source(root, _source_uris(dataset))
            splits = tables.split_rows(header, rows, config, seed=dataset_id)
        except tables.TableError as exc:
            raise errors.failed_precondition(f"Dataset {dataset.name}: {exc}.") from None
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        folder_uri = f"{_destination(config)}/dataset-{dataset_id}-tables-{stamp}"
        tables.write_splits(storage.path_under(root, folder_uri + "/x").parent, header, splits)
        counts = ", ".join(f"{s} {len(splits[s])}" for s in tables.SPLITS)
        _log.info("dataset %s: %d rows to %s (%s)", dataset_id, len(rows), folder_uri, counts)
        return tables.data_environment(folder_uri)

    def _training_dataset(self, parent: str, config: InputDataConfig) -> Dataset:
        if not config.dataset_id:
            raise errors.invalid_argument("inputDataConfig.datasetId is required.")
        name = config.dataset_id
        if "/" not in name:
            name = f"{parent}/datasets/{name}"
        dataset = self._record(name).resource
        if dataset.metadata_schema_uri in KINDS:
            raise errors.failed_precondition(
                f"inputDataConfig.datasetId: {dataset.name} holds "
                f"{KINDS[dataset.metadata_schema_uri]} data items; the local service gives custom "
                "training tabular and time-series datasets (export this one with "
                "export_data_for_custom_training and read the files instead)."
            )
        return dataset

    # -- helpers ------------------------------------------------------------------------------

    def _items(self, dataset_name: str) -> list[Record]:
        prefix = f"{dataset_name}/dataItems/"
        return [r for r in self.items.all() if r.resource.name.startswith(prefix)]

    def _read_import_file(self, uri: str) -> list[dict]:
        try:
            path = storage.path_under(self.root.config.storage_root, uri)
        except ValueError as exc:
            raise _ImportError(errors.INVALID_ARGUMENT, f"gcsSource.uris: {uri}: {exc}.") from None
        root = self.root.config.storage_root
        try:
            text = stored_files.read_text(
                root, path, MAX_IMPORT_FILE_BYTES, f"gcsSource.uris: {uri}"
            )
        except stored_files.StoredFileError as exc:
            if exc.missing:
                raise _ImportError(
                    errors.NOT_FOUND,
                    f"Import file {uri} does not exist in local Cloud Storage ({path}); copy it "
                    "there first (gsutil cp, or the storage client).",
                ) from None
            raise _ImportError(errors.INVALID_ARGUMENT, f"{exc}.") from None
        reader = _jsonl_line if Path(path).suffix.lower() == ".jsonl" else _csv_line
        lines = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    lines.append(reader(line))
                except ValueError as exc:
                    raise _ImportError(errors.INVALID_ARGUMENT, f"{uri}:{number}: {exc}") from None
        return lines

    def _add_items(self, dataset: Dataset, lines: Iterable[tuple[dict, dict]]) -> int:
        seen = {r.runtime.get("content") for r in self._items(dataset.name)}
        added = 0
        now = datetime.now(UTC)
        for line, labels in lines:
            content = next(line[k] for k in _CONTENT_KEYS if k in line)
            if content in seen:
                continue
            seen.add(content)
            key = next(k for k in _CONTENT_KEYS if k in line)
            payload: dict = {key: content}
            if key != "textContent":
                suffix = Path(content).suffix.lower()
                payload["mimeType"] = line.get("mimeType") or _MIME.get(
                    suffix, "application/octet-stream"
                )
            item = DataItem(
                name=f"{dataset.name}/dataItems/{new_id()}",
                labels={**labels, **line.get("dataItemResourceLabels", {})},
                payload=payload,
                etag=new_id(),
            )
            set_times(item, now, "create_time", "update_time")
            annotations = [{k: v} for k, v in line.items() if k not in _ITEM_KEYS]
            self.items.insert(Record(item, {"content": content, "annotations": annotations}))
            added += 1
        return added

    def _operation(
        self,
        resource: str,
        metadata: str,
        response: tuple[str, dict] | None = None,
        error: tuple[int, str] | None = None,
    ) -> dict:
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        generic = {"createTime": now, "updateTime": now}
        operation: dict = {
            "name": f"{resource}/operations/{new_id()}",
            "metadata": {"@type": _TYPE + metadata, "genericMetadata": generic},
            "done": True,
        }
        if error:
            operation["error"] = {"code": error[0], "message": error[1]}
        elif response:
            operation["response"] = {"@type": _TYPE + response[0], **response[1]}
        else:
            operation["response"] = {"@type": "type.googleapis.com/google.protobuf.Empty"}
        return self.root.operations.put(operation)


class _ImportError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _jsonl_line(line: str) -> dict:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise ValueError(f"not JSON: {exc}") from None
    if not isinstance(value, dict) or not any(k in value for k in _CONTENT_KEYS):
        raise ValueError(f"expected an object with one of {', '.join(_CONTENT_KEYS)}")
    content = next(value[k] for k in _CONTENT_KEYS if k in value)
    labels = value.get("dataItemResourceLabels", {})
    if not isinstance(content, str) or not isinstance(labels, dict):
        raise ValueError("the content must be a string and dataItemResourceLabels an object")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise ValueError("dataItemResourceLabels must map strings to strings")
    return value


def _csv_line(line: str) -> dict:
    cells = [c.strip() for c in line.split(",")]
    labels = {}
    if cells[0].lower() in (*SPLITS, "unassigned") and len(cells) > 1:
        labels[ML_USE] = cells.pop(0).lower()
    uri = cells[0]
    if not storage.is_gcs_uri(uri):
        raise ValueError(f"expected [ml_use,]gs://uri[,label]; got {line!r}")
    kind = "videoGcsUri" if Path(uri).suffix.lower() in (".mp4", ".avi", ".mov") else "imageGcsUri"
    value: dict = {kind: uri, "dataItemResourceLabels": labels}
    if len(cells) > 1 and cells[1]:
        value["classificationAnnotation"] = {"displayName": cells[1]}
    return value


def _splitter(config: ExportDataConfig) -> Callable[[Record], str | None]:
    """Which split an item goes to under the export's split (default 80/10/10 by fraction)."""
    if "filter_split" in config:
        filters = config.filter_split
        wanted = [_label_filter(getattr(filters, f"{s}_filter"), s) for s in SPLITS]

        def by_filter(item: Record) -> str | None:
            labels = dict(item.resource.labels)
            return next((s for s, test in zip(SPLITS, wanted, strict=True) if test(labels)), None)

        return by_filter
    fractions = config.fraction_split
    cut = [fractions.training_fraction, fractions.validation_fraction, fractions.test_fraction]
    if not any(cut):
        cut = [0.8, 0.1, 0.1]
    if any(f < 0 for f in cut) or sum(cut) > 1 + 1e-9:
        raise errors.invalid_argument(
            "exportConfig.fractionSplit: fractions must be >= 0 and add up to at most 1."
        )

    def by_fraction(item: Record) -> str | None:
        digest = hashlib.sha256(item.resource.name.encode()).digest()
        point, edge = int.from_bytes(digest[:8]) / 2**64, 0.0
        for which, fraction in zip(SPLITS, cut, strict=True):
            edge += fraction
            if point < edge:
                return which
        return None

    return by_fraction


def _label_filter(text: str, split: str) -> Callable[[dict], bool]:
    """`labels.KEY=VALUE` (or `-` / empty: everything, nothing in other splits' rules)."""
    text = text.strip()
    if text in ("", "-"):
        return lambda _labels: text == "-"
    key, sep, value = text.partition("=")
    if not sep or not key.startswith("labels."):
        raise errors.invalid_argument(
            f"exportConfig.filterSplit.{split}Filter: {text!r}: the local service reads "
            "labels.KEY=VALUE filters (e.g. labels.aiplatform.googleapis.com/ml_use=training)."
        )
    key, value = key.removeprefix("labels.").strip(), value.strip().strip('"')
    return lambda labels: labels.get(key) == value


def _write_lines(path: Path, items: Iterable[Record]) -> None:
    lines = []
    for item in items:
        payload = dict(item.resource.payload)
        line = {k: v for k, v in payload.items() if k in _CONTENT_KEYS}
        line["dataItemResourceLabels"] = dict(item.resource.labels)
        for annotation in item.runtime.get("annotations", []):
            line.update(annotation)
        lines.append(json.dumps(line))
    path.write_text("".join(line + "\n" for line in lines))


def _check_labels(labels: dict[str, str], path: str) -> None:
    for key, value in labels.items():
        if not LABEL_KEY.fullmatch(key) or not LABEL_VALUE.fullmatch(value):
            raise errors.invalid_argument(
                f"{path}: {key!r}: {value!r} is invalid: keys start with a lowercase letter; "
                "keys and values have at most 63 of [a-z0-9_-]."
            )


def _schemas() -> list[str]:
    return sorted(KINDS | SOURCE_ONLY)


def _destination(config: InputDataConfig) -> str:
    return config.gcs_destination.output_uri_prefix.rstrip("/")


def _source_uris(dataset: Dataset) -> list[str]:
    """The CSV files a tabular dataset reads; FAILED_PRECONDITION naming BigQuery for a table."""
    metadata = _json(dataset).get("metadata")
    source = metadata.get("inputConfig") if isinstance(metadata, dict) else None
    source = source if isinstance(source, dict) else {}
    big_query = _field(source, "bigquerySource", "uri")
    if big_query:
        raise errors.failed_precondition(
            f"Dataset {dataset.name} reads the BigQuery table {big_query}, which the local "
            "service cannot read (it has no BigQuery); export the table as CSV to local Cloud "
            "Storage and create the dataset with gcs_source."
        )
    found = _field(source, "gcsSource", "uri")
    uris = [found] if isinstance(found, str) else found
    if not uris or not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
        raise errors.failed_precondition(
            f"Dataset {dataset.name} has no source (metadata.inputConfig.gcsSource.uri)."
        )
    return [str(u) for u in uris]


def _normalize_source(dataset: Dataset) -> None:
    """Store the source as Vertex's typed InputConfig holds it: `bigquerySource.uri` is one table
    (the SDK sends a list of one), `gcsSource.uri` a list."""
    metadata = _json(dataset).get("metadata")
    source = metadata.get("inputConfig") if isinstance(metadata, dict) else None
    if not isinstance(metadata, dict) or not isinstance(source, dict):
        return
    table = _field(source, "bigquerySource", "uri")
    if isinstance(table, list):
        if len(table) != 1 or not isinstance(table[0], str):
            raise errors.invalid_argument(
                "dataset.metadata.inputConfig.bigquerySource.uri: name one table (bq://...)."
            )
        source["bigquerySource"]["uri"] = table[0]
    files = _field(source, "gcsSource", "uri")
    if isinstance(files, str):
        source["gcsSource"]["uri"] = [files]
    dataset.metadata = json_format.ParseDict(metadata, struct_pb2.Value())


def _field(source: dict, kind: str, field: str) -> object:
    value = source.get(kind)
    return value.get(field) if isinstance(value, dict) else None


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in text)[:64] or "dataset"


def _json(message: Dataset) -> dict:
    return dict(json.loads(rest_json(message)))
