"""Where the seconds of a local pipeline run go, phase by phase, from what the service recorded.

A run that starts a CustomJob (the train pipeline's) passes, for that job, through:

    service start            the command's start -> the pipeline job's creation
    task start               pipeline job created -> the job's task started (earlier tasks too)
    job create               task started -> CustomJob created
    replica environment      job created -> its first replica starts (queue, PENDING; the
                             service's `[vtp local] starting ...` line)
    interpreter and imports  that line -> `trainer: waiting for N processes ...` (its own
                             environment and /gcs, milliseconds; Python; PyTorch and the task)
    rendezvous               waiting -> `trainer: joined ...` (the processes met)
    first step               joined -> `trainer: training ...` (model, data, checkpoint read)
    training                 first step -> the replica's last line
    job end seen             last line -> the job's end time (processes exited and reaped)
    task end                 job ended -> its task ended (the task saw it and wrote outputs)
    next task                task ended -> the next task started

Every figure is a difference of two timestamps the service gave: the pipeline job's and its
tasks' create/start/end times, the CustomJob's, and the Cloud Logging timestamps of the
replicas' log lines, which the service stamps as each line arrives. `JobLines.first_line` is
what a user waits for: from the job's creation to its replicas' first line of their own (the
trainer prints one before its imports). Used by `bench/pipeline_overhead.py`;
`tests/vtp/run/test_trace.py` checks that every phase is reported.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google.oauth2.credentials import Credentials

PHASES = (
    "service start",
    "task start",
    "job create",
    "replica environment",
    "interpreter and imports",
    "rendezvous",
    "first step",
    "training",
    "job end seen",
    "task end",
    "next task",
)
SERVICE_NOTE = "[vtp local] "
"""How the service's own lines in a replica's log begin (`runtime/replicas.py`)."""
STARTED = "starting "
"""The service's note as a replica starts: `[vtp local] starting workerpool0-0: COMMAND`."""
WAITING, JOINED, TRAINING = "trainer: waiting for ", "trainer: joined ", "trainer: training "


@dataclass(frozen=True)
class JobLines:
    """The moments (epoch seconds) of one CustomJob's milestones in its replicas' logs."""

    created: float
    ended: float
    started: float
    """Its first replica started (the service's note)."""
    first_line: float
    """The first line any replica printed itself."""
    waiting: float
    """The main process has imported everything and waits for the others."""
    joined: float
    training: float
    last_line: float


def _seconds(value: Any) -> float:
    """A proto-plus time field (a datetime at run time; the SDK's hints say Timestamp)."""
    return cast(datetime, value).timestamp()


def _stamp(entry: dict[str, Any]) -> float:
    return datetime.fromisoformat(entry["timestamp"].replace("Z", "+00:00")).timestamp()


def job_lines(job: aiplatform_v1.CustomJob, entries: Sequence[dict[str, Any]]) -> JobLines:
    """The milestones of `job` from its log `entries` (Cloud Logging form, any order); a
    milestone that never came is NaN."""
    ordered = sorted(entries, key=lambda e: (e["timestamp"], e["insertId"]))
    nan = float("nan")

    def first(test: Any) -> float:
        return next((_stamp(e) for e in ordered if test(e.get("textPayload", ""))), nan)

    own = [e for e in ordered if not e.get("textPayload", "").startswith(SERVICE_NOTE)]
    return JobLines(
        created=_seconds(job.create_time),
        ended=_seconds(job.end_time),
        started=first(lambda t: t.startswith(SERVICE_NOTE + STARTED)),
        first_line=_stamp(own[0]) if own else nan,
        waiting=first(lambda t: t.startswith(WAITING)),
        joined=first(lambda t: t.startswith(JOINED)),
        training=first(lambda t: t.startswith(TRAINING)),
        last_line=_stamp(own[-1]) if own else nan,
    )


def phases(
    command_started: float,
    pipeline_job: aiplatform_v1.PipelineJob,
    job: aiplatform_v1.CustomJob,
    lines: JobLines,
) -> dict[str, float]:
    """Each phase of PHASES in seconds (rounded to ms) for the run `pipeline_job`, whose command
    started at `command_started` (epoch seconds), and its CustomJob `job`."""
    tasks = [t for t in pipeline_job.job_detail.task_details if t.execution.schema_title != _DAG]
    tasks = [t for t in tasks if "start_time" in t and t.task_name]
    created = lines.created
    owner = max((t for t in tasks if _seconds(t.start_time) <= created), key=_start)
    later = [t for t in tasks if _seconds(t.start_time) >= _seconds(owner.end_time)]
    following = min(later, key=_start) if later else None
    task_started, task_ended = _seconds(owner.start_time), _seconds(owner.end_time)
    moments = [
        command_started,
        _seconds(pipeline_job.create_time),
        task_started,
        created,
        lines.started,
        lines.waiting,
        lines.joined,
        lines.training,
        lines.last_line,
        lines.ended,
        task_ended,
        _seconds(following.start_time) if following else float("nan"),
    ]
    return {
        name: round(end - start, 3)
        for name, start, end in zip(PHASES, moments[:-1], moments[1:], strict=True)
    }


_DAG = "system.DAGExecution"


def _start(task: aiplatform_v1.PipelineTaskDetail) -> float:
    return _seconds(task.start_time)


class ServiceReader:
    """Reads a local service's CustomJobs and their replica log entries over REST."""

    def __init__(self, url: str, token: str, project: str = "local") -> None:
        self.url, self.token, self.project = url, token, project
        self.jobs = aiplatform_v1.JobServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=url),
            credentials=Credentials(token),
        )

    def run_phases(self, command_started: float) -> dict[str, float]:
        """The phases of the service's one pipeline run and the first CustomJob it started,
        the run's command having started at `command_started` (epoch seconds)."""
        pipelines = aiplatform_v1.PipelineServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=self.url),
            credentials=Credentials(self.token),
        )
        parent = f"projects/{self.project}/locations/us-central1"
        (listed,) = pipelines.list_pipeline_jobs(parent=parent)
        pipeline_job = pipelines.get_pipeline_job(name=listed.name)  # with its tasks' details
        job = self.custom_jobs()[0]
        return phases(command_started, pipeline_job, job, job_lines(job, self.entries(job)))

    def custom_jobs(self, location: str = "us-central1") -> list[aiplatform_v1.CustomJob]:
        """Every listed CustomJob, oldest first."""
        parent = f"projects/{self.project}/locations/{location}"
        return sorted(
            self.jobs.list_custom_jobs(parent=parent), key=lambda j: _seconds(j.create_time)
        )

    def entries(self, job: aiplatform_v1.CustomJob) -> list[dict[str, Any]]:
        """Every log entry of `job`'s replicas (Cloud Logging `entries:list`)."""
        import requests

        job_id = job.name.rsplit("/", 1)[-1]
        body: dict[str, Any] = {
            "resourceNames": [f"projects/{self.project}"],
            "filter": f'resource.type="ml_job" AND resource.labels.job_id="{job_id}"',
            "orderBy": "timestamp asc",
            "pageSize": 1000,
        }
        found: list[dict[str, Any]] = []
        headers = {"Authorization": f"Bearer {self.token}"}
        while True:
            answer = requests.post(
                f"{self.url}/v2/entries:list", json=body, headers=headers, timeout=60
            )
            answer.raise_for_status()
            page = answer.json()
            found += page.get("entries", [])
            if not page.get("nextPageToken"):
                return found
            body["pageToken"] = page["nextPageToken"]
