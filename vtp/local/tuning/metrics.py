"""A trial's measurements, read from the JSON-lines file that `cloudml-hypertune` writes.

`hypertune.HyperTune.report_hyperparameter_tuning_metric(tag, value, global_step)` rewrites the
whole file (`$CLOUD_ML_HP_METRIC_FILE`) on every call with its last 100 reports, one JSON object
per line, every value a string:

    {"checkpoint_path": "", "global_step": "3", "timestamp": 1718000000.5, "trial": "2",
     "accuracy": "0.91"}

A reader can catch the file half-written, so a line that does not parse is skipped (the next read
sees it whole); `merge` keeps the measurements that have scrolled out of the last 100.
"""

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.cloud.aiplatform_v1 import Measurement as MeasurementProto
from google.cloud.aiplatform_v1 import StudySpec
from google.protobuf import duration_pb2

from vtp.local.base import stored_files

MAX_METRIC_FILE_BYTES = 16 << 20
"""The largest hypertune metrics file read (a line per report: hundreds of thousands)."""

_RESERVED = {"timestamp", "trial", "global_step", "checkpoint_path"}


@dataclass(frozen=True)
class Measurement:
    """The metrics a trial reported at one step."""

    step: int
    elapsed_seconds: float
    """Seconds from the trial's start to the report."""
    metrics: Mapping[str, float]

    def to_proto(self) -> MeasurementProto:
        """The aiplatform_v1 Measurement (`Trial.measurements[]`, `Trial.finalMeasurement`)."""
        elapsed = duration_pb2.Duration()
        elapsed.FromNanoseconds(round(self.elapsed_seconds * 1e9))
        return MeasurementProto(
            step_count=self.step,
            elapsed_duration=elapsed,
            metrics=[{"metric_id": k, "value": v} for k, v in self.metrics.items()],
        )

    @classmethod
    def from_proto(cls, proto: MeasurementProto) -> "Measurement":
        """The Measurement of an aiplatform_v1 Measurement."""
        elapsed = type(proto).pb(proto).elapsed_duration.ToNanoseconds() / 1e9
        metrics = {m.metric_id: m.value for m in proto.metrics}
        return cls(int(proto.step_count), elapsed, metrics)


def read_metric_file(
    path: str | Path, metric_ids: Sequence[str], start_time: float
) -> list[Measurement]:
    """The measurements of `metric_ids` in a hypertune file; [] when it does not exist yet, or
    is not a regular file of at most MAX_METRIC_FILE_BYTES (the trial's replica writes it)."""
    file = Path(path)
    try:
        text = stored_files.read_text(file.parent, file, MAX_METRIC_FILE_BYTES, str(file))
    except stored_files.StoredFileError:
        return []
    reports = [r for r in (_parse_line(line) for line in text.splitlines()) if r is not None]
    return group_reports(reports, metric_ids, start_time)


def _parse_line(line: str) -> dict[str, Any] | None:
    try:
        report = json.loads(line)
    except json.JSONDecodeError:
        return None  # caught mid-write
    return report if isinstance(report, dict) else None


def group_reports(
    reports: Iterable[Mapping[str, Any]], metric_ids: Sequence[str], start_time: float
) -> list[Measurement]:
    """One measurement per step: reports of different metrics at one step are merged.

    A report starts a new measurement when its step differs from the previous one or it repeats
    a metric already in the current one (a trainer that never passes global_step reports every
    value at step 0; each report is still its own measurement).
    """
    measurements: list[Measurement] = []
    step, elapsed = 0, 0.0  # set by the first report with values, before they are used
    metrics: dict[str, float] = {}
    for report in reports:
        values = _metric_values(report, metric_ids)
        if not values:
            continue
        report_step = _int(report.get("global_step"))
        if metrics and (report_step != step or values.keys() & metrics.keys()):
            measurements.append(Measurement(step, elapsed, metrics))
            metrics = {}
        step = report_step
        elapsed = max(0.0, _float(report.get("timestamp"), start_time) - start_time)
        metrics = {**metrics, **values}
    if metrics:
        measurements.append(Measurement(step, elapsed, metrics))
    return measurements


def _metric_values(report: Mapping[str, Any], metric_ids: Sequence[str]) -> dict[str, float]:
    values = {}
    for key, raw in report.items():
        if key in _RESERVED or key not in metric_ids:
            continue
        value = _float(raw, math.nan)
        if math.isfinite(value):
            values[key] = value
    return values


def merge(old: Sequence[Measurement], new: Sequence[Measurement]) -> list[Measurement]:
    """`old` plus the measurements of `new` it lacks, in (step, elapsed) order."""
    seen = {(m.step, m.elapsed_seconds) for m in old}
    merged = list(old) + [m for m in new if (m.step, m.elapsed_seconds) not in seen]
    return sorted(merged, key=lambda m: (m.step, m.elapsed_seconds))


def final_measurement(measurements: Sequence[Measurement], spec: StudySpec) -> Measurement | None:
    """The measurement that becomes the trial's final one under the study's selection type.

    BEST_MEASUREMENT picks the best value of the first metric; anything else (LAST_MEASUREMENT
    or unspecified) the last. Only measurements that carry every study metric qualify.
    """
    metric_ids = [m.metric_id for m in spec.metrics]
    complete = [m for m in measurements if all(k in m.metrics for k in metric_ids)]
    if not complete:
        return None
    if spec.measurement_selection_type != StudySpec.MeasurementSelectionType.BEST_MEASUREMENT:
        return complete[-1]
    objective = spec.metrics[0]
    sign = -1.0 if objective.goal == StudySpec.MetricSpec.GoalType.MINIMIZE else 1.0
    return max(complete, key=lambda m: sign * m.metrics[objective.metric_id])


def _int(raw: Any) -> int:
    try:
        return int(float(raw))
    except (TypeError, ValueError):
        return 0


def _float(raw: Any, default: float) -> float:
    try:
        return float(raw)
    except (TypeError, ValueError):
        return default
