"""Vertex-style schedules in the local service: a cron that creates pipeline jobs.

`Schedules` checks a Schedule as Vertex does (its pipeline job included, so a bad request fails
at create, not at the first run), stores it, and a ticker thread creates a run each time one is
due: `nextRunTime` advances along the cron in the schedule's time zone, `maxConcurrentRunCount`
holds back (`allowQueueing`) or skips a run while earlier runs are still active, and the schedule
is COMPLETED once `maxRunCount` runs have started or the next run would fall after `endTime`.
Every attempt is recorded in `lastScheduledRunResponse`. Paused schedules do not fire; resuming
with `catchUp` fires the runs missed while paused, one per tick.

`clock` is the time source (a test can set it to a fake `() -> datetime` to make a cron due
without waiting); the ticker checks every poll interval.
"""

import builtins
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from google.cloud import aiplatform_v1

from vtp.local.base import callers, errors
from vtp.local.base.resources import clear_output_only, new_id, set_times, time_of
from vtp.local.base.routing import mask_fields
from vtp.local.base.services import CollectionService
from vtp.local.base.store import Record, ResourceStore
from vtp.local.pipeline_jobs import spec as specs
from vtp.local.pipeline_jobs.service import PipelineJobs
from vtp.local.service import Service
from vtp.vertex import cron

RUNS_ON_HOST = "the pipeline runs it creates have host processes (their worker, their Python tasks)"
"""Why a workload may not create or change a schedule (`callers.refuse_host`)."""

Schedule = aiplatform_v1.Schedule
State = aiplatform_v1.Schedule.State
_OUTPUT_ONLY = (
    *("name", "started_run_count", "state", "create_time", "update_time", "next_run_time"),
    *("last_pause_time", "last_resume_time", "catch_up", "last_scheduled_run_response"),
)
UPDATABLE = (
    *("display_name", "start_time", "end_time", "cron", "max_run_count"),
    *("max_concurrent_run_count", "allow_queueing", "create_pipeline_job_request"),
)
"""What `update` may change (the fields of Vertex's UpdateSchedule), as proto field names."""
UPDATABLE_PATHS = tuple(
    path.split("_")[0] + "".join(w.title() for w in path.split("_")[1:]) for path in UPDATABLE
)
"""The same, as REST's camelCase paths (how error messages name them)."""
_log = logging.getLogger(__name__)


def utc_now() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


