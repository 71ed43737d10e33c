"""Follow a custom job: its state changes, and its replicas' log entries from Cloud Logging.

Vertex writes each replica's output to Cloud Logging (resource type `ml_job`, labelled with the
job id and task name); `gcloud ai custom-jobs stream-logs` polls `entries:list` for them and
we do the same, resuming after the last (timestamp, insertId) seen. The local service may serve
the same `entries:list` route; where a service does not (404), only state changes are shown.
"""

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from google.cloud import aiplatform_v1

CLOUD_LOGGING_URL = "https://logging.googleapis.com"

JobState = aiplatform_v1.JobState
TERMINAL_STATES = frozenset(
    {
        JobState.JOB_STATE_SUCCEEDED,
        JobState.JOB_STATE_FAILED,
        JobState.JOB_STATE_CANCELLED,
        JobState.JOB_STATE_EXPIRED,
        JobState.JOB_STATE_PARTIALLY_SUCCEEDED,
    }
)


class Session(Protocol):
    """What LogReader needs of a `requests.Session` (or google-auth's AuthorizedSession)."""

    def post(self, url: str, *, json: Any, timeout: float) -> Any: ...


class LogsUnavailable(Exception):
    """The service has no Cloud Logging `entries:list` route (the local service may not)."""


@dataclass
class LogReader:
    """Reads a job's new log entries on each call, in timestamp order, never one twice."""

    session: Session
    project: str
    job_id: str
    base_url: str = CLOUD_LOGGING_URL
    _timestamp: str = ""
    _insert_id: str = ""

    def read(self) -> list[dict[str, Any]]:
        """Entries written since the previous call (all pages)."""
        entries: list[dict[str, Any]] = []
        body = {
            "resourceNames": [f"projects/{self.project}"],
            "filter": self._filter(),
            "orderBy": "timestamp asc",
            "pageSize": 1000,
        }
        while True:
            page = self._post(body)
            entries += page.get("entries", [])
            if not page.get("nextPageToken"):
                break
            body["pageToken"] = page["nextPageToken"]
        if entries:
            self._timestamp = entries[-1].get("timestamp", self._timestamp)
            self._insert_id = entries[-1].get("insertId", "")
        return entries

    def _filter(self) -> str:
        terms = ['resource.type="ml_job"', f'resource.labels.job_id="{self.job_id}"']
        if self._timestamp:
            terms.append(
                f'((timestamp="{self._timestamp}" AND insertId>"{self._insert_id}") '
                f'OR timestamp>"{self._timestamp}")'
            )
        return " AND ".join(terms)

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        response = self.session.post(f"{self.base_url}/v2/entries:list", json=body, timeout=60)
        if response.status_code == 404:
            raise LogsUnavailable(f"{self.base_url} serves no Cloud Logging entries:list")
        response.raise_for_status()
        return response.json()


def format_entry(entry: dict[str, Any]) -> list[str]:
    """gcloud's stream-logs lines for one entry: `SEVERITY TIMESTAMP TASK MESSAGE`, one per line."""
    severity = entry.get("severity", "DEFAULT")
    task = entry.get("resource", {}).get("labels", {}).get("task_name") or "unknown_task"
    payload = entry.get("jsonPayload")
    message = payload.get("message", "") if payload else entry.get("textPayload", "")
    prefix = f"{severity}\t{entry.get('timestamp', '')}\t{task}\t"
    return [prefix + line for line in (message.splitlines() or [""])]


def follow(
    get_job: Callable[[], aiplatform_v1.CustomJob],
    read_logs: Callable[[], list[dict[str, Any]]],
    interval: float,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[aiplatform_v1.CustomJob | dict[str, Any]]:
    """Yield the job whenever its state changes and each new log entry, until the job ends."""
    state = None
    while True:
        job = get_job()
        yield from read_logs()
        if job.state != state:
            state = job.state
            yield job
        if job.state in TERMINAL_STATES:
            return
        sleep(interval)
