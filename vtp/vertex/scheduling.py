"""The requests of `vtp schedule create`: a Vertex Schedule, or a Cloud Scheduler HTTP job.

Both carry the PipelineJob that `vtp.vertex.pipeline_job` builds through the aiplatform SDK:

- Vertex schedules (`--via vertex`): `aiplatform.PipelineJobSchedule` assembles the Schedule's
  `createPipelineJobRequest` as the SDK does; the cron gets Vertex's `TZ=<zone>` prefix.
- Cloud Scheduler (`--via cloud-scheduler`): an HTTP job that POSTs the PipelineJob's REST JSON
  to `https://<regional Vertex AI host>/v1/projects/P/locations/R/pipelineJobs` with an OAuth
  token of the service account (scope cloud-platform). Every POST creates a new run with a
  server-generated ID; Cloud Scheduler does not retry by default, so a failed call is not
  repeated into duplicate runs.
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vtp.vertex import cron
from vtp.vertex.endpoint import api_endpoint
from vtp.vertex.pipeline_job import SubmitError, request_body

VERTEX, CLOUD_SCHEDULER = "vertex", "cloud-scheduler"
"""The two ways to schedule a pipeline (`--via`)."""
MAX_SCHEDULER_JOB_BYTES = 1_000_000 - 1_000
"""Cloud Scheduler's job size limit (1 MB, about 1 KB of it request overhead)."""
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_SCHEDULER_JOB_ID = re.compile(r"[a-zA-Z0-9_-]{1,500}")


@dataclass(frozen=True)
class Cadence:
    """When runs start: a five-field unix cron in an IANA time zone."""

    cron: str
    time_zone: str = "UTC"

    def __post_init__(self) -> None:
        try:
            cron.zone_info(self.time_zone)
        except cron.CronError as exc:
            raise SubmitError(f"--time-zone: {exc}") from None
        try:
            cron.check(self.cron, self.time_zone)
        except cron.CronError as exc:
            raise SubmitError(f"--cron: {exc}") from None

    @property
    def vertex_cron(self) -> str:
        """The cron as a Vertex Schedule takes it: `TZ=<zone> <cron>`."""
        return f"TZ={self.time_zone} {self.cron}"


@dataclass(frozen=True)
class Limits:
    """How a Vertex schedule bounds its runs (Cloud Scheduler jobs have none of these)."""

    max_concurrent_run_count: int = 1
    max_run_count: int = 0
    start_time: str = ""
    end_time: str = ""
    allow_queueing: bool = False

    def __post_init__(self) -> None:
        if self.max_concurrent_run_count < 1:
            raise SubmitError("--max-concurrent-run-count must be at least 1")
        if self.max_run_count < 0:
            raise SubmitError("--max-run-count must be positive (0: no limit)")
        start, end = (
            _timestamp(self.start_time, "--start-time"),
            _timestamp(self.end_time, "--end-time"),
        )
        if start and end and end <= start:
            raise SubmitError("--end-time must be after --start-time")


def check_name(via: str, name: str) -> None:
    """NAME as the scheduler of `via` accepts it: a display name, or a Cloud Scheduler job ID."""
    if via == CLOUD_SCHEDULER and not _SCHEDULER_JOB_ID.fullmatch(name):
        raise SubmitError(
            f"NAME: a Cloud Scheduler job ID has letters, digits, '-' and '_' only, got {name!r}"
        )
    if via == VERTEX and not 0 < len(name) <= 128:
        raise SubmitError("NAME: a schedule's display name has 1 to 128 characters")


def check_service_account(via: str, service_account: str) -> None:
    """Cloud Scheduler needs an account to get the OAuth token it calls Vertex AI with."""
    if via == CLOUD_SCHEDULER and not service_account:
        raise SubmitError(
            "--service-account is required with --via cloud-scheduler: Cloud Scheduler calls "
            "Vertex AI with that account's OAuth token"
        )


def vertex_schedule(job: Any, name: str, cadence: Cadence, limits: Limits | None = None) -> Any:
    """The `aiplatform_v1.Schedule` that `PipelineJobSchedule.create` sends for `job`."""
    from google.cloud import aiplatform

    limits = limits or Limits()
    check_name(VERTEX, name)
    sdk = aiplatform.PipelineJobSchedule(
        pipeline_job=job, display_name=name, credentials=job.credentials
    )
    schedule = sdk._gca_resource  # what PipelineJobSchedule._create fills in and sends
    schedule.cron = cadence.vertex_cron
    schedule.max_concurrent_run_count = limits.max_concurrent_run_count
    if limits.max_run_count:
        schedule.max_run_count = limits.max_run_count
    if limits.start_time:
        schedule.start_time = _timestamp(limits.start_time, "--start-time")
    if limits.end_time:
        schedule.end_time = _timestamp(limits.end_time, "--end-time")
    schedule.allow_queueing = limits.allow_queueing
    if job._gca_resource.service_account:
        pipeline_job = schedule.create_pipeline_job_request.pipeline_job
        pipeline_job.service_account = job._gca_resource.service_account
    return schedule


def pipeline_jobs_uri(project: str, region: str) -> str:
    """Where Cloud Scheduler POSTs: the pipelineJobs collection on the region's Vertex AI host."""
    return f"https://{api_endpoint(region)}/v1/projects/{project}/locations/{region}/pipelineJobs"


def cloud_scheduler_job(
    job: Any, name: str, cadence: Cadence, service_account: str, description: str = ""
) -> Any:
    """The `scheduler_v1.Job` that POSTs `job` (an SDK PipelineJob) on `cadence`."""
    from google.cloud import scheduler_v1

    check_name(CLOUD_SCHEDULER, name)
    check_service_account(CLOUD_SCHEDULER, service_account)
    body = request_body(job._gca_resource)
    target = scheduler_v1.HttpTarget(
        uri=pipeline_jobs_uri(job.project, job.location),
        http_method=scheduler_v1.HttpMethod.POST,
        headers={"Content-Type": "application/json"},
        body=json.dumps(body, separators=(",", ":")).encode(),
        oauth_token=scheduler_v1.OAuthToken(
            service_account_email=service_account, scope=CLOUD_PLATFORM_SCOPE
        ),
    )
    scheduled = scheduler_v1.Job(
        name=f"projects/{job.project}/locations/{job.location}/jobs/{name}",
        description=description,
        schedule=cadence.cron,
        time_zone=cadence.time_zone,
        http_target=target,
    )
    size = scheduler_v1.Job.pb(scheduled).ByteSize()
    if size > MAX_SCHEDULER_JOB_BYTES:
        raise SubmitError(
            f"PIPELINE: the Cloud Scheduler job would hold {size} bytes, over Cloud Scheduler's "
            "1 MB limit; use --via vertex"
        )
    return scheduled


def _timestamp(text: str, flag: str) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        raise SubmitError(
            f"{flag} must be an RFC 3339 timestamp with a zone, e.g. 2030-01-31T03:00:00Z, "
            f"got {text!r}"
        )
    return value
