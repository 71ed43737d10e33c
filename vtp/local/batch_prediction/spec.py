"""What a BatchPredictionJob asks for, checked, and Vertex's layout of its input and output (pure,
apart from listing and reading the input files under the storage root).

- Input: `inputConfig.instancesFormat` "jsonl" from `gcsSource.uris` (wildcards as Cloud
  Storage's: `*` and `?`), one instance per line, as the model's serving container takes it.
- Output: `outputConfig.predictionsFormat` "jsonl" into `gcsDestination.outputUriPrefix`, in a
  new folder `prediction-<model display name>-<create time as YYYY_MM_DDThh_mm_ss_sssZ>`:
  `predictions_00001.jsonl` with `{"instance", "prediction"}` a line, and `errors_00001.jsonl`
  with `{"instance", "error": {"code", "message"}}` a line when some instances failed.

Other formats, BigQuery, instanceConfig and explanations are refused at create, naming what the
local service does (UNIMPLEMENTED); malformed requests are INVALID_ARGUMENT naming the field.
"""

import fnmatch
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from google.cloud import aiplatform_v1

from vtp import storage
from vtp.engine import tree_walk
from vtp.http_limits import MAX_BODY_BYTES
from vtp.local.base import buckets, errors, stored_files

BatchPredictionJob = aiplatform_v1.BatchPredictionJob
FORMATS = ("jsonl",)
DEFAULT_BATCH_SIZE = 64
MAX_INPUT_FILE_BYTES = 64 << 30
"""The largest input file a job reads (line by line: the bound is on what its size claims)."""
MAX_LINE_BYTES = MAX_BODY_BYTES
"""The longest line (one instance) read: what one request to the model server may carry."""
MAX_BATCH_SIZE = 10_000
PREDICTIONS_FILE = "predictions_00001.jsonl"
ERRORS_FILE = "errors_00001.jsonl"


def check_job(job: BatchPredictionJob) -> None:
    """INVALID_ARGUMENT (naming the field) or UNIMPLEMENTED unless the job can run here."""
    if not job.display_name:
        raise errors.invalid_argument("batchPredictionJob.displayName is required.")
    if bool(job.model) == ("unmanaged_container_model" in job):
        raise errors.invalid_argument(
            "batchPredictionJob: exactly one of model and unmanagedContainerModel is required."
        )
    _check_input(job.input_config)
    _check_output(job.output_config)
    unsupported = [
        ("instance_config", "instanceConfig"),
        ("explanation_spec", "explanationSpec"),
    ]
    for field, rest in unsupported:
        if field in job and _has_values(getattr(job, field)):
            raise _unimplemented(f"batchPredictionJob.{rest}")
    if job.generate_explanation:
        raise _unimplemented("batchPredictionJob.generateExplanation")
    size = job.manual_batch_tuning_parameters.batch_size
    if not 0 <= size <= MAX_BATCH_SIZE:
        raise errors.invalid_argument(
            f"manualBatchTuningParameters.batchSize is {size}; it must be 1 to {MAX_BATCH_SIZE}."
        )


def _check_input(config: aiplatform_v1.BatchPredictionJob.InputConfig) -> None:
    if not config.instances_format:
        raise errors.invalid_argument("inputConfig.instancesFormat is required.")
    if config.instances_format not in FORMATS:
        raise _unimplemented(f"inputConfig.instancesFormat {config.instances_format!r}")
    if config.bigquery_source.input_uri:
        raise _unimplemented("inputConfig.bigquerySource")
    uris = list(config.gcs_source.uris)
    if not uris:
        raise errors.invalid_argument("inputConfig.gcsSource.uris is required.")
    for uri in uris:
        if not storage.is_gcs_uri(uri):
            raise errors.invalid_argument(
                f"inputConfig.gcsSource.uris: {uri!r} is not a Cloud Storage URI (gs://...)."
            )


def _check_output(config: aiplatform_v1.BatchPredictionJob.OutputConfig) -> None:
    if not config.predictions_format:
        raise errors.invalid_argument("outputConfig.predictionsFormat is required.")
    if config.predictions_format not in FORMATS:
        raise _unimplemented(f"outputConfig.predictionsFormat {config.predictions_format!r}")
    if config.bigquery_destination.output_uri:
        raise _unimplemented("outputConfig.bigqueryDestination")
    prefix = config.gcs_destination.output_uri_prefix
    if not prefix:
        raise errors.invalid_argument("outputConfig.gcsDestination.outputUriPrefix is required.")
    if not storage.is_gcs_uri(prefix):
        raise errors.invalid_argument(
            f"outputConfig.gcsDestination.outputUriPrefix {prefix!r} is not a Cloud Storage URI."
        )


