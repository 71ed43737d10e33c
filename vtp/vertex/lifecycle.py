"""The life cycle of a Vertex job started by a pipeline task: submit once, wait, cancel, report.

What GCPC's launchers do, with three differences that matter to pipeline authors:

- **Re-attach, never submit twice.** A retried task first looks for the job an earlier attempt
  started: in its `gcp_resources` output (as GCPC does, for a restarted pod) and, since a retried
  task on Vertex Pipelines runs in a fresh pod without that file, by the `vtp-task` label that
  ties a job to its pipeline run, task and inputs (`TaskJob`). A running job is followed; a
  succeeded one is reused; a failed or cancelled one is submitted again, which is what a retry
  is for.
- **Any endpoint.** The client comes from `vtp.vertex.client`, so the same code reaches
  Vertex (regional, multi-region or global hosts) or the local service (`VTP_LOCAL_ENDPOINT`).
- **Cancel that is checked.** SIGTERM (pipeline cancellation, or a task timeout) cancels the job
  and waits until Vertex reports it ended before the task exits (`vtp.vertex.cancel`).

`JobKind` adapts the JobServiceClient methods of one resource type (CustomJob,
HyperparameterTuningJob), so one loop serves both, and the launchers of both place and run
their job with `place` and `run_job`.
"""

import functools
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from google.api_core import retry
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp import storage
from vtp.vertex import gcp_resources as resources
from vtp.vertex.cancel import CancelOnSigterm
from vtp.vertex.client import job_client
from vtp.vertex.endpoint import FOLLOWED_ENV, LOCAL_ENDPOINT_ENV, api_endpoint, local_endpoint
from vtp.vertex.humanize import readable
from vtp.vertex.protodict import SpecError
from vtp.vertex.states import JOB_ENDED

State = aiplatform_v1.JobState
TRIAL_ENDED = frozenset({aiplatform_v1.Trial.State.SUCCEEDED, aiplatform_v1.Trial.State.INFEASIBLE})
"""Trial states after which a trial changes no more (failed trials are INFEASIBLE)."""
REUSABLE = frozenset(
    {
        State.JOB_STATE_QUEUED,
        State.JOB_STATE_PENDING,
        State.JOB_STATE_RUNNING,
        State.JOB_STATE_SUCCEEDED,
        State.JOB_STATE_UPDATING,
        State.JOB_STATE_PAUSED,
    }
)
LOCAL_MAX_POLL_SECONDS = 2.0
"""Polls of the local service cost nothing; backing off further would only add latency."""
WATCH_SECONDS = 10
TRANSIENT_SECONDS = 300
"""How long a job's status check rides out errors a blip causes before its task fails."""
"""How long one local long poll waits at most: it answers at once when the job's state changes
or one of its replicas logs a line (`logsAfter`), so this bounds only a quiet job's polls."""
NO_LINE_YET = "1970-01-01T00:00:00Z"
"""`logsAfter` before any replica line was copied: every line is news."""
TASK_LABEL = "vtp-task"
"""Label on every job a task starts: a hash of the pipeline run and task names."""

_log = logging.getLogger(__name__)


class JobFailed(RuntimeError):
    """The job ended FAILED or CANCELLED; the message carries Vertex's error."""


@dataclass(frozen=True)
class JobKind:
    """The client methods and names of one Vertex job resource type."""

    resource_type: str
    """GcpResources' resource_type, which the Vertex Pipelines UI uses to link the job."""
    collection: str
    create: Callable[[aiplatform_v1.JobServiceClient, str, Any], Any]
    get: Callable[[aiplatform_v1.JobServiceClient, str], Any]
    cancel: Callable[[aiplatform_v1.JobServiceClient, str], None]
    list: Callable[[aiplatform_v1.JobServiceClient, str, str], Any]
    spec: Callable[[Any], aiplatform_v1.CustomJobSpec]
    """The CustomJobSpec a job of this kind runs (a tuning job's: what every trial runs)."""


CUSTOM_JOB = JobKind(
    "CustomJob",
    "customJobs",
    create=lambda c, parent, job: c.create_custom_job(parent=parent, custom_job=job),
    get=lambda c, name: c.get_custom_job(name=name),
    cancel=lambda c, name: c.cancel_custom_job(name=name),
    list=lambda c, parent, flt: c.list_custom_jobs(request={"parent": parent, "filter": flt}),
    spec=lambda job: job.job_spec,
)

