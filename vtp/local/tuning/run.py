"""One tuning job in motion: trials started as CustomJobs, their metrics read, stopped, finished.

`StudyRun.step()` is called every poll interval by the tuner's thread for the job. Each step
refreshes the running trials (new measurements from their hypertune files, the end of their
CustomJobs), applies the early-stopping rule, keeps up to `parallelTrialCount` trials running
until `maxTrialCount` (or the end of a grid), and ends the job when nothing is left to run, or
when `maxFailedTrialCount` trials have failed. Trial states follow Vertex: ACTIVE while it runs,
STOPPING once the stopping rule has asked it to stop, then SUCCEEDED (with a final measurement)
or INFEASIBLE (failed, or finished without reporting the metric).
"""

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from google.cloud.aiplatform_v1 import CustomJob, HyperparameterTuningJob, JobState, Trial
from google.rpc import status_pb2

from vtp.engine import tree_walk
from vtp.local.base import errors
from vtp.local.base.resources import set_times, time_of
from vtp.local.tuning import metrics, stopping
from vtp.local.tuning.metrics import Measurement
from vtp.local.tuning.store import TuningRecord
from vtp.local.tuning.trial_job import METRIC_FILE_ENV, trial_job, trial_parameters
from vtp.vertex.states import JOB_ENDED

RUNNING_TRIAL = frozenset({Trial.State.ACTIVE, Trial.State.STOPPING})
CANCELLED_REASON = "The trial was cancelled with its tuning job."
_log = logging.getLogger(__name__)


class Backend(Protocol):
    """What a study run needs of the service's CustomJobs (`vtp.local.custom_jobs` provides it)."""

    def create_custom_job(
        self,
        parent: str,
        job: CustomJob,
        extra_env: dict[str, str] | None = None,
        trial_id: str = "",
        listed: bool = True,
    ) -> str: ...
    def get_custom_job(self, name: str) -> CustomJob: ...
    def cancel_custom_job(self, name: str) -> None: ...


