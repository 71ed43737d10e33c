"""The pipeline half of the local service: pipelineJobs created, run by a worker, cancelled.

Each run is a `vtp.engine.worker` process in its own process group, started with the service's
URL and storage root, in the user's folder (`project_dir`, also on its PYTHONPATH), so the
components it runs call back into this service exactly as they call Vertex and import the user's
modules as a replica does. A watcher thread per run moves it through Vertex's states (QUEUED ->
PENDING -> RUNNING -> SUCCEEDED / FAILED, or CANCELLING -> CANCELLED): cancel sends SIGTERM to
the group, and SIGKILL after the service's grace period; then the jobs the tasks started are
cancelled and the models they deployed undeployed (`teardown.py`), each noted in the run's log.
A service that closes while runs are in flight kills them; on the next start, runs left
unfinished fail with a message saying so, and what their tasks had started is stopped, since
nothing watches it any more. Runs still queued start then, or, under a config that does not
resume unfinished work (`vtp run`'s service), are cancelled saying why.

A run's worker is, when there is one, the service's standby (`standby.py`): a worker started
before the run, with its imports done, that the run is handed to: the one its caller spawned
before importing the service (`vtp run`'s, whose one run comes at once), or, for a service that
prepares runs (`ServiceConfig.prepare_runs`: `vtp local serve --prepare-runs`), one from its
start and again after each run ends with no run left active. Otherwise a fresh worker per run:
a standby spawned after every run cost a test file that runs one small pipeline after another a
third more time (its imports, torch among them, took the CPU of the runs that followed), and
holds about 0.9 GB while idle. A standby that died, or whose environment is not the run's, is
killed, and the run gets a fresh worker.
"""

import json
import logging
import math
import os
import re
import shlex
import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from google.cloud import aiplatform_v1
from google.rpc import status_pb2

from vtp import containers, storage
from vtp.engine import tree_walk, vertex_tasks, worker
from vtp.local.base import callers, errors
from vtp.local.base.config import not_resumed_message
from vtp.local.base.resources import new_id, require_ended, set_times
from vtp.local.base.services import CollectionService
from vtp.local.base.store import Record, ResourceStore
from vtp.local.custom_jobs.service import CustomJobs
from vtp.local.endpoints.service import Endpoints
from vtp.local.metadata.service import Metadata
from vtp.local.pipeline_jobs import spec as specs
from vtp.local.pipeline_jobs.lineage import RunLineage
from vtp.local.pipeline_jobs.process import RUN_DIR_ENV, RunProcess, worker_environment
from vtp.local.pipeline_jobs.resource import created_job
from vtp.local.pipeline_jobs.standby import Standby, spawn_standby
from vtp.local.pipeline_jobs.task_details import task_details
from vtp.local.pipeline_jobs.teardown import Teardown
from vtp.local.runtime.logs import read as read_log
from vtp.local.runtime.process import SERVICE_ENV, kill_leftovers
from vtp.local.service import Service
from vtp.local.tuning.service import Tuner
from vtp.vertex import local_auth
from vtp.vertex.endpoint import LOCAL_ENDPOINT_ENV
from vtp.vertex.states import PIPELINE_ENDED

State = aiplatform_v1.PipelineState
_ORPHANS = "cancel_task_jobs"
"""Runtime flag of a run that ended with the service while its tasks' jobs may still run."""
STOPPED_MESSAGE = "The local service stopped while this pipeline ran; submit it again."
HOST_RUN = "its run's worker and its lightweight Python tasks are host processes"
"""Why a workload may not create a run (`callers.refuse_host`), or a schedule of runs."""
LOG_CHECK_SECONDS = 0.05
"""How often a `read_logs` long poll looks at the run's log for new text."""
_log = logging.getLogger(__name__)