TUNING_JOB = JobKind(
    "HyperparameterTuningJob",
    "hyperparameterTuningJobs",
    create=lambda c, parent, job: c.create_hyperparameter_tuning_job(
        parent=parent, hyperparameter_tuning_job=job
    ),
    get=lambda c, name: c.get_hyperparameter_tuning_job(name=name),
    cancel=lambda c, name: c.cancel_hyperparameter_tuning_job(name=name),
    list=lambda c, parent, flt: c.list_hyperparameter_tuning_jobs(
        request={"parent": parent, "filter": flt}
    ),
    spec=lambda job: job.trial_job_spec,
)


@dataclass(frozen=True)
class Polling:
    """How often to ask for the job's state: from `initial` seconds, times `factor`, up to `max`."""

    initial: float = 5.0
    factor: float = 1.5
    max: float = 60.0

    def intervals(self) -> Iterator[float]:
        """The successive waits between two polls."""
        interval = self.initial
        while True:
            yield interval
            interval = min(interval * self.factor, self.max)


@dataclass(frozen=True)
class Target:
    """Where jobs go: project, location and whether that is the local service."""

    project: str
    location: str
    local: bool

    @classmethod
    def resolve(cls, project: str, location: str) -> "Target":
        """The local service when `VTP_LOCAL_ENDPOINT` is set (as `vtp run` does), else Vertex."""
        return cls(project, location, bool(os.environ.get(LOCAL_ENDPOINT_ENV)))

    @property
    def parent(self) -> str:
        """`projects/P/locations/L`."""
        return f"projects/{self.project}/locations/{self.location}"

    def client(self) -> aiplatform_v1.JobServiceClient:
        """A REST JobServiceClient for this target."""
        return job_client(self.location, local=self.local)

    def resource_uri(self, name: str) -> str:
        """The job's REST URI, the form GCPC writes into `gcp_resources`."""
        host = local_endpoint() if self.local else f"https://{api_endpoint(self.location)}"
        return f"{host}/v1/{name}"


def task_key(pipeline_run: str, task: str) -> str:
    """A label value naming one task of one pipeline run (labels allow 63 lowercase chars)."""
    return hashlib.sha256(f"{pipeline_run}/{task}".encode()).hexdigest()[:32]


@dataclass(frozen=True)
class TaskJob:
    """Where the job of one pipeline task lives: its re-attach label and its output directory."""

    key: str
    """The `vtp-task` label value a retry of the task finds its job by."""
    output_dir: str
    """`<output_root>/<pipeline run>/<task>-<digest>`: the job's baseOutputDirectory."""


def task_job(output_root: str, pipeline_run: str, task: str, job: Any) -> TaskJob:
    """The key and output directory of `job` (CustomJob or tuning job) run by this task.

    Both carry a digest of the job: the iterations of a `dsl.ParallelFor` share their task name,
    so without it they would all re-attach to the first one's job and write to its directory;
    a retried task builds the same job again, so it still finds its own.
    """
    try:
        storage.split_gcs_uri(output_root)
    except ValueError:
        raise SpecError(
            "output_root", f"{output_root!r} is not a Cloud Storage URI; use gs://BUCKET/PATH"
        ) from None
    name = f"{task}-{job_digest(job)}"
    return TaskJob(task_key(pipeline_run, name), f"{output_root.rstrip('/')}/{pipeline_run}/{name}")


def place(kind: JobKind, job: Any, output_root: str, pipeline_run: str, task: str) -> TaskJob:
    """Where this task's job lives; the job's base output directory (its trials') is set to it."""
    placed = task_job(output_root, pipeline_run, task, job)
    kind.spec(job).base_output_directory.output_uri_prefix = placed.output_dir
    return placed


def job_digest(job: Any) -> str:
    """Eight hex digits naming what `job` runs; its base output directory and labels left out."""
    body = json_format.MessageToDict(type(job).pb(job))
    body.pop("labels", None)
    for spec in (body.get("jobSpec"), body.get("trialJobSpec")):
        if spec:
            spec.pop("baseOutputDirectory", None)
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:8]


