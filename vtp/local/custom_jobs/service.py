"""CustomJobs: created, queued, run as local processes under Vertex's rules, listed, cancelled.

`CustomJobs` is what the REST routes (`routes.py`) call, and what other resources call
directly: tuning trials, training pipelines and pipeline tasks are CustomJobs too.

    name = jobs.create_custom_job(parent, job, extra_env={...}, trial_id="3", listed=False)
    job = jobs.wait_custom_job(name)            # blocks until the job has ended
    jobs.cancel_custom_job(name)

A scheduler thread starts queued jobs, in creation order, when their replicas fit the machine
(`capacity.py`); each started job gets a `JobRun` thread (`supervisor.py`), which reports back
through the `JobBook` methods below. Cloud Logging's `entries:list` reads these jobs' replica logs.
"""

import logging
import os
import re
import sys
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from google.cloud import aiplatform_v1
from google.rpc import status_pb2

from vtp.engine import tree_walk
from vtp.local.base import callers, errors
from vtp.local.base.config import not_resumed_message
from vtp.local.base.filters import compile_filter
from vtp.local.base.names import find
from vtp.local.base.resources import matching_page, new_id, page, require_ended, set_times
from vtp.local.base.sqlite import Database
from vtp.local.custom_jobs.faults import Fault, Faults
from vtp.local.custom_jobs.store import SCHEMA, JobRecord, Store
from vtp.local.persistent_resources.service import PersistentResources
from vtp.local.runtime import containers, gcs_mount, rules
from vtp.local.runtime import logs as joblogs
from vtp.local.runtime.capacity import Capacity, Needs, cpu_warning
from vtp.local.runtime.cluster import container_environment
from vtp.local.runtime.launch import JobPlan, plan_job
from vtp.local.runtime.packages import missing_archives
from vtp.local.runtime.process import SERVICE_ENV, kill_leftovers
from vtp.local.runtime.records import ProcessRecord, Runtime
from vtp.local.runtime.supervisor import JobRun, Outcome
from vtp.local.runtime.warm import WarmStarter
from vtp.local.service import Service
from vtp.storage import path_under
from vtp.vertex.states import JOB_ENDED

