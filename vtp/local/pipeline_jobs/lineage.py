"""A local run in ML Metadata, as Vertex Pipelines records one.

At create, two contexts: the pipeline's (`system.Pipeline`, its ID the pipeline's name) and,
its child, the run's (`system.PipelineRun`, its ID and display name the job's ID), which the
job names in `jobDetail.pipelineContext` and `jobDetail.pipelineRunContext`. The run context is
what `PipelineJob.submit(experiment=...)` adds under the experiment's context.

As the run goes, each task of the engine's journal becomes an execution in the run context
(`task_details.execution`: the pipeline itself `system.Run`, named after the job, in the
pipeline's context too, its `input:` metadata the run's parameters; each executor task
`system.ContainerExecution`; other DAGs `system.DAGExecution`), and each artifact a task wrote
an artifact in the run context under the name the engine gave it (a `system.Metrics` one with
the metrics as its metadata), with an OUTPUT event from its task and an INPUT event to each task
that read it. So `aiplatform.get_experiment_df` and `get_pipeline_df` find the run's parameters
and metrics, and an artifact's lineage (`queryArtifactLineageSubgraph`) leads to the tasks and
run that made it.

The service records it, reading the journal as it reads it for `jobDetail.taskDetails`: the
worker and its tasks write nothing to ML Metadata themselves (on Vertex the orchestrator records
it too, not the user's code). Recording is idempotent, so the watcher repeats it while the run
goes and once when it ends; what a record had when last written is kept, to skip the unchanged.
"""

import json
import re
import threading
from pathlib import Path
from typing import Any

from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1 import Event

from vtp.engine import journal
from vtp.local.base import errors
from vtp.local.metadata.service import Metadata
from vtp.local.pipeline_jobs import task_details
from vtp.local.pipeline_jobs.task_details import metadata_store

PIPELINE_SCHEMA, RUN_SCHEMA = "system.Pipeline", "system.PipelineRun"
SCHEMA_VERSION = "0.0.1"
LIVE = aiplatform_v1.Artifact.State(aiplatform_v1.Artifact.State.LIVE)
METRICS_SCHEMAS = frozenset(
    {"system.Metrics", "google.ClassificationMetrics", "google.RegressionMetrics",
     "google.ForecastingMetrics"}
)  # fmt: skip
"""The schemas whose artifacts the SDK reads as a run's metrics."""