def find_job(client: Any, kind: JobKind, target: Target, key: str, gcp_resources: str) -> Any:
    """The job an earlier attempt of this task started and that is still worth following."""
    name = resources.recorded_name(gcp_resources, kind.collection)
    candidates = [kind.get(client, name)] if name else []
    if not candidates:
        listed = kind.list(client, target.parent, f'labels.{TASK_LABEL}="{key}"')
        candidates = sorted(listed, key=lambda job: job.create_time, reverse=True)
    return next((job for job in candidates if job.state in REUSABLE), None)


def submit_or_attach(
    kind: JobKind, target: Target, job: Any, key: str, gcp_resources: str
) -> tuple[Any, str]:
    """Re-attach to this task's job or submit `job`; record it in `gcp_resources`."""
    client = target.client()
    existing = find_job(client, kind, target, key, gcp_resources)
    if existing is not None:
        name = existing.name
        _log.info("Re-attaching to %s %s (%s)", kind.resource_type, name, existing.state.name)
    else:
        job.labels[TASK_LABEL] = key
        name = kind.create(client, target.parent, job).name
        _log.info("Submitted %s %s", kind.resource_type, name)
    resources.write(gcp_resources, kind.resource_type, target.resource_uri(name))
    return client, name


def wait(
    client: Any,
    kind: JobKind,
    name: str,
    polling: Polling,
    on_poll: Callable[[], None] = lambda: None,
    watch: Callable[[Any], Any] | None = None,
) -> Any:
    """Poll until the job ends, logging each state change; raise JobFailed unless it succeeded.

    `on_poll` runs after each status check (e.g. to copy new replica log lines into the task's).
    `watch(job)`, where the service has one, answers as soon as the job's state changes (or
    after a second), and replaces the sleeps between polls.
    """
    last = job = None
    reported: set[str] = set()
    for interval in polling.intervals():
        if watch is None or job is None:
            job = _status_check(lambda: kind.get(client, name))
        else:
            job = _status_check(functools.partial(watch, job))
        on_poll()
        if job.state != last:
            _log.info("%s %s: %s", kind.resource_type, name, job.state.name)
            last = job.state
        if not os.environ.get(FOLLOWED_ENV):  # the local engine prints each trial itself
            report_trials(job, reported)
        if job.state in JOB_ENDED:
            break
        if watch is None:
            time.sleep(interval)
    assert job is not None  # intervals() never runs out: the loop ends only at its break
    if job.state != State.JOB_STATE_SUCCEEDED:
        raise JobFailed(f"{kind.resource_type} {name} ended {job.state.name}: {job.error.message}")
    return job


def _status_check(check: Callable[[], Any]) -> Any:
    """`check()`, retried while it fails as a blip makes it fail (the API unreachable, a 5xx:
    `_transient`) for up to TRANSIENT_SECONDS, as Vertex's own launchers ride out such errors;
    the first failure of a streak is logged. A job that ran for hours is not lost to one."""
    logged: list[Exception] = []

    def note(exc: Exception) -> None:
        if not logged:
            _log.info("status check failed (%s); retrying for up to %d s", exc, TRANSIENT_SECONDS)
            logged.append(exc)

    policy = retry.Retry(
        predicate=_transient, initial=0.5, maximum=10.0, timeout=TRANSIENT_SECONDS, on_error=note
    )
    return policy(check)()


def _transient(exc: Exception) -> bool:
    """Whether `exc` is what a blip causes: google.api_core's transient errors (unavailable,
    internal, too many requests, a refused or broken connection) or an HTTP 5xx answer."""
    import requests

    if retry.if_transient_error(exc) or isinstance(exc, requests.ConnectionError):
        return True
    response = exc.response if isinstance(exc, requests.HTTPError) else None
    return response is not None and response.status_code >= 500


def report_trials(job: Any, reported: set[str]) -> None:
    """Log each tuning trial once it has ended: its parameters and final metric, rounded."""
    for trial in getattr(job, "trials", ()):
        if trial.id in reported or trial.state not in TRIAL_ENDED:
            continue
        reported.add(trial.id)
        params = ", ".join(f"{p.parameter_id}={readable(p.value)}" for p in trial.parameters)
        metrics = trial.final_measurement.metrics if "final_measurement" in trial else []
        # proto3 JSON omits a metric of exactly 0.0: `value` is then simply 0.0 here.
        result = ", ".join(f"{m.metric_id} {readable(float(m.value))}" for m in metrics)
        _log.info(
            "trial %s %s: %s -> %s", trial.id, trial.state.name, params, result or "no metric"
        )


