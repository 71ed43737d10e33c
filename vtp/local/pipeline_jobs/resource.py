"""A PipelineJob resource as the service creates and returns it, and the jobs its tasks started."""

import json
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

from google.cloud import aiplatform_v1

from vtp.engine import output_paths, tree_walk
from vtp.local.base import stored_files
from vtp.local.base.names import LOCAL_PROJECT_NUMBER
from vtp.local.base.resources import clear_output_only, set_times

DEFAULT_SERVICE_ACCOUNT = f"{LOCAL_PROJECT_NUMBER}-compute@developer.gserviceaccount.com"
"""Who a run acts as when its request names no one: as on Vertex, the project's Compute Engine
default service account, written into the job (locally, every run acts as the user)."""

State = aiplatform_v1.PipelineState
_log = logging.getLogger(__name__)
_OUTPUT_ONLY = (
    *("name", "state", "create_time", "start_time", "end_time", "update_time", "job_detail"),
    *("error", "schedule_name", "template_metadata"),
)
_CANCELLABLE = ("CustomJob", "HyperparameterTuningJob")
MAX_RESOURCES_BYTES = 1 << 20
"""The largest gcp_resources output read (a task's few resource names)."""


def task_resources(run_root: Path) -> list[tuple[str, str]]:
    """(type, resource name) of everything the tasks of a run recorded in their gcp_resources
    outputs (`CustomJob`, `VertexEndpoint`, ...), in file order; a name is its URI's part after
    `/v1/`."""
    found = []
    for path in _resource_files(run_root):
        try:
            text = stored_files.read_text(run_root, path, MAX_RESOURCES_BYTES, str(path))
            resources = json.loads(text).get("resources", [])
        except (ValueError, AttributeError, RecursionError):  # StoredFileError included
            continue
        for resource in resources:
            if isinstance(resource, dict):
                name = str(resource.get("resourceUri", "")).partition("/v1/")[2]
                found.append((str(resource.get("resourceType", "")), name))
    return found


def _resource_files(run_root: Path) -> list[Path]:
    """Every `gcp_resources` file under `run_root`, sorted. The tasks wrote that tree (it is in
    the storage root) and this runs at start for a run the last service left in flight, so the
    walk is iterative and bounded as a task's outputs are (`output_paths`): a tree a task left
    thousands of folders deep, or with millions of files, ends the walk, not the start."""
    walk = tree_walk.Walk(run_root, output_paths.MAX_DEPTH + 1, output_paths.MAX_ENTRIES)
    found = []
    try:
        for entry in walk:
            if not entry.is_dir and os.path.basename(entry.path) == "gcp_resources":
                found.append(Path(entry.path))
    except tree_walk.TooManyEntries as exc:
        _log.warning("looking for the jobs a run's tasks started: %s; the rest is not read", exc)
    return sorted(found)


def task_jobs(run_root: Path) -> list[str]:
    """Names of the cancellable jobs the tasks of a run recorded in their gcp_resources outputs."""
    return [name for kind, name in task_resources(run_root) if kind in _CANCELLABLE and name]


def created_job(
    job: aiplatform_v1.PipelineJob, name: str, root: str, schedule: str
) -> aiplatform_v1.PipelineJob:
    """`job` as created: output-only fields dropped, then named, QUEUED and timestamped."""
    created = aiplatform_v1.PipelineJob(job)
    clear_output_only(created, _OUTPUT_ONLY)
    now = datetime.now(UTC)
    created.name, created.schedule_name = name, schedule
    created.state = State(State.PIPELINE_STATE_QUEUED)
    set_times(created, now, "create_time", "update_time")
    created.runtime_config.gcs_output_directory = root
    created.service_account = created.service_account or DEFAULT_SERVICE_ACCOUNT
    return created