State = aiplatform_v1.JobState
CANCELLED = Outcome(State.JOB_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
MAX_LOG_BYTES = 1 << 20
_log = logging.getLogger(__name__)


class CustomJobs:
    """CustomJobs on this machine, with Vertex's states and failure rules."""

    def __init__(self, root: Service, persistent_resources: PersistentResources) -> None:
        self.root = root
        self.persistent_resources = persistent_resources
        """Where jobs that name a persistent resource run (`jobSpec.persistentResourceId`)."""
        self.config = root.config
        self._db = Database(root.config.state_dir / "state.db", SCHEMA)
        self.store = Store(self._db)
        self.capacity = Capacity(self.config.gpus, self.config.max_replicas)
        self._runs: dict[str, JobRun] = {}
        self._queue: list[str] = []
        self._changed = threading.Condition(threading.RLock())
        self._last_line: dict[str, str] = {}
        """The timestamp of each running job's newest replica log line (`logged`)."""
        self._faults = Faults()
        """Every fault a test asked for, by parent, and the job each went to."""
        self._scheduler = threading.Thread(target=self._schedule, name="scheduler", daemon=True)
        interpreter_bin = str(Path(sys.executable).parent)
        self.warm = WarmStarter(
            self.config.state_dir / "warm",
            {
                **container_environment(os.environ, interpreter_bin, self.config.pass_env),
                SERVICE_ENV: root.service_id,
            },
            enabled=self.config.warm_replicas,
        )
        """The preloaded server warm replicas fork from (JobBook; `runtime/warm.py`)."""

    @property
    def service_id(self) -> str:
        """The service's id, which every replica carries (JobBook)."""
        return self.root.service_id

    @property
    def client_env(self) -> dict[str, str]:
        """What points a replica's clients back at the service (JobBook)."""
        return self.root.client_env

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Recover what a previous run left behind, start scheduling."""
        self._recover()
        self._scheduler.start()

    def close(self) -> None:
        """Stop every replica; running jobs go back to the queue for the next start."""
        with self._changed:
            self._changed.notify_all()
            runs = list(self._runs.values())
        for run in runs:
            run.shutdown()
        for run in runs:
            run.join()
        if self._scheduler.is_alive():
            self._scheduler.join()
        self.warm.close()
        self._db.close()

    # -- the API ------------------------------------------------------------------------------

    def create_custom_job(
        self,
        parent: str,
        job: aiplatform_v1.CustomJob,
        extra_env: Mapping[str, str] | None = None,
        trial_id: str = "",
        listed: bool = True,
    ) -> str:
        """Validate and queue `job` under `parent`; return its resource name.

        `extra_env` is added to every replica's environment, `trial_id` makes the job a tuning
        trial (CLOUD_ML_TRIAL_ID, AIP_* under `<base>/<trial_id>/`), and `listed=False` keeps it
        out of `customJobs.list`, as Vertex does with a tuning job's trials.
        """
        if not job.display_name:
            raise errors.invalid_argument("customJob.displayName is required.")
        self.check_runnable(job.job_spec)
        if job.job_spec.persistent_resource_id:
            self.persistent_resources.asked(parent, job.job_spec)
        now = datetime.now(UTC)
        resource = aiplatform_v1.CustomJob(
            name=f"{parent}/customJobs/{new_id()}",
            display_name=job.display_name,
            job_spec=job.job_spec,
            labels=dict(job.labels),
            state=State.JOB_STATE_QUEUED,
            create_time=now,
            update_time=now,
        )
        if "encryption_spec" in job:
            resource.encryption_spec = job.encryption_spec
        runtime = Runtime(
            trial_id=trial_id,
            extra_env=dict(extra_env or {}),
            listed=listed,
            creator=callers.creator(),
        )
        record = JobRecord(resource, runtime)
        with self._changed:
            kind = "TRIAL" if trial_id else "JOB"
            fault = self._faults.claim(parent, kind, resource.name, listed)
            if fault:
                runtime.fault = fault.runtime
            self.store.insert_job(record)
            self._queue.append(record.id)
            self._changed.notify_all()
        _log.info("job %s (%s): created, queued", record.id, job.display_name)
        return resource.name

    def get_custom_job(self, name: str) -> aiplatform_v1.CustomJob:
        """The job named `name`; raise ApiError NOT_FOUND."""
        return self._record(name).job

    def list_custom_jobs(
        self, parent: str, filter: str = "", page_size: int = 0, page_token: str = ""
    ) -> tuple[list[aiplatform_v1.CustomJob], str]:
        """One page of the listed jobs under `parent` that match `filter`, and the next token."""
        jobs = (r.job for r in self.store.jobs(parent) if r.runtime.listed)
        return matching_page(jobs, filter, page_size, page_token)

    def cancel_custom_job(self, name: str) -> None:
        """Start cancelling the job (CANCELLING, then CANCELLED); raise if it already ended."""
        with self._changed:
            record = self._record(name)
            if record.job.state in JOB_ENDED:
                raise errors.already_ended(record.job.name, record.job.state.name)
            if record.id in self._queue:
                self._queue.remove(record.id)
                self._finish_record(record, CANCELLED)
                return
            self._update(record, State.JOB_STATE_CANCELLING)
            run = self._runs.get(record.id)
        if run:
            run.cancel()

    def delete_custom_job(self, name: str) -> dict:
        """Delete an ended job and its files; return the (done) long-running Operation."""
        record = self._record(name)
        require_ended(record.job, JOB_ENDED)
        self.store.delete_job(record.id)
        # Its replicas wrote there as they liked, to any depth: `remove_tree` never recurses.
        tree_walk.remove_tree(self._job_dir(record), ignore_errors=True)
        return self.root.operations.deleted(record.job.name.split("/customJobs/")[0])

    def preempt_replica(self, name: str, replica: str, grace: float | None = None) -> None:
        """Stop `replica` as a maintenance event or SPOT reclaim would (non-permanent failure)."""
        record = self._record(name)
        run = self._runs.get(record.id)
        if run is None or record.job.state != State.JOB_STATE_RUNNING:
            raise errors.failed_precondition(
                f"{record.job.name} is in state {record.job.state.name}; only a running job "
                "can be preempted."
            )
        run.preempt(replica, self.config.grace_period if grace is None else grace)

    def inject_fault(self, parent: str, fault: Fault) -> None:
        """Give `fault` to a job to come under `parent` (a project and location): the `nth`
        listed job, or tuning trial's job (`faults.py`). Faults asked for in turn go to the jobs
        created in turn."""
        with self._changed:
            self._faults.arm(parent, fault)

    def list_faults(self, parent: str) -> list[Fault]:
        """The faults asked for under `parent`, oldest first, with the job each went to and
        whether it struck there (a test's end reports those that never did)."""
        with self._changed:
            return self._faults.listed(parent)

    def read_logs(
        self, name: str, replica: str = "", offset: int = 0, max_bytes: int = MAX_LOG_BYTES
    ) -> dict:
        """Log text of one replica (or all) from byte `offset`, and where to read on from."""
        record = self._record(name)
        callers.may_read_logs(record.job.name, record.runtime.creator)
        replicas = self._replica_names(record)
        if replica and replica not in replicas:
            known = ", ".join(replicas)
            raise errors.invalid_argument(f"replica {replica!r} is not in this job ({known}).")
        entries = [
            joblogs.read(self._job_dir(record) / "logs" / f"{n}.log", n, offset, max_bytes)
            for n in ([replica] if replica else replicas)
        ]
        return {"name": record.job.name, "jobState": record.job.state.name, "entries": entries}

    def replica_states(self, name: str) -> dict:
        """Each replica's state: RUNNING, EXITED (with its last exit status) or PENDING before
        its first start; and how often it was started."""
        record = self._record(name)
        live = {p.replica for p in self.store.processes() if p.job_id == record.id}
        starts, exits = record.runtime.replica_starts, record.runtime.exit_statuses
        replicas = []
        for replica in self._replica_names(record):
            started = starts.get(replica, 0)
            state = "RUNNING" if replica in live else "EXITED" if started else "PENDING"
            entry = {"replica": replica, "state": state, "starts": started}
            if replica in exits:
                entry["exitStatus"] = exits[replica]
            replicas.append(entry)
        return {"name": record.job.name, "jobState": record.job.state.name, "replicas": replicas}

    def list_log_entries(
        self,
        resource_names: list[str],
        filter: str = "",
        order_by: str = "",
        page_size: int = 0,
        page_token: str = "",
    ) -> tuple[list[dict], str]:
        """Cloud Logging `entries:list` over replica logs: matching entries and the next token."""
        predicate = compile_filter(filter)
        projects = {n.split("/")[1] for n in resource_names if n.startswith("projects/")}
        # Jobs the filter pins down by ID, so a stream-logs poll reads only that job's logs.
        job_ids = re.findall(r'resource\.labels\.job_id\s*=\s*"?([\w-]+)', filter)
        pinned = [self.store.get_job(i) for i in job_ids] if job_ids else self.store.jobs()
        found = []
        readable = [
            r for r in pinned if r is not None and callers.may_read(r.job.name, r.runtime.creator)
        ]
        for record in readable:
            if not projects or record.job.name.split("/")[1] in projects:
                found += [e for e in self._log_entries(record) if predicate(e)]
        descending = order_by.strip().lower().endswith("desc")
        found.sort(key=lambda e: (e["timestamp"], e["insertId"]), reverse=descending)
        return page(found, page_size, page_token, default_size=1000)

    def wait_custom_job(self, name: str, timeout: float | None = None) -> aiplatform_v1.CustomJob:
        """Block until the job reaches a terminal state (or `timeout` seconds); return it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while (job := self.get_custom_job(name)).state not in JOB_ENDED:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._changed.wait(left)
        return job

    def watch_custom_job(
        self, name: str, seen: int, timeout: float, logs_after: str | None = None
    ) -> aiplatform_v1.CustomJob:
        """The job as soon as its state is no longer `seen`, or as it is after `timeout` seconds:
        the local `:wait` long poll, so a waiting task hears of a change without polling. With
        `logs_after` (a log entry's timestamp, "" for none), also as soon as one of its replicas
        has logged a line stamped later, so a follower copies each line as it comes."""
        deadline = time.monotonic() + timeout
        job_id = self._record(name).id
        with self._changed:
            while (job := self.get_custom_job(name)).state == seen:
                if logs_after is not None and self._last_line.get(job_id, "") > logs_after:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
        return job

    # -- JobBook: what JobRun threads report --------------------------------------------------

    def set_state(self, job_id: str, state: int) -> None:
        """A job moved on (PENDING, RUNNING); a cancellation already asked for stays."""
        with self._changed:
            record = self._stored(job_id)
            if record.job.state != State.JOB_STATE_CANCELLING:
                self._update(record, state)

    def logged(self, job_id: str, stamp: str) -> None:
        """New replica log lines of a running job, the newest stamped `stamp`: wake followers."""
        with self._changed:
            self._last_line[job_id] = max(stamp, self._last_line.get(job_id, ""))
            self._changed.notify_all()

    def save_history(self, job_id: str, history: rules.History) -> None:
        """Persist a job's retry and restart counters."""
        with self._changed:
            record = self._stored(job_id)
            record.runtime.job_retries = history.job_retries
            record.runtime.worker_restarts = dict(history.worker_restarts)
            self.store.update_job(record)

    def add_process(self, process: ProcessRecord) -> None:
        """Record a replica process group before anything else can go wrong, and count it."""
        self.store.add_process(process)
        with self._changed:
            record = self._stored(process.job_id)
            starts = record.runtime.replica_starts
            starts[process.replica] = starts.get(process.replica, 0) + 1
            self.store.update_job(record)

    def remove_process(self, job_id: str, replica: str, exit_status: int | None) -> None:
        """Forget a reaped replica process group; keep how it exited."""
        self.store.remove_process(job_id, replica)
        if exit_status is not None:
            with self._changed:
                record = self._stored(job_id)
                record.runtime.exit_statuses[replica] = exit_status
                self.store.update_job(record)

    def fault_struck(self, job_id: str) -> None:
        """The fault a job was given happened to it (its replica logged a line, then exited)."""
        with self._changed:
            self._faults.struck(self._stored(job_id).job.name)

    def finish(self, job_id: str, outcome: Outcome) -> None:
        """A JobRun ended: free its resources and record the outcome."""
        with self._changed:
            run = self._runs.pop(job_id)
            self._last_line.pop(job_id, None)
            self.capacity.release(run.gpus)
            record = self._stored(job_id)
            self.persistent_resources.release(record.job.name)
            if outcome.state is None:  # the service is stopping: run it again next time
                self._update(record, State.JOB_STATE_QUEUED)
            else:
                self._finish_record(record, outcome)

    # -- scheduling and recovery --------------------------------------------------------------

    def _schedule(self) -> None:
        while not self.root.closing.is_set():
            with self._changed:
                self._start_queued()
                self._changed.wait(self.config.poll_interval)

    def _start_queued(self) -> None:
        # Strict FIFO: a job that does not fit yet holds back the ones behind it, as a quota would.
        # A job on a persistent resource waits for that resource's replicas, holding back no one.
        for job_id in list(self._queue):
            if self.root.closing.is_set():
                return
            record = self._stored(job_id)
            held = self._claim_resource(record)
            if held is None:
                continue
            plan = self._plan(record.job.job_spec)
            on_cpu = self._on_cpu(plan)
            gpus = self.capacity.allocate(Needs.of(plan, on_cpu))
            if gpus is None:
                if held:
                    self.persistent_resources.release(record.job.name)
                return
            self._queue.remove(job_id)
            if not record.runtime.started_at:
                record.runtime.started_at = time.time()
                self.store.update_job(record)
            run = JobRun(record.job, record.runtime, plan, gpus, self.config, self)
            if on_cpu:
                run.warn(cpu_warning(record.job.job_spec, self.capacity.gpu_count))
            self._runs[record.id] = run
            run.start()

    def _claim_resource(self, record: JobRecord) -> bool | None:
        """Hold the replicas of the persistent resource the queued job names: True when held,
        False when it names none, None when it must wait (the resource is busy) or cannot run
        (the resource is gone or unusable: the job fails, saying why)."""
        spec = record.job.job_spec
        if not spec.persistent_resource_id:
            return False
        parent = record.job.name.rsplit("/customJobs/", 1)[0]
        try:
            if self.persistent_resources.claim(parent, spec, record.job.name):
                return True
        except errors.ApiError as exc:
            self._queue.remove(record.id)
            self._finish_record(record, Outcome(State.JOB_STATE_FAILED, exc.code, exc.message))
        return None

    def _recover(self) -> None:
        """Kill replicas a crashed service left running; settle every job it left unfinished."""
        for process in self.store.processes():
            kill_leftovers(process.pid, process.token)
            self.store.remove_process(process.job_id, process.replica)
        with self._changed:
            for record in list(self.store.jobs()):
                self._recover_job(record)

    def _recover_job(self, record: JobRecord) -> None:
        """Settle one job a previous service left unfinished: run it again (queued, or
        interrupted with a restart left) when the config resumes, else cancel it saying why.
        Either way, one log line names the job and what became of it."""
        state = record.job.state
        unfinished = (State.JOB_STATE_QUEUED, State.JOB_STATE_PENDING, State.JOB_STATE_RUNNING)
        what = f"CustomJob {record.job.name} ({record.job.display_name})"
        if state == State.JOB_STATE_CANCELLING:
            self._finish_record(record, CANCELLED)
        elif state in unfinished and not self.config.resume_unfinished:
            message = not_resumed_message("CustomJob")
            cancelled = Outcome(State.JOB_STATE_CANCELLED, errors.CANCELLED, message)
            self._finish_record(record, cancelled)
            left = State(state).name.removeprefix("JOB_STATE_")
            _log.info("not restored: %s, left %s: cancelled", what, left)
        elif state == State.JOB_STATE_QUEUED:
            self._queue.append(record.id)
            _log.info("restored: %s, queued: starts once its replicas fit", what)
        elif state in unfinished:
            scheduling = record.job.job_spec.scheduling
            policy = rules.Policy(
                scheduling.restart_job_on_worker_restart, scheduling.disable_retries
            )
            if rules.may_restart_after_crash(record.runtime.internal_restarts, policy):
                record.runtime.internal_restarts += 1
                self._update(record, State.JOB_STATE_QUEUED)
                self._queue.append(record.id)
                _log.info("restored: %s, running when the service stopped: queued again", what)
            else:
                failed = Outcome(
                    State.JOB_STATE_FAILED, errors.INTERNAL, rules.INTERNAL_ERROR_MESSAGE
                )
                self._finish_record(record, failed)
                _log.info("not restored: %s, no restart left: failed", what)

    # -- helpers ------------------------------------------------------------------------------

    def check_runnable(self, spec: aiplatform_v1.CustomJobSpec) -> None:
        """Refuse, naming the field, a spec this machine could never run: package and output
        URIs outside the storage root or missing, an image without a command, a job too big;
        and, asked by a workload, one with a pool that would run on the host (`callers.py`)."""
        plan = self._plan(spec)
        for pool in plan.pools:
            if not pool.image:
                callers.refuse_host(
                    f"customJob.jobSpec.workerPoolSpecs[{pool.index}]",
                    f"its replicas would be host processes ({_on_host(spec, pool.index)})",
                )
        base = spec.base_output_directory.output_uri_prefix
        if base:
            try:
                path_under(self.config.storage_root, base)
            except ValueError as exc:
                raise errors.invalid_argument(
                    f"customJob.jobSpec.baseOutputDirectory.outputUriPrefix: {exc}."
                ) from None
            self.root.bucket_for_writing(
                base, "customJob.jobSpec.baseOutputDirectory.outputUriPrefix"
            )
        for pool in plan.pools:
            field = f"customJob.jobSpec.workerPoolSpecs[{pool.index}].pythonPackageSpec.packageUris"
            try:
                missing = missing_archives(pool.package_uris, self.config.storage_root)
            except ValueError as exc:
                raise errors.invalid_argument(f"{field}: {exc}.") from None
            if missing:
                raise errors.invalid_argument(
                    f"{field}: {', '.join(missing)} not found under the local Cloud Storage "
                    f"root {self.config.storage_root}."
                )
        if gcs_mount.problem() and gcs_mount.names_fuse_paths(_texts(spec)):
            raise errors.failed_precondition(
                f"customJob.jobSpec names /gcs/ paths, which replicas cannot have here: "
                f"{gcs_mount.problem()}."
            )
        reason = self.capacity.never_fits(Needs.of(plan, self._on_cpu(plan)))
        if reason:
            raise errors.failed_precondition(f"customJob.jobSpec.workerPoolSpecs: {reason}.")
        for pool in plan.pools:
            engine = self.config.container_engine
            problem = pool.image and containers.image_problem(engine, pool.image, os.environ)
            if problem:
                field = f"customJob.jobSpec.workerPoolSpecs[{pool.index}].containerSpec.imageUri"
                raise errors.failed_precondition(f"{field}: {problem}.")

    def _on_cpu(self, plan: JobPlan) -> bool:
        """Whether the job runs on CPU: it asks for more GPUs than the machine has, and the
        service is not strict about accelerators (`capacity.py`)."""
        return not self.config.strict_accelerators and self.capacity.lacks_gpus(Needs.of(plan))

    def _plan(self, spec: aiplatform_v1.CustomJobSpec) -> JobPlan:
        return plan_job(spec, self.config.project_images, bool(self.config.container_engine))

    def _replica_names(self, record: JobRecord) -> list[str]:
        return [n for p in self._plan(record.job.job_spec).pools for n in p.replicas]

    def _job_dir(self, record: JobRecord) -> Path:
        return self.config.state_dir / "jobs" / record.id

    def _log_entries(self, record: JobRecord) -> list[dict]:
        found = []
        for replica in self._replica_names(record):
            path = self._job_dir(record) / "logs" / f"{replica}.log"
            if record.id not in self._runs:  # no supervisor indexes it any more
                joblogs.index_lines(path, final=True)
            found += joblogs.entries(path, record.job.name, replica)
        return found

    def _record(self, name: str) -> JobRecord:
        return find(name, "customJobs", "CustomJob", self.store.get_job, lambda r: r.job.name)

    def _stored(self, job_id: str) -> JobRecord:
        """A job the service itself is running or queued (it exists, unless deleted meanwhile:
        a KeyError then reaches the caller's thread, as any bug would)."""
        record = self.store.get_job(job_id)
        if record is None:
            raise KeyError(f"job {job_id} is not in the store")
        return record

    def _update(self, record: JobRecord, state: int) -> None:
        now = datetime.now(UTC)
        record.job.state = State(state)
        set_times(record.job, now, "update_time")
        if state == State.JOB_STATE_RUNNING and not record.job.start_time:
            set_times(record.job, now, "start_time")
        if state in JOB_ENDED:
            set_times(record.job, now, "end_time")
        self.store.update_job(record)
        self._changed.notify_all()
        _log.info("job %s: %s", record.id, State(state).name)

    def _finish_record(self, record: JobRecord, outcome: Outcome) -> None:
        if outcome.error_code:
            record.job.error = status_pb2.Status(code=outcome.error_code, message=outcome.message)
        assert outcome.state is not None, "an outcome that ends the job names its state"
        self._update(record, outcome.state)


def _texts(spec: aiplatform_v1.CustomJobSpec) -> list[str]:
    """Every command, arg and env value of a job's pools."""
    found: list[str] = []
    for pool in spec.worker_pool_specs:
        for run in (pool.container_spec, pool.python_package_spec):
            found += [*getattr(run, "command", []), *run.args, *(e.value for e in run.env)]
    return found


def _on_host(spec: aiplatform_v1.CustomJobSpec, index: int) -> str:
    """Why pool `index` of `spec` runs on the host: what kind of pool it is."""
    if "python_package_spec" in spec.worker_pool_specs[index]:
        return "a pythonPackageSpec runs on this machine's interpreter"
    return "this project's image, and any image without a container engine, runs on this machine"