def failure_budget(max_trial_count: int, max_failed_trial_count: int) -> int:
    """Failed trials that fail the job; with 0, our choice (Vertex does not document its own)."""
    if max_failed_trial_count:
        return max_failed_trial_count
    return min(max_trial_count, max(3, max_trial_count // 4))


class StudyRun:
    """Drives one HyperparameterTuningJob; `step` and `cancel` may be called from any thread."""

    def __init__(
        self,
        record: TuningRecord,
        backend: Backend,
        metrics_dir: Path,
        save: Callable[[TuningRecord], None],
    ) -> None:
        self.record = record
        self.job = record.resource
        self._backend = backend
        self._metrics_dir = metrics_dir
        self._save = save
        self._lock = threading.Lock()
        # Imported here, when a study runs: optuna and numpy are most of a service's start-up.
        from vtp.local.tuning.suggest import Suggester, record_from_trial

        spec = self.job.study_spec
        self._metric_ids = [m.metric_id for m in spec.metrics]
        records = [record_from_trial(t, self._metric_ids) for t in self.job.trials]
        self._suggester = Suggester(spec, record.seed, records)
        self._measured = {
            t.id: [Measurement.from_proto(m) for m in t.measurements] for t in self.job.trials
        }
        self._judged: dict[str, int] = {}  # measurements the stopping rule has seen, per trial
        self._stops: dict[str, stopping.Stop] = {}
        self._exhausted = False
        self._failure: str = ""  # why the job is failing, while its last trials stop
        self._resumed = False

    # -- called by the tuner ------------------------------------------------------------------

    def step(self) -> bool:
        """Advance the job by one poll; False once it has ended."""
        with self._lock:
            if self.job.state in JOB_ENDED:
                return False
            before = HyperparameterTuningJob.serialize(self.job)
            if not self._resumed:
                self._resume()
            for trial in self._running():
                self._refresh(trial)
            if self.job.state == JobState.JOB_STATE_CANCELLING or self._failure:
                self._finish_when_idle()
            elif self._failed() >= self._budget():
                self._start_failing()
            else:
                self._start_trials()
                if not self._running() and not self._can_start():
                    self._finish()
            if HyperparameterTuningJob.serialize(self.job) != before:
                self._commit()
            return self.job.state not in JOB_ENDED

    def cancel(self) -> None:
        """Start cancelling: stop every running trial; the job ends CANCELLED when they have."""
        with self._lock:
            if self.job.state in JOB_ENDED:
                raise errors.failed_precondition(
                    f"Cannot cancel {self.job.name}: it is already in state {self.job.state.name}."
                )
            self.job.state = JobState(JobState.JOB_STATE_CANCELLING)
            self._stop_running_trials()
            self._commit()

    # -- trials -------------------------------------------------------------------------------

    def _resume(self) -> None:
        """After a service restart, re-send the stops that the restart undid (no-op when new)."""
        self._resumed = True
        for trial in self._running():
            if (
                trial.state == Trial.State.STOPPING
                or self.job.state == JobState.JOB_STATE_CANCELLING
            ):
                self._cancel_custom_job(trial)

    def _running(self) -> list[Trial]:
        return [t for t in self.job.trials if t.state in RUNNING_TRIAL]

    def _refresh(self, trial: Trial) -> None:
        custom = self._backend.get_custom_job(trial.custom_job)
        started = time_of(custom if custom.start_time else trial, "start_time")
        reported = metrics.read_metric_file(
            self._metric_file(trial.id), self._metric_ids, started.timestamp()
        )
        merged = metrics.merge(self._measured[trial.id], reported)
        if merged != self._measured[trial.id]:
            self._measured[trial.id] = merged
            trial.measurements = [m.to_proto() for m in merged]
        if custom.state in JOB_ENDED:
            self._end_trial(trial, custom)
        elif trial.state == Trial.State.ACTIVE and custom.state == JobState.JOB_STATE_RUNNING:
            self._judge(trial)

    def _judge(self, trial: Trial) -> None:
        """Apply the early-stopping rule when the trial has reported something new."""
        measured = self._measured[trial.id]
        if len(measured) == self._judged.get(trial.id, 0):
            return
        self._judged[trial.id] = len(measured)
        decision = stopping.should_stop(self.job.study_spec, measured, self._completed_curves())
        if decision is None:
            return
        _log.info("tuning job %s: stopping trial %s: %s", self.record.id, trial.id, decision.reason)
        self._stops[trial.id] = decision
        trial.state = Trial.State(Trial.State.STOPPING)
        self._cancel_custom_job(trial)

    def _completed_curves(self) -> list[stopping.Curve]:
        spec = self.job.study_spec
        rule = type(spec).pb(spec).WhichOneof("automated_stopping_spec")
        elapsed = bool(rule) and getattr(spec, rule).use_elapsed_duration
        objective = self._metric_ids[0]
        return [
            stopping.curve(
                self._measured[t.id],
                objective,
                elapsed,
                Measurement.from_proto(t.final_measurement),
            )
            for t in self.job.trials
            if t.state == Trial.State.SUCCEEDED
        ]

    def _end_trial(self, trial: Trial, custom: CustomJob) -> None:
        stopped = self._stops.pop(trial.id, None)
        final = metrics.final_measurement(self._measured[trial.id], self.job.study_spec)
        if stopped is not None and stopped.final is not None:
            final = stopped.final
        if custom.state == JobState.JOB_STATE_FAILED:
            self._infeasible(trial, custom.error.message or "The trial's CustomJob failed.")
        elif trial.state == Trial.State.ACTIVE and custom.state == JobState.JOB_STATE_CANCELLED:
            self._infeasible(trial, CANCELLED_REASON)
        elif final is None:
            wanted = ", ".join(self._metric_ids)
            self._infeasible(trial, f"The trial reported no value of {wanted} (cloudml-hypertune).")
        else:
            trial.state = Trial.State(Trial.State.SUCCEEDED)
            trial.final_measurement = final.to_proto()
            self._suggester.complete(trial.id, final.metrics)
        set_times(trial, datetime.now(UTC), "end_time")

    def _infeasible(self, trial: Trial, reason: str) -> None:
        trial.state = Trial.State(Trial.State.INFEASIBLE)
        trial.infeasible_reason = reason
        self._suggester.fail(trial.id)

    def _start_trials(self) -> None:
        while len(self._running()) < self.job.parallel_trial_count and self._can_start():
            trial_id = str(len(self.job.trials) + 1)
            params = self._suggester.suggest(trial_id)
            if params is None:
                self._exhausted = True  # a grid with fewer points than maxTrialCount
                return
            self._start_trial(trial_id, params)
            if self._failed() >= self._budget():
                return

    def _start_trial(self, trial_id: str, params: dict) -> None:
        now = datetime.now(UTC)
        trial = Trial(id=trial_id, state=Trial.State.ACTIVE, start_time=now)
        trial.parameters = trial_parameters(params)
        self._measured[trial_id] = []
        metric_file = self._metric_file(trial_id)
        # A left-over of a crashed start, which its trial's replica may have filled at will.
        tree_walk.remove_tree(metric_file.parent, ignore_errors=True)
        try:
            trial.custom_job = self._backend.create_custom_job(
                self.record.parent,
                trial_job(self.job, trial_id, params),
                extra_env={METRIC_FILE_ENV: str(metric_file)},
                trial_id=trial_id,
                listed=False,
            )
        except errors.ApiError as exc:  # e.g. a package URI missing from local storage
            self.job.trials.append(trial)
            self._infeasible(self.job.trials[-1], exc.message)
            set_times(self.job.trials[-1], now, "end_time")
            return
        self.job.trials.append(trial)
        if self.job.state == JobState.JOB_STATE_PENDING:
            self.job.state = JobState(JobState.JOB_STATE_RUNNING)
            set_times(self.job, now, "start_time")

    def _can_start(self) -> bool:
        return not self._exhausted and len(self.job.trials) < self.job.max_trial_count

    def _failed(self) -> int:
        return sum(
            1
            for t in self.job.trials
            if t.state == Trial.State.INFEASIBLE and t.infeasible_reason != CANCELLED_REASON
        )

    def _budget(self) -> int:
        return failure_budget(self.job.max_trial_count, self.job.max_failed_trial_count)

    def _metric_file(self, trial_id: str) -> Path:
        return self._metrics_dir / trial_id / "output.metrics"

    def _stop_running_trials(self) -> None:
        for trial in self._running():
            self._cancel_custom_job(trial)

    def _cancel_custom_job(self, trial: Trial) -> None:
        try:
            self._backend.cancel_custom_job(trial.custom_job)
        except errors.ApiError as exc:  # it ended on its own meanwhile: the next step sees it
            _log.debug("cancel %s: %s", trial.custom_job, exc.message)

    # -- the job ------------------------------------------------------------------------------

    def _start_failing(self) -> None:
        failed = [t for t in self.job.trials if t.state == Trial.State.INFEASIBLE]
        last = failed[-1]
        self._failure = (
            f"{self._failed()} trials failed, reaching the limit of {self._budget()} "
            f"(maxFailedTrialCount). Trial {last.id}: {last.infeasible_reason}"
        )
        self._stop_running_trials()
        self._finish_when_idle()

    def _finish_when_idle(self) -> None:
        if self._running():
            return
        if self.job.state == JobState.JOB_STATE_CANCELLING:
            self._end(JobState.JOB_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
        else:
            self._end(JobState.JOB_STATE_FAILED, errors.INVALID_ARGUMENT, self._failure)

    def _finish(self) -> None:
        if any(t.state == Trial.State.SUCCEEDED for t in self.job.trials):
            self._end(JobState.JOB_STATE_SUCCEEDED)
            return
        last = self.job.trials[-1] if self.job.trials else None
        reason = f" Trial {last.id}: {last.infeasible_reason}" if last else ""
        self._end(JobState.JOB_STATE_FAILED, errors.INVALID_ARGUMENT, "All trials failed." + reason)

    def _end(self, state: int, code: int = 0, message: str = "") -> None:
        self.job.state = JobState(state)
        set_times(self.job, datetime.now(UTC), "end_time")
        if code:
            self.job.error = status_pb2.Status(code=code, message=message)
        _log.info("tuning job %s: %s %s", self.record.id, JobState(state).name, message)

    def _commit(self) -> None:
        set_times(self.job, datetime.now(UTC), "update_time")
        self._save(self.record)
