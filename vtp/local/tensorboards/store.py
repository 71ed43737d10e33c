"""SQLite state of Vertex TensorBoard (`<state dir>/tensorboards.db`).

Tensorboards, their experiments, runs and time series are rows of `base/named_store.py`'s table
`resources`, by full name; each time series' data points are rows of `points`, one per step (a
step written again replaces the point, as TensorBoard shows the last value written).
"""

from collections.abc import Iterable
from typing import Any

from google.cloud.aiplatform_v1 import (
    Tensorboard,
    TensorboardExperiment,
    TensorboardRun,
    TensorboardTimeSeries,
    TimeSeriesDataPoint,
)

from vtp.local.base.named_store import SCHEMA as RESOURCES_SCHEMA
from vtp.local.base.named_store import NamedStore
from vtp.local.base.sqlite import Database

SCHEMA = (
    RESOURCES_SCHEMA.format(table="resources")
    + """
CREATE TABLE IF NOT EXISTS points (
    series TEXT NOT NULL,
    step INTEGER NOT NULL,
    point TEXT NOT NULL,
    PRIMARY KEY (series, step)
);
"""
)

MESSAGES: dict[str, Any] = {
    "tensorboards": Tensorboard,
    "experiments": TensorboardExperiment,
    "runs": TensorboardRun,
    "timeSeries": TensorboardTimeSeries,
}
"""Each collection's message type."""


class TensorboardStore:
    """The resources and their data points."""

    def __init__(self, db: Database) -> None:
        self._db = db  # opened with SCHEMA; its owner closes it
        self.resources = NamedStore(db, "resources", MESSAGES)

    def write(self, series: str, points: Iterable[TimeSeriesDataPoint]) -> None:
        """Store data points of a time series (a step again replaces its point)."""
        for point in points:
            self._db.write(
                "INSERT OR REPLACE INTO points (series, step, point) VALUES (?, ?, ?)",
                (series, point.step, TimeSeriesDataPoint.to_json(point, indent=None)),
            )

    def points(self, series: str) -> list[TimeSeriesDataPoint]:
        """A time series' points by step."""
        rows = self._db.read("SELECT point FROM points WHERE series = ? ORDER BY step", (series,))
        return [TimeSeriesDataPoint.from_json(row[0]) for row in rows]

    def forget(self, names: Iterable[str]) -> None:
        """Remove the points of the named (deleted) time series."""
        for name in names:
            self._db.write("DELETE FROM points WHERE series = ?", (name,))