def cancel_and_confirm(client: Any, kind: JobKind, name: str, deadline: float = 120.0) -> Any:
    """Cancel the job and wait (up to `deadline` s) until it reports a terminal state."""
    kind.cancel(client, name)
    stop = time.monotonic() + deadline
    job = kind.get(client, name)
    while job.state not in JOB_ENDED and time.monotonic() < stop:
        time.sleep(1.0)
        job = kind.get(client, name)
    if job.state not in JOB_ENDED:
        _log.error("%s %s still %s after cancel", kind.resource_type, name, job.state.name)
    else:
        _log.info("%s %s cancelled: %s", kind.resource_type, name, job.state.name)
    return job


def run_job(
    kind: JobKind, target: Target, job: Any, key: str, gcp_resources: str, polling: Polling
) -> Any:
    """Submit (or re-attach to) `job` and wait for it, cancelling it on SIGTERM."""
    if target.local:
        polling = replace(polling, max=min(polling.max, LOCAL_MAX_POLL_SECONDS))
    with CancelOnSigterm().installed() as guard:
        client, name = submit_or_attach(kind, target, job, key, gcp_resources)
        guard.attach(name, lambda: cancel_and_confirm(client, kind, name))
        if os.environ.get(FOLLOWED_ENV):  # the local engine prints the job's lines itself
            return wait(client, kind, name, polling, watch=local_watch(kind, target, name))
        copied = [NO_LINE_YET]
        copy = replica_logs(kind, target, name, copied)
        watch = local_watch(kind, target, name, lambda: copied[0])
        return wait(client, kind, name, polling, copy, watch)


def local_watch(
    kind: JobKind, target: Target, name: str, logs_after: Callable[[], str] | None = None
) -> Callable[[Any], Any] | None:
    """Locally, the service's `:wait` long poll for a CustomJob's next state (None elsewhere);
    with `logs_after` (the timestamp of the last replica line copied), it also answers as soon
    as a replica logs a newer line."""
    if not (target.local and kind is CUSTOM_JOB):
        return None
    from vtp.vertex.local_auth import local_session

    service = local_endpoint()
    session, url = local_session(service), f"{service}/v1/{name}:wait"

    def watch(job: Any) -> Any:
        params = {"state": job.state.name, "timeout": f"{WATCH_SECONDS}s"}
        if logs_after is not None:
            params["logsAfter"] = logs_after()
        answer = session.get(url, params=params, timeout=WATCH_SECONDS + 30)
        answer.raise_for_status()
        return aiplatform_v1.CustomJob.from_json(answer.text, ignore_unknown_fields=True)

    return watch


def replica_logs(
    kind: JobKind, target: Target, name: str, copied: list[str] | None = None
) -> Callable[[], None]:
    """Locally, copy a CustomJob's new replica log lines into this task's log on each poll;
    `copied[0]` is set to the timestamp of the last line copied.

    On Vertex the lines are in Cloud Logging already, linked from the job; reading them back
    would need the Logging API and its permission, so the task logs states only.
    """
    if not (target.local and kind is CUSTOM_JOB):
        return lambda: None
    import requests

    from vtp.vertex.joblogs import LogReader, LogsUnavailable, format_entry
    from vtp.vertex.local_auth import local_session

    job_id = name.rsplit("/", 1)[-1]
    url = local_endpoint()
    reader = LogReader(local_session(url), target.project, job_id, url)

    def copy() -> None:
        try:
            entries = reader.read()
        except (LogsUnavailable, requests.RequestException) as exc:
            _log.debug("replica logs unavailable: %s", exc)
            return
        for entry in entries:
            for line in format_entry(entry):  # SEVERITY, TIMESTAMP, REPLICA, MESSAGE
                _log.info("%s | %s", *line.split("\t", 3)[2:4])
        if entries and copied is not None:
            copied[0] = entries[-1].get("timestamp") or copied[0]

    return copy


def to_json(message: Any) -> str:
    """A proto-plus message as REST JSON (camelCase), for logs and artifacts."""
    return json.dumps(json_format.MessageToDict(type(message).pb(message)), indent=1)