def _has_values(message: Any) -> bool:
    return bool(type(message).pb(message).ByteSize())


def _unimplemented(what: str) -> errors.ApiError:
    return errors.ApiError(
        errors.UNIMPLEMENTED,
        f"{what} is not supported by the local Vertex service; its batch prediction reads "
        "JSON Lines from Cloud Storage (gcsSource) and writes JSON Lines to Cloud Storage "
        "(gcsDestination).",
    )


def batch_size(job: BatchPredictionJob) -> int:
    """Instances sent to the model server per request."""
    return job.manual_batch_tuning_parameters.batch_size or DEFAULT_BATCH_SIZE


def output_directory(prefix: str, model_display_name: str, created: datetime) -> str:
    """`<prefix>/prediction-<model display name>-<created, as Vertex writes it>`."""
    stamp = created.strftime("%Y_%m_%dT%H_%M_%S_") + f"{created.microsecond // 1000:03d}Z"
    return f"{prefix.rstrip('/')}/prediction-{model_display_name}-{stamp}"


def input_files(uris: list[str], root: Path) -> list[Path]:
    """The files `uris` name under the storage root (wildcards expanded, sorted); ValueError
    naming a URI that matches nothing."""
    found: list[Path] = []
    for uri in uris:
        if not any(c in uri for c in "*?["):
            path = storage.path_under(root, uri)
            if not path.is_file():
                raise ValueError(f"the input file {uri} does not exist")
            found.append(path)
            continue
        bucket, pattern = storage.split_gcs_uri(uri)
        names = sorted(_matching(root, bucket, pattern, uri))
        # each match again through path_under: a link planted in the root may lead out of it
        matches = [storage.path_under(root, f"gs://{bucket}/{name}") for name in names]
        matches = [path for path in matches if path.is_file()]
        if not matches:
            raise ValueError(f"no input file matches {uri}")
        found += matches
    return found


def _matching(root: Path, bucket: str, pattern: str, uri: str) -> Iterator[str]:
    """Names of the files in `bucket` that wildcard `pattern` matches: the walk starts at the
    folder of the pattern's literal start and is `buckets.object_files`' (iterative, no deeper
    than an object name can go), so a tree a replica left there thousands of folders deep is
    no RecursionError; ValueError naming the limit past `buckets.MAX_WALKED` entries."""
    wildcard = min((i for i in map(pattern.find, "*?[") if i >= 0), default=len(pattern))
    start = pattern[:wildcard].rpartition("/")[0]
    bucket_dir = storage.path_under(root, f"gs://{bucket}/")
    storage.path_under(root, f"gs://{bucket}/{start}")  # a link out of the root: ValueError
    try:
        for name, _ in buckets.object_files(bucket_dir, start):
            if fnmatch.fnmatchcase(name, pattern):
                yield name
    except tree_walk.TooManyEntries:
        raise ValueError(
            f"matching {uri} would walk more than {buckets.MAX_WALKED} files and folders, the "
            "most one wildcard walks in the local storage root; name a longer prefix"
        ) from None


def instances(root: Path, path: Path) -> Iterator[tuple[Any, str]]:
    """(instance, "") for each line of a JSON Lines file in the storage root; (the line, why)
    for a malformed one or one over MAX_LINE_BYTES. StoredFileError when the file is not a
    regular file inside the root of at most MAX_INPUT_FILE_BYTES."""
    what = f"the input file {path.name}"
    with stored_files.opened(root, path, MAX_INPUT_FILE_BYTES, what) as lines:
        while raw := lines.readline(MAX_LINE_BYTES + 1):
            if len(raw) > MAX_LINE_BYTES:
                _skip_rest_of_line(lines, raw)
                start = raw[:200].decode("utf-8", errors="replace")
                yield start, f"the line is over {MAX_LINE_BYTES} bytes"
                continue
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue
            try:
                yield json.loads(line), ""
            except (ValueError, RecursionError) as exc:
                yield line.rstrip("\n"), f"the line is not JSON: {exc}"


def _skip_rest_of_line(lines: BinaryIO, read: bytes) -> None:
    """Read past the end of an over-long line, a chunk at a time."""
    while read and not read.endswith(b"\n"):
        read = lines.readline(1 << 20)


def prediction_line(instance: Any, prediction: Any) -> str:
    """A line of predictions_00001.jsonl."""
    return json.dumps({"instance": instance, "prediction": prediction}) + "\n"


def error_line(instance: Any, code: int, message: str) -> str:
    """A line of errors_00001.jsonl: the instance and a google.rpc.Status of code and message."""
    return json.dumps({"instance": instance, "error": {"code": code, "message": message}}) + "\n"