class RunLineage:
    """Records pipeline runs into `metadata`."""

    def __init__(self, metadata: Metadata, storage_root: Path) -> None:
        self.metadata, self.storage_root = metadata, storage_root.resolve()
        self._written: dict[str, dict[int, str]] = {}  # job -> task id -> record as written
        self._linked: dict[str, set[str]] = {}  # job -> metrics artifacts linked to its run
        self._lock = threading.Lock()

    def contexts(
        self, job_name: str, pipeline_name: str
    ) -> tuple[aiplatform_v1.Context, aiplatform_v1.Context]:
        """The pipeline's context and the run's (created, the run's under the pipeline's)."""
        store = metadata_store(job_name)
        pipeline = self._put_context(
            f"{store}/contexts/{_context_id(pipeline_name)}", pipeline_name, PIPELINE_SCHEMA
        )
        job_id = job_name.rpartition("/")[2]
        run = self._put_context(
            f"{store}/contexts/{job_id}", job_id, RUN_SCHEMA, metadata={"resourceName": job_name}
        )
        self.metadata.add_context_children(pipeline.name, [run.name])
        return pipeline, self.metadata.get("contexts", run.name)

    def _put_context(
        self, name: str, display_name: str, schema_title: str, **extra: Any
    ) -> aiplatform_v1.Context:
        return self.metadata.put(
            "contexts",
            aiplatform_v1.Context(
                name=name,
                display_name=display_name,
                schema_title=schema_title,
                schema_version=SCHEMA_VERSION,
                **extra,
            ),
        )

    def run_context(self, job_name: str) -> aiplatform_v1.Context | None:
        """The run's context as it is now (its parents: the pipeline, any experiment), if any."""
        name = f"{metadata_store(job_name)}/contexts/{job_name.rpartition('/')[2]}"
        try:
            return self.metadata.get("contexts", name)
        except errors.ApiError:  # deleted by a user: the job still reads
            return None

    def record(self, job_name: str, run_dir: Path, final: bool = False) -> None:
        """Write what the run's journal says that is new; `final` (the run has ended) marks what
        it left unfinished CANCELLED (`journal.read`) and forgets the run afterwards."""
        context = self.run_context(job_name)
        if context is None:
            return
        with self._lock:
            written = self._written.setdefault(job_name, {})
            entries = journal.read(run_dir, over=final)
            for entry in entries:
                text = json.dumps(entry, sort_keys=True, default=str)
                if written.get(entry["id"]) != text:
                    self._task(context.name, job_name, entry)
                    written[entry["id"]] = text
            self._link_metrics(job_name, entries)
            if final:
                self._written.pop(job_name, None)
                self._linked.pop(job_name, None)

    def _link_metrics(self, job_name: str, entries: list[dict[str, Any]]) -> None:
        """The metrics artifacts the run's tasks made, as outputs of the run's `system.Run`
        execution too, as Vertex links them: `get_pipeline_df` reads a run's `metric.*`
        columns from that execution's output artifacts (`get_experiment_df` from the run's
        context, which holds them already)."""
        run = next((e for e in entries if e.get("kind") == "pipeline"), None)
        linked = self._linked.setdefault(job_name, set())
        made = [
            artifact.name
            for entry in entries
            if entry.get("kind") == "executor"
            for artifact in _named(task_details.artifacts(entry.get("artifacts")))
            if artifact.schema_title in METRICS_SCHEMAS and artifact.name not in linked
        ]
        if run is None or not made:
            return
        execution = task_details.execution(run, job_name).name
        have = {e.artifact for e in self.metadata.execution_events(execution)}
        output = Event.Type.OUTPUT
        events = [Event(artifact=name, type_=output) for name in made if name not in have]
        if events:
            self.metadata.add_execution_events(execution, events)
        linked.update(made)

    def _task(self, context: str, job_name: str, entry: dict[str, Any]) -> None:
        execution = self.metadata.put("executions", task_details.execution(entry, job_name))
        outputs = _named(task_details.artifacts(entry.get("artifacts")))
        inputs = _named(task_details.input_artifacts(entry))
        made = [self.metadata.put("artifacts", self._live(a)) for a in outputs]
        read = [self._known(a) for a in inputs]
        self.metadata.add_context_members(context, [a.name for a in made + read], [execution.name])
        if entry.get("kind") == "pipeline":  # where get_pipeline_df finds the pipeline's runs
            pipeline = f"{metadata_store(job_name)}/contexts/{_context_id(entry['name'])}"
            self.metadata.add_context_members(pipeline, [], [execution.name])
        wanted = [(a.name, Event.Type.INPUT) for a in read]
        wanted += [(a.name, Event.Type.OUTPUT) for a in made]
        have = {(e.artifact, e.type_) for e in self.metadata.execution_events(execution.name)}
        events = [
            Event(artifact=name, type_=kind) for name, kind in wanted if (name, kind) not in have
        ]
        if events:
            self.metadata.add_execution_events(execution.name, events)

    def _known(self, artifact: aiplatform_v1.Artifact) -> aiplatform_v1.Artifact:
        """An input artifact as stored; one nothing recorded yet (a pipeline input, an
        importer's) is recorded as it came."""
        try:
            return self.metadata.get("artifacts", artifact.name)
        except errors.ApiError:
            return self.metadata.put("artifacts", self._live(artifact))

    def _live(self, artifact: aiplatform_v1.Artifact) -> aiplatform_v1.Artifact:
        """`artifact` LIVE, a local path under the storage root as its gs:// URI (as Vertex
        holds it; tasks see the path, as through Cloud Storage FUSE)."""
        artifact.state = LIVE
        if artifact.uri.startswith("/"):
            try:
                relative = Path(artifact.uri).resolve().relative_to(self.storage_root)
                artifact.uri = f"gs://{relative.as_posix()}"
            except ValueError:
                pass
        return artifact


def _named(by_name: dict[str, list[aiplatform_v1.Artifact]]) -> list[aiplatform_v1.Artifact]:
    return [a for items in by_name.values() for a in items if a.name]


def _context_id(pipeline_name: str) -> str:
    """A pipeline's name as a context ID ([a-z0-9-], at most 128)."""
    cleaned = re.sub("[^-0-9a-z]+", "-", pipeline_name.lower()).strip("-")
    return cleaned[:128].rstrip("-") or "pipeline"
