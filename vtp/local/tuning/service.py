"""The tuning half of the local service: hyperparameterTuningJobs created, read, cancelled, deleted.

`Tuner` validates a create request as Vertex would, stores the job (`store.py`) and gives it a
thread that calls `StudyRun.step()` every poll interval until the job ends. Trials run as
CustomJobs of the service (`vtp.local.custom_jobs`), hidden from `customJobs.list` as on Vertex.
A restarted service picks up every unfinished job where it was: the trials' CustomJobs are
recovered by the service, and each suggester is rebuilt from the stored trials.
"""

import logging
import secrets
import threading
from datetime import UTC, datetime
from pathlib import Path

from google.cloud.aiplatform_v1 import HyperparameterTuningJob, JobState

from vtp.engine import tree_walk
from vtp.local.base import errors
from vtp.local.base.resources import clear_output_only, new_id, require_ended, set_times
from vtp.local.base.routing import parse_message
from vtp.local.base.services import CollectionService
from vtp.local.base.sqlite import Database
from vtp.local.base.threads import Workers
from vtp.local.custom_jobs.service import CustomJobs
from vtp.local.service import Service
from vtp.local.tuning.run import StudyRun
from vtp.local.tuning.store import SCHEMA, TuningRecord, TuningStore
from vtp.vertex.protodict import SpecError
from vtp.vertex.states import JOB_ENDED
from vtp.vertex.study_rules import check_tuning_job

_OUTPUT_ONLY = (
    *("name", "trials", "state", "create_time", "start_time", "end_time", "update_time"),
    *("error", "satisfies_pzs", "satisfies_pzi"),
)
_log = logging.getLogger(__name__)


class Tuner(CollectionService[HyperparameterTuningJob, TuningRecord]):
    """HyperparameterTuningJobs whose trials are CustomJobs of `jobs`."""

    collection, kind = "hyperparameterTuningJobs", "HyperparameterTuningJob"

    def __init__(self, root: Service, jobs: CustomJobs) -> None:
        self.root, self.jobs = root, jobs
        self._db = Database(root.config.state_dir / "tuning.db", SCHEMA)
        self.store: TuningStore = TuningStore(self._db)
        self._runs: dict[str, StudyRun] = {}
        self._workers = Workers()
        self._lock = threading.Lock()

    def start(self) -> None:
        """Drive again every job a previous service left unfinished (after custom jobs have
        recovered their queue, so no trial is queued twice)."""
        for record in self.store.all():
            if record.resource.state not in JOB_ENDED:
                self._start(record)

    def close(self) -> None:
        """Stop stepping studies (the service is closing); their state stays for next start."""
        self._workers.join()
        self._db.close()

    def create(self, parent: str, body: bytes) -> HyperparameterTuningJob:
        """Validate and start a tuning job under `parent`; return it."""
        job = _parse(body)
        clear_output_only(job, _OUTPUT_ONLY)
        try:
            check_tuning_job(job)
        except SpecError as exc:
            raise errors.invalid_argument(f"hyperparameterTuningJob.{exc}") from None
        _check_runnable(job, self.jobs)
        now = datetime.now(UTC)
        job.name = f"{parent}/hyperparameterTuningJobs/{new_id()}"
        job.state = JobState(JobState.JOB_STATE_PENDING)
        set_times(job, now, "create_time", "update_time")
        record = TuningRecord(job, seed=secrets.randbelow(2**31))
        self.store.insert(record)
        _log.info("tuning job %s (%s): created", record.id, job.display_name)
        self._start(record)
        return job

    def cancel(self, name: str) -> None:
        """Start cancelling a job; raise FAILED_PRECONDITION if it has ended."""
        record = self._record(name)
        with self._lock:
            run = self._runs.get(record.id)
        if run is None:
            raise errors.already_ended(record.resource.name, record.resource.state.name)
        run.cancel()

    def delete(self, name: str) -> dict:
        """Delete an ended job, its trials' CustomJobs and files; return the done Operation."""
        record = self._record(name)
        require_ended(record.resource, JOB_ENDED)
        for trial in record.resource.trials:
            if trial.custom_job:
                try:
                    self.jobs.delete_custom_job(trial.custom_job)
                except errors.ApiError as exc:
                    _log.debug("delete %s: %s", trial.custom_job, exc.message)
        self.store.delete(record.id)
        tree_walk.remove_tree(self._metrics_dir(record.id), ignore_errors=True)
        return self.root.operations.deleted(record.parent)

    def _start(self, record: TuningRecord) -> None:
        run = StudyRun(record, self.jobs, self._metrics_dir(record.id), self.store.update)
        with self._lock:
            self._runs[record.id] = run
        self._workers.start(f"tuning-{record.id}", self._drive, run)

    def _drive(self, run: StudyRun) -> None:
        """Step `run` every poll interval until it ends or the service stops."""
        wait, closing = self.root.config.poll_interval, self.root.closing
        while not closing.is_set():
            try:
                if not run.step():
                    break
            except Exception:
                if closing.is_set():
                    break
                _log.exception("tuning job %s: step failed; retrying", run.record.id)
            closing.wait(wait)
        with self._lock:
            self._runs.pop(run.record.id, None)

    def _metrics_dir(self, job_id: str) -> Path:
        return self.root.config.state_dir / "tuning" / job_id


def _parse(body: bytes) -> HyperparameterTuningJob:
    return parse_message(HyperparameterTuningJob, body)


def _check_runnable(job: HyperparameterTuningJob, jobs: CustomJobs) -> None:
    try:
        jobs.check_runnable(job.trial_job_spec)
    except errors.ApiError as exc:
        message = exc.message.replace("customJob.jobSpec", "hyperparameterTuningJob.trialJobSpec")
        raise errors.ApiError(exc.code, message) from None