class PipelineJobs(CollectionService[aiplatform_v1.PipelineJob, Record]):
    """PipelineJobs, each run by a worker process; the jobs their tasks start are CustomJobs
    of `jobs` and tuning jobs of `tuning`, which a cancelled run cancels, and the models they
    deploy are on `endpoints`, which a cancelled run undeploys; what they run and make is
    recorded in `metadata` (`lineage.py`)."""

    collection, kind = "pipelineJobs", "PipelineJob"

    def __init__(
        self,
        root: Service,
        jobs: CustomJobs,
        tuning: Tuner,
        endpoints: Endpoints,
        metadata: Metadata,
        standby: Standby | None = None,
    ) -> None:
        """`standby`: a worker spawned for this service's runs (`Standby(config)`) ahead of it,
        which it now owns."""
        self.root, self.jobs, self.tuning = root, jobs, tuning
        self.teardown = Teardown(jobs, tuning, endpoints)
        self.config = root.config
        self.lineage = RunLineage(metadata, self.config.storage_root)
        self.store: ResourceStore = ResourceStore(
            self.config.state_dir / "pipelines.db", "pipeline_jobs", aiplatform_v1.PipelineJob
        )
        self._lock = threading.RLock()
        self._changed = threading.Condition()
        """Notified at every state change (`read_logs` long polls wait on it)."""
        self._runs: dict[str, RunProcess] = {}
        self._watchers: list[threading.Thread] = []
        self._standby = standby
        """The worker waiting for the next run, if any (at most one)."""
        self._started = False
        self._stopping = False

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Settle the runs a previous service left in flight, stop what their tasks started,
        and start the runs still queued (or cancel them, when the config does not resume).
        The stored runs are read once (each holds its whole spec) and settled in place."""
        with self._lock:
            records = list(self.store.all())
            self._recover(records)
        self._cancel_orphans(records)
        with self._lock:
            self._started = True
            if self.config.prepare_runs:
                self._prepare()
            for record in records:
                if record.resource.state == State.PIPELINE_STATE_QUEUED:
                    self._restore(record)

    def _restore(self, record: Record) -> None:
        """Start a run a previous service left queued, or cancel it; log which."""
        what = f"PipelineJob {record.resource.name} ({record.resource.display_name})"
        if self.config.resume_unfinished:
            _log.info("restored: %s, queued: starts now", what)
            self._launch(record)
        else:
            message = not_resumed_message("PipelineJob")
            self._finish(record, State.PIPELINE_STATE_CANCELLED, errors.CANCELLED, message)
            _log.info("not restored: %s, left queued: cancelled", what)

    def close(self) -> None:
        """Kill every run (they fail: kfp.local cannot resume), wait for them, close the store."""
        with self._lock:
            if self._stopping:
                return
            self._stopping = True
            with self._changed:  # long polls answer now
                self._changed.notify_all()
            for run in self._runs.values():
                run.kill()
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.join()
        with self._lock:  # no watcher spawns one any more
            standby, self._standby = self._standby, None
        if standby is not None:
            standby.kill()
        self.store.close()

    # -- the API ------------------------------------------------------------------------------

    def create(
        self, parent: str, job: aiplatform_v1.PipelineJob, job_id: str = "", schedule: str = ""
    ) -> aiplatform_v1.PipelineJob:
        """Check `job` as Vertex would, store it and start its run; return the created job."""
        callers.refuse_host("pipelineJob", HOST_RUN)
        spec, root, arguments = self.check(job)
        if job_id:
            specs.check_job_id(job_id)
        record_id = job_id or new_id()
        created = created_job(job, f"{parent}/pipelineJobs/{record_id}", root, schedule)
        # Outputs go under <root>/<job ID>/, as on Vertex (which adds the project number).
        local_root = storage.path_under(self.config.storage_root, root)
        record = Record(created, {"pid": 0, "token": "", "root": str(local_root / record_id)})
        with self._lock:
            if self._stopping:
                raise errors.ApiError(errors.INTERNAL, "The local service is stopping.")
            try:
                self.store.insert(record)
            except sqlite3.IntegrityError:
                raise errors.already_exists(f"PipelineJob {created.name} already exists.") from None
            self._set_contexts(record, spec["pipelineInfo"]["name"])
            run_root = Path(record.runtime["root"])
            self._write_request(record.id, worker.request(spec, arguments, run_root))
            if self._started:
                self._launch(record)
        _log.info("pipeline job %s (%s): created", record.id, created.display_name)
        hold_past_its_second(record.id)
        return record.resource

    def check(self, job: aiplatform_v1.PipelineJob) -> tuple[dict, str, dict]:
        """Raise INVALID_ARGUMENT unless `job` can run; return its spec, root and arguments."""
        spec = specs.pipeline_spec(job)
        root = specs.pipeline_root(job, spec, self.config.storage_root)
        specs.check_runtime(job)
        try:
            vertex_tasks.check_runnable(spec, self.config.container_engine)
        except (ValueError, RuntimeError) as exc:  # a component this machine cannot run
            raise errors.failed_precondition(str(exc)) from None
        self.root.bucket_for_writing(root, "pipelineJob.runtimeConfig.gcsOutputDirectory")
        return spec, root, specs.run_arguments(spec, specs.parameter_values(job))

    def get(self, name: str) -> aiplatform_v1.PipelineJob:
        """The job named `name`, its tasks so far in `jobDetail.taskDetails`; raise NOT_FOUND."""
        record = self._record(name)
        job = aiplatform_v1.PipelineJob(record.resource)
        run_dir = self._run_dir(record.id)
        if not (run_dir / worker.REQUEST).exists():
            return job
        over = job.state in PIPELINE_ENDED
        job.job_detail.task_details = task_details(run_dir / "run.log", job.name, over)
        context = self.lineage.run_context(job.name)
        if context is not None:  # as it is now: its parents name the experiments it is in
            job.job_detail.pipeline_run_context = context
        return job

    def cancel(self, name: str) -> None:
        """Start cancelling a run (CANCELLING, then CANCELLED); raise if it has ended."""
        with self._lock:
            record = self._record(name)
            state = record.resource.state
            if state in PIPELINE_ENDED:
                raise errors.already_ended(record.resource.name, state.name)
            run = self._runs.get(record.id)
            if run is None:  # queued, never started
                self._finish(record, State.PIPELINE_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
            elif state != State.PIPELINE_STATE_CANCELLING:
                self._set_state(record, State.PIPELINE_STATE_CANCELLING)
                run.cancel()

    def delete(self, name: str) -> dict:
        """Delete an ended job and its run files; return the done Operation."""
        record = self._record(name)
        require_ended(record.resource, PIPELINE_ENDED)
        self.store.delete(record.id)
        # Its tasks wrote its workspace as they liked, to any depth: `remove_tree` never recurses.
        tree_walk.remove_tree(self._run_dir(record.id), ignore_errors=True)
        return self.root.operations.deleted(record.parent)

    def read_logs(self, name: str, offset: int, max_bytes: int, timeout: float = 0.0) -> dict:
        """The run's log text from byte `offset`, where to read on from, and the run's state as
        of before the text was read (so an ended run's text is all there is). With `timeout`,
        a long poll: it answers once there is text past `offset` or the run has ended (woken
        by the state's change; the log, which the worker writes, is looked at every
        LOG_CHECK_SECONDS), or after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            record = self._record(name)
            callers.may_read_logs(record.resource.name)
            log = self._run_dir(record.id) / "run.log"
            while not (self._stopping or record.resource.state in PIPELINE_ENDED):
                left = deadline - time.monotonic()
                if left <= 0 or _size(log) > offset:
                    break
                if self._changed.wait(min(left, LOG_CHECK_SECONDS)):  # a state changed
                    record = self._record(name)
        entry = read_log(log, "pipeline", offset, max_bytes)
        entry.pop("replica")
        return {"name": record.resource.name, "pipelineState": record.resource.state.name, **entry}

    def active_runs(self, schedule: str) -> int:
        """How many runs that `schedule` started have not ended yet."""
        return sum(
            1
            for r in self.store.all()
            if r.resource.schedule_name == schedule and r.resource.state not in PIPELINE_ENDED
        )

    # -- runs ---------------------------------------------------------------------------------

    def _launch(self, record: Record) -> None:
        run_dir = self._run_dir(record.id)
        env = worker_environment(self._settings(record), self.config.pass_env)
        config = self.config
        assert config.project_dir is not None, "ServiceConfig resolves it"
        standby, overlay = self._take_standby(record.id, env)
        run = RunProcess(
            run_dir, config.poll_interval, config.grace_period, standby.token if standby else ""
        )
        record.runtime["token"] = run.token
        self.store.update(record)  # before the process has the run: a restart can find it
        if standby is not None and standby.assign(run_dir, overlay):
            record.runtime["pid"] = run.adopt(standby.process)
        else:
            if standby is not None:  # it died before it read its run
                _log.info("pipeline job %s: the standby worker is gone; a fresh one", record.id)
                standby.kill()
                run = RunProcess(run_dir, config.poll_interval, config.grace_period)
                record.runtime["token"] = run.token
                self.store.update(record)
            record.runtime["pid"] = run.start(env, config.project_dir)
        self._runs[record.id] = run
        self._set_state(record, State.PIPELINE_STATE_PENDING)
        watcher = threading.Thread(
            target=self._watch,
            args=(record.id, record.resource.name, run),
            name=f"pipeline-{record.id}",
            daemon=True,
        )
        self._watchers.append(watcher)
        watcher.start()

    def _settings(self, record: Record) -> dict[str, str]:
        """What the service gives the worker of `record`'s run over a container's environment
        (`standby.early_settings` are those known before the service bound its ports)."""
        env = {
            **self.root.client_env,
            LOCAL_ENDPOINT_ENV: self.root.url,
            storage.GCS_ROOT_ENV: str(self.config.storage_root.resolve()),
            local_auth.TOKEN_ENV: self.root.token,
            SERVICE_ENV: self.root.service_id,
            vertex_tasks.PROJECT_ENV: record.parent.split("/")[1],
            vertex_tasks.LOCATION_ENV: record.parent.split("/")[3],
            RUN_DIR_ENV: str(self._run_dir(record.id)),
        }
        if self.config.container_engine:  # container components run in their images
            env[containers.ENGINE_ENV] = shlex.join(self.config.container_engine)
        # The start-up hook first, then the user's folder (as replicas have it), then what the
        # service was given.
        folder = str(self.config.import_dir or "")
        paths = [env.get("PYTHONPATH"), folder, os.environ.get("PYTHONPATH")]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
        if not folder:  # the worker works in the untrusted folder: `-m` must not import from it
            env["PYTHONSAFEPATH"] = "1"
        return env

    def _take_standby(self, job_id: str, env: dict[str, str]) -> tuple[Standby | None, dict]:
        """The standby, if there is one that can run with `env`, and the settings to send it;
        one that cannot is killed (the service's log says why)."""
        standby, self._standby = self._standby, None
        if standby is None:
            return None, {}
        overlay = standby.overlay(env)
        if isinstance(overlay, str):
            _log.info("pipeline job %s: a fresh worker, not the standby: %s", job_id, overlay)
            standby.kill()
            return None, {}
        _log.info("pipeline job %s: runs in the standby worker", job_id)
        return standby, overlay

    def _prepare(self) -> None:
        """Spawn a standby for the next run, unless there is one, a run is active (whose CPU
        its imports would take) or the service is stopping."""
        if self._standby is None and not self._runs and not self._stopping:
            self._standby = spawn_standby(self.config)

    def _watch(self, job_id: str, job_name: str, run: RunProcess) -> None:
        code = run.watch(
            on_started=lambda: self._running(job_id),
            on_poll=lambda: self._record_lineage(job_name),
        )
        record = self.store.get(job_id)
        if record and record.resource.state == State.PIPELINE_STATE_CANCELLING:
            self._cancel_task_jobs(record)
        with self._lock:
            record = self.store.get(job_id)
            if record is not None:
                self._settle(record, code)
        run.wait_ended()  # the fork server's stages freed; `close` waits for this thread
        with self._lock:
            self._runs.pop(job_id, None)
            if self.config.prepare_runs:
                self._prepare()  # for the next run, now that none takes the CPU

    def _cancel_task_jobs(self, record: Record) -> None:
        """Stop what the run's tasks started: their jobs cancelled, their models undeployed."""
        root = Path(record.runtime.get("root", ""))
        self.teardown.stop_all(record.resource, root, self._run_dir(record.id) / "run.log")

    def _running(self, job_id: str) -> None:
        with self._lock:
            record = self.store.get(job_id)
            if record is not None and record.resource.state == State.PIPELINE_STATE_PENDING:
                self._set_state(record, State.PIPELINE_STATE_RUNNING)

    def _settle(self, record: Record, returncode: int) -> None:
        """Record how the run ended."""
        self._record_lineage(record.resource.name, final=True)
        if record.resource.state == State.PIPELINE_STATE_CANCELLING:
            self._finish(record, State.PIPELINE_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
            return
        if self._stopping:
            record.runtime[_ORPHANS] = True  # the service re-queues its tasks' jobs: cancel them
            self._finish(record, State.PIPELINE_STATE_FAILED, errors.INTERNAL, STOPPED_MESSAGE)
            return
        result = worker.read_result(self._run_dir(record.id))
        if result is None:
            message = f"The pipeline run process exited with status {returncode} and no result"
            cause = worker.death_cause(self._run_dir(record.id))
            message += f": {cause}" if cause else "."
            self._finish(record, State.PIPELINE_STATE_FAILED, errors.INTERNAL, message)
        elif result["succeeded"]:
            self._finish(record, State.PIPELINE_STATE_SUCCEEDED)
        else:
            self._finish(
                record, State.PIPELINE_STATE_FAILED, errors.FAILED_PRECONDITION, result["error"]
            )

    def _cancel_orphans(self, records: list[Record]) -> None:
        """Cancel the jobs of `records`' runs that ended with the service: nothing watches them
        any more."""
        for record in [r for r in records if r.runtime.get(_ORPHANS)]:
            self._cancel_task_jobs(record)
            with self._lock:
                record.runtime.pop(_ORPHANS)
                self.store.update(record)

    def _recover(self, records: list[Record]) -> None:
        """Settle the runs of `records` a stopped (or killed) service left in flight."""
        for record in records:
            state = record.resource.state
            if state in PIPELINE_ENDED or state == State.PIPELINE_STATE_QUEUED:
                continue
            if record.runtime.get("token"):
                kill_leftovers(record.runtime["pid"], record.runtime["token"])
            record.runtime[_ORPHANS] = True
            self._record_lineage(record.resource.name, final=True)
            if state == State.PIPELINE_STATE_CANCELLING:
                self._finish(record, State.PIPELINE_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
            else:
                self._finish(record, State.PIPELINE_STATE_FAILED, errors.INTERNAL, STOPPED_MESSAGE)

    # -- helpers ------------------------------------------------------------------------------

    def _set_state(self, record: Record, state: int) -> None:
        now = datetime.now(UTC)
        job = record.resource
        job.state = State(state)
        set_times(job, now, "update_time")
        if state == State.PIPELINE_STATE_RUNNING and "start_time" not in job:
            set_times(job, now, "start_time")
        if state in PIPELINE_ENDED:
            set_times(job, now, "end_time")
        self.store.update(record)
        with self._changed:
            self._changed.notify_all()
        _log.info("pipeline job %s: %s", record.id, State(state).name)

    def _finish(self, record: Record, state: int, code: int = 0, message: str = "") -> None:
        if code:
            record.resource.error = status_pb2.Status(code=code, message=message)
        self._set_state(record, state)

    def _set_contexts(self, record: Record, pipeline_name: str) -> None:
        """Create the run's contexts in ML Metadata and name them in the job, as Vertex does."""
        job = record.resource
        pipeline, run = self.lineage.contexts(job.name, pipeline_name)
        job.job_detail.pipeline_context = pipeline
        job.job_detail.pipeline_run_context = run
        self.store.update(record)

    def _record_lineage(self, job_name: str, final: bool = False) -> None:
        """Record the run's tasks and artifacts so far in ML Metadata; a failure there is
        logged and never stops the run."""
        run_dir = self._run_dir(job_name.rpartition("/")[2])
        try:
            self.lineage.record(job_name, run_dir, final)
        except Exception:
            _log.exception("pipeline job %s: recording in ML Metadata failed", job_name)

    def _run_dir(self, job_id: str) -> Path:
        return self.config.state_dir / "pipelines" / job_id

    def _write_request(self, job_id: str, request: dict) -> None:
        run_dir = self._run_dir(job_id)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / worker.REQUEST).write_text(json.dumps(request))


def _size(path: Path) -> int:
    """The size of the file at `path`; 0 when there is none yet."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


_SDK_DEFAULT_ID = re.compile(r"-(\d{14})$")
"""The id the SDK gives a PipelineJob the caller names none for: `<pipeline name>-<%Y%m%d%H%M%S
of the client's clock>` (`aiplatform.PipelineJob`)."""


def hold_past_its_second(job_id: str) -> None:
    """Answer a create whose id is the SDK's default for this very second only once that second
    is over. Vertex takes seconds to create a PipelineJob, so a program that submits the same
    pipeline in a loop (Vertex's samples compare runs so) gets a new id each time; the local
    service answers in milliseconds, and the next submit would name the same id (409). At most
    a second, and only for such ids (the client's clock: this machine's, local time or UTC)."""
    match = _SDK_DEFAULT_ID.search(job_id)
    now = time.time()
    seconds = {time.strftime("%Y%m%d%H%M%S", at(now)) for at in (time.localtime, time.gmtime)}
    if match is not None and match[1] in seconds:
        time.sleep(math.floor(now) + 1 - now)
