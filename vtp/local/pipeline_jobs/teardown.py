"""What a cancelled run leaves running, stopped: the jobs its tasks started, the models they
deployed.

As Vertex does, the CustomJobs and HyperparameterTuningJobs the run's tasks recorded in their
`gcp_resources` outputs are cancelled (a task cancels its own job on SIGTERM; this also covers one
killed after the grace period, or signalled while it was still submitting). Unlike Vertex, the
models the run deployed are undeployed too: on this machine a deployed model is a serving
process, which nobody would otherwise stop. "Deployed by the run" means deployed to an endpoint
its tasks recorded (`VertexEndpoint`, or a deploy `VertexLro` under it) since the run was created.

Each thing stopped is one line appended to the run's log, starting with `NOTE`, so whoever
follows the log (`vtp run`, the console) sees what went with the run.
"""

import json
import logging
from datetime import datetime
from pathlib import Path

from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1 import JobState

from vtp.local.base import errors
from vtp.local.base.names import resource_id
from vtp.local.custom_jobs.service import CustomJobs
from vtp.local.endpoints.service import Endpoints
from vtp.local.pipeline_jobs.resource import task_jobs, task_resources
from vtp.local.tuning.service import Tuner

NOTE = "[local service] "
"""How the lines the service adds to a run's log begin (after the worker has exited)."""
_ENDPOINT_TYPES = ("VertexEndpoint", "VertexLro")
_CANCELLED = (JobState.JOB_STATE_CANCELLING, JobState.JOB_STATE_CANCELLED)
_log = logging.getLogger(__name__)


class Teardown:
    """Stops what runs left behind, through the services that run it."""

    def __init__(self, jobs: CustomJobs, tuning: Tuner, endpoints: Endpoints) -> None:
        self.jobs, self.tuning, self.endpoints = jobs, tuning, endpoints

    def stop_all(self, job: aiplatform_v1.PipelineJob, run_root: Path, run_log: Path) -> None:
        """Cancel the jobs and undeploy the models the run `job` (outputs under `run_root`)
        started, each noted in `run_log`."""
        notes = [*self._cancel_jobs(run_root), *self._undeploy(job, run_root)]
        for note in notes:
            _log.info("pipeline job %s: %s", job.name.rsplit("/", 1)[-1], note)
        if notes and run_log.parent.is_dir():
            with open(run_log, "a") as log:
                log.writelines(f"{NOTE}{note}\n" for note in notes)

    def _cancel_jobs(self, run_root: Path) -> list[str]:
        """Cancel the run's jobs still running; note every one that ended cancelled, whether
        this or its own task (on SIGTERM) cancelled it."""
        notes = []
        for name in task_jobs(run_root):
            tuning = bool(resource_id(name, "hyperparameterTuningJobs"))
            kind = "HyperparameterTuningJob" if tuning else "CustomJob"
            cancel = self.tuning.cancel if tuning else self.jobs.cancel_custom_job
            read = self.tuning.get if tuning else self.jobs.get_custom_job
            try:
                cancel(name)
            except errors.ApiError as exc:  # it ended already, or is gone
                _log.debug("cancel %s: %s", name, exc.message)
            try:
                state = read(name).state
            except errors.ApiError:
                continue
            if state in _CANCELLED:
                notes.append(f"cancelled {kind} {name}")
        return notes

    def _undeploy(self, job: aiplatform_v1.PipelineJob, run_root: Path) -> list[str]:
        since = _time(job, "create_time")
        notes = []
        for endpoint_name in _task_endpoints(run_root):
            try:
                endpoint = self.endpoints.get(endpoint_name)
            except errors.ApiError:
                continue
            for deployed in endpoint.deployed_models:
                if _time(deployed, "create_time") < since:
                    continue  # deployed before this run: not the run's
                body = json.dumps({"deployedModelId": deployed.id}).encode()
                try:
                    self.endpoints.undeploy(endpoint.name, body)
                except errors.ApiError as exc:
                    _log.debug("undeploy %s from %s: %s", deployed.id, endpoint.name, exc.message)
                    continue
                model = f"{deployed.model} ({deployed.id})"
                notes.append(f"undeployed model {model} from {endpoint.name}")
        return notes


def _task_endpoints(run_root: Path) -> list[str]:
    """The endpoints the run's tasks recorded in their gcp_resources, by name, once each."""
    found: list[str] = []
    for kind, name in task_resources(run_root):
        name = name.split("/operations/", 1)[0]
        if kind in _ENDPOINT_TYPES and "/endpoints/" in name and name not in found:
            found.append(name)
    return found


def _time(message: object, field: str) -> float:
    """A Timestamp field in seconds since the epoch; 0 when unset."""
    value = getattr(message, field, None)
    return value.timestamp() if isinstance(value, datetime) else 0.0