class Schedules(CollectionService[Schedule, Record]):
    """Schedules; their runs are created through `jobs`."""

    collection, kind = "schedules", "Schedule"

    def __init__(self, root: Service, jobs: PipelineJobs) -> None:
        self.root, self.jobs = root, jobs
        self.clock: Callable[[], datetime] = utc_now
        self.store: ResourceStore = ResourceStore(
            root.config.state_dir / "pipelines.db", "schedules", Schedule
        )
        self._lock = threading.RLock()
        self._ticker = threading.Thread(target=self._tick_loop, name="schedules", daemon=True)

    def start(self) -> None:
        """Start firing: a tick every poll interval."""
        self._ticker.start()

    def close(self) -> None:
        """Stop the ticker (the service is closing), close the store."""
        if self._ticker.is_alive():
            self._ticker.join()
        self.store.close()

    # -- the API ------------------------------------------------------------------------------

    def create(self, parent: str, body: bytes) -> Schedule:
        """Check and store a schedule under `parent`; it fires from its start time on."""
        callers.refuse_host("schedule", RUNS_ON_HOST)
        schedule = parse(body)
        clear_output_only(schedule, _OUTPUT_ONLY)
        self._check(parent, schedule)
        now = self.clock()
        schedule.name = f"{parent}/schedules/{new_id()}"
        schedule.state = State(State.ACTIVE)
        set_times(schedule, now, "create_time", "update_time")
        if "start_time" not in schedule:
            set_times(schedule, now, "start_time")
        # A start time in the past starts from now: Vertex backfills only on resume (catchUp).
        first = _first_time(schedule.cron, max(time_of(schedule, "start_time"), now))
        set_times(schedule, first, "next_run_time")
        record = Record(schedule)
        with self._lock:
            self._complete_if_over(record)
            self.store.insert(record)
        _log.info(
            "schedule %s (%s): created, next run %s",
            record.id,
            schedule.display_name,
            schedule.next_run_time,
        )
        return schedule

    def pause(self, name: str) -> None:
        """Stop an ACTIVE schedule from firing."""
        with self._lock:
            record = self._record(name)
            self._expect(record, State.ACTIVE, "pause")
            schedule = record.resource
            schedule.state, schedule.last_pause_time = State.PAUSED, self.clock()
            del schedule.next_run_time
            self._save(record)

    def resume(self, name: str, catch_up: bool = False) -> None:
        """Let a PAUSED schedule fire again, from now on or (`catch_up`) from when it paused."""
        with self._lock:
            record = self._record(name)
            self._expect(record, State.PAUSED, "resume")
            schedule, now = record.resource, self.clock()
            schedule.state, schedule.last_resume_time = State.ACTIVE, now
            schedule.catch_up = catch_up
            since = schedule.last_pause_time if catch_up else now
            schedule.next_run_time = cron.next_time(schedule.cron, max(since, schedule.start_time))
            record.runtime["catch_up"] = catch_up
            self._complete_if_over(record)
            self._save(record)

    def update(self, name: str, body: bytes, update_mask: str) -> Schedule:
        """Change the fields `update_mask` names of an ACTIVE or PAUSED schedule, as Vertex
        does: the runs it already created go on; an ACTIVE one fires next at the first time
        its (new) cron gives from now on."""
        callers.refuse_host("schedule", RUNS_ON_HOST)
        change, fields = parse(body), mask_fields(update_mask)
        if not fields:
            raise errors.invalid_argument(
                f"updateMask is required: the fields to change, of {', '.join(UPDATABLE_PATHS)}."
            )
        unknown = [path for path in fields if path not in UPDATABLE]
        if unknown:
            raise errors.invalid_argument(
                f"updateMask: {', '.join(unknown)} cannot be updated; the fields that can are "
                f"{', '.join(UPDATABLE_PATHS)}."
            )
        with self._lock:
            record = self._record(name)
            if record.resource.state not in (State.ACTIVE, State.PAUSED):
                raise errors.failed_precondition(
                    f"Cannot update {record.resource.name}: it is "
                    f"{record.resource.state.name}, not ACTIVE or PAUSED."
                )
            updated = Schedule(record.resource)
            for path in fields:
                if path in change:
                    setattr(updated, path, getattr(change, path))
                else:
                    delattr(updated, path)
            self._check(record.parent, updated)
            if updated.state == State.ACTIVE:
                since = max(time_of(updated, "start_time"), self.clock())
                set_times(updated, _first_time(updated.cron, since), "next_run_time")
            record.resource = updated
            self._complete_if_over(record)
            self._save(record)
            return record.resource

    def delete(self, name: str) -> dict:
        """Delete a schedule (its runs go on); return the done Operation."""
        with self._lock:
            record = self._record(name)
            self.store.delete(record.id)
        return self.root.operations.deleted(record.parent)

    def tick(self) -> builtins.list[str]:
        """Fire every ACTIVE schedule that is due now; return the names of the runs created."""
        created: builtins.list[str] = []
        with self._lock:
            now = self.clock()
            for record in list(self.store.all()):
                schedule = record.resource
                if schedule.state == State.ACTIVE and schedule.next_run_time <= now:
                    created += self._fire(record, now)
        return created

    # -- firing -------------------------------------------------------------------------------

    def _fire(self, record: Record, now: datetime) -> builtins.list[str]:
        schedule = record.resource
        due = schedule.next_run_time
        active = self.jobs.active_runs(schedule.name)
        if active >= schedule.max_concurrent_run_count and schedule.allow_queueing:
            return []  # still due: it starts as soon as a run ends
        created: builtins.list[str] = []
        if active >= schedule.max_concurrent_run_count:
            response = (
                f"Skipped: maxConcurrentRunCount ({schedule.max_concurrent_run_count}) runs of "
                "this schedule are still active."
            )
        else:
            created, response = self._start_run(record)
        schedule.last_scheduled_run_response = Schedule.RunResponse(
            scheduled_run_time=due, run_response=response
        )
        catching_up = record.runtime.get("catch_up", False)
        schedule.next_run_time = cron.next_time(
            schedule.cron, due if catching_up else max(due, now)
        )
        record.runtime["catch_up"] = catching_up and schedule.next_run_time <= now
        self._complete_if_over(record)
        self._save(record)
        return created

    def _start_run(self, record: Record) -> tuple[builtins.list[str], str]:
        """Create the schedule's pipeline job: ([its name], its name) or ([], why it failed)."""
        schedule = record.resource
        request = schedule.create_pipeline_job_request
        run = aiplatform_v1.PipelineJob(request.pipeline_job)
        run.display_name = run.display_name or schedule.display_name  # as Vertex names runs
        try:
            job = self.jobs.create(request.parent, run, schedule=schedule.name)
        except errors.ApiError as exc:
            _log.warning("schedule %s: run not created: %s", record.id, exc.message)
            return [], f"Failed to create the pipeline job: {exc.message}"
        record.resource.started_run_count += 1
        _log.info("schedule %s: started %s", record.id, job.name)
        return [job.name], job.name

    def _complete_if_over(self, record: Record) -> None:
        schedule = record.resource
        ran_out = schedule.max_run_count and schedule.started_run_count >= schedule.max_run_count
        ended = "end_time" in schedule and schedule.next_run_time > schedule.end_time
        if ran_out or ended:
            schedule.state = State.COMPLETED
            del schedule.next_run_time

    def _tick_loop(self) -> None:
        closing, wait = self.root.closing, self.root.config.poll_interval
        while not closing.wait(wait):
            try:
                self.tick()
            except Exception:  # a bug must not stop every schedule
                _log.exception("schedules: tick failed")

    # -- checks and helpers -------------------------------------------------------------------

    def _check(self, parent: str, schedule: Schedule) -> None:
        if not schedule.display_name:
            raise errors.invalid_argument("schedule.displayName is required.")
        if not schedule.cron:
            raise errors.invalid_argument("schedule.cron is required (e.g. 'TZ=UTC 0 3 * * *').")
        try:
            cron.parse(schedule.cron)
        except cron.CronError as exc:
            raise errors.invalid_argument(f"schedule.cron: {exc}.") from None
        if schedule.max_concurrent_run_count <= 0:
            raise errors.invalid_argument(
                "schedule.maxConcurrentRunCount is required and must be positive."
            )
        if schedule.max_run_count < 0:
            raise errors.invalid_argument("schedule.maxRunCount must not be negative.")
        ends = "start_time" in schedule and "end_time" in schedule
        if ends and time_of(schedule, "end_time") <= time_of(schedule, "start_time"):
            raise errors.invalid_argument("schedule.endTime must be after schedule.startTime.")
        self._check_request(parent, schedule)

    def _check_request(self, parent: str, schedule: Schedule) -> None:
        if "create_notebook_execution_job_request" in schedule:
            raise errors.invalid_argument(
                "schedule.createNotebookExecutionJobRequest is not supported by the local service."
            )
        if "create_pipeline_job_request" not in schedule:
            raise errors.invalid_argument("schedule.createPipelineJobRequest is required.")
        request = schedule.create_pipeline_job_request
        if request.parent != parent:
            raise errors.invalid_argument(
                f"schedule.createPipelineJobRequest.parent must be {parent}, got "
                f"{request.parent!r}."
            )
        if request.pipeline_job_id:
            raise errors.invalid_argument(
                "schedule.createPipelineJobRequest.pipelineJobId must be empty: every run gets "
                "its own ID."
            )
        try:
            self.jobs.check(request.pipeline_job)
        except errors.ApiError as exc:  # named as this request has it, not as a job's own
            raise _within_request(exc) from None

    def _expect(self, record: Record, state: int, verb: str) -> None:
        if record.resource.state != state:
            raise errors.failed_precondition(
                f"Cannot {verb} {record.resource.name}: it is {record.resource.state.name}, "
                f"not {State(state).name}."
            )

    def _save(self, record: Record) -> None:
        set_times(record.resource, self.clock(), "update_time")
        self.store.update(record)


def _within_request(exc: errors.ApiError) -> errors.ApiError:
    """`exc`, raised checking the schedule's pipeline job, with the fields it names
    (`pipelineJob.pipelineSpec...`) under `schedule.createPipelineJobRequest.`, where this
    request has them."""
    message = exc.message
    if message.startswith("pipelineJob."):
        message = f"schedule.createPipelineJobRequest.{message}"
    return errors.ApiError(exc.code, message, exc.http_status)


def parse(body: bytes) -> Schedule:
    """A Schedule from a request body; unknown fields are INVALID_ARGUMENT, as on Vertex, and
    so is a field of the wrong type, named (`pipeline_jobs.spec.parse_request`)."""
    return specs.parse_request(Schedule, body, "schedule")


def _first_time(schedule_cron: str, start: datetime) -> datetime:
    """The schedule's first fire time at or after `start`; INVALID_ARGUMENT naming the start
    when the calendar ends first (a start time in year 9999)."""
    try:
        return cron.first_time(schedule_cron, start)
    except cron.CronError as exc:
        raise errors.invalid_argument(f"schedule.startTime: {exc}.") from None
