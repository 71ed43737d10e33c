"""Batch prediction jobs: a model's serving container started for the job, fed its instances in
batches, its answers written where Vertex writes them.

As on Vertex:
- `create` checks the request (`spec.py`), that the model exists (a registry model, `@version`
  allowed, or an `unmanagedContainerModel`) and that it can be served here (the deploy checks of
  `endpoints/serving.py`: a command or this project's image, a task `vtp.trainer.serve` may import,
  a prebuilt image's model file); the job starts PENDING.
- The job runs in a thread: RUNNING once its output folder is known
  (`outputInfo.gcsOutputDirectory`); it starts the model's server as a deploy does (own port,
  own secret, its log in `<state-dir>/batch_prediction/<job>/server.log`), waits for its health
  route, then POSTs `{"instances": [...], "parameters": modelParameters}` in batches of
  `manualBatchTuningParameters.batchSize` (default 64). Answers go to predictions_00001.jsonl,
  instances the server refused to errors_00001.jsonl with their status (a batch refused with a
  4xx is sent again one instance at a time, so one malformed instance fails alone).
- It SUCCEEDS with `completionStats` (and `partialFailures` when some instances failed); it FAILS
  when its input cannot be read, its server does not start or dies, or every instance failed.
- `cancel` makes it CANCELLING, then CANCELLED once the batch in flight returns (its server
  stopped); `delete` is refused until it has ended.
- A restarted `vtp local serve` runs unfinished jobs again from the start (their output folder is
  the same); `vtp run`'s service cancels them, saying why.
"""

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vtp.local.base import callers, errors, stored_files
from vtp.local.base.config import not_resumed_message
from vtp.local.base.resources import clear_output_only, new_id, set_times, time_of
from vtp.local.base.routing import parse_message
from vtp.local.base.services import RunningCollection
from vtp.local.base.store import Record, ResourceStore
from vtp.local.batch_prediction import spec
from vtp.local.endpoints import serving
from vtp.local.models.service import ModelRegistry
from vtp.local.service import Service
from vtp.storage import path_under
from vtp.vertex.states import JOB_ENDED

BatchPredictionJob = aiplatform_v1.BatchPredictionJob
State = aiplatform_v1.JobState
OUTPUT_ONLY = (
    *("name", "state", "error", "output_info", "partial_failures", "resources_consumed"),
    *("completion_stats", "create_time", "start_time", "end_time", "update_time"),
    "model_version_id",
)
INVALID_ARGUMENT = 3


class Cancelled(Exception):
    """The job was cancelled, or the service is closing, while it ran."""


class BatchPredictionJobs(RunningCollection[BatchPredictionJob]):
    """Batch prediction jobs of the models in `registry`, each run in a thread of its own."""

    collection, kind = "batchPredictionJobs", "BatchPredictionJob"
    ended = JOB_ENDED

    def __init__(self, root: Service, registry: ModelRegistry) -> None:
        path = root.config.state_dir / "batch_prediction_jobs.db"
        super().__init__(
            ResourceStore(path, "batch_prediction_jobs", BatchPredictionJob), root.operations
        )
        self.root, self.registry = root, registry

    def start(self) -> None:
        """Run again every job an earlier service left unfinished (or cancel it, saying why)."""
        for record in self.store.all():
            if record.resource.state in JOB_ENDED:
                continue
            if self.root.config.resume_unfinished and not record.runtime.get("cancel"):
                self._set_state(record, State.JOB_STATE_PENDING)
                self._workers.start(f"batch-{record.id}", self._run, record.id)
            else:
                message = not_resumed_message("BatchPredictionJob")
                self._end(record, State.JOB_STATE_CANCELLED, errors.CANCELLED, message)

    def create(self, parent: str, body: bytes) -> BatchPredictionJob:
        """Check the job and start it; the resource, PENDING."""
        job = parse_message(BatchPredictionJob, body)
        clear_output_only(job, OUTPUT_ONLY)
        spec.check_job(job)
        job_id = new_id()
        model = self._model(job)
        self._plan(model, job_id)  # refuse now what could not be served
        self.root.bucket_for_writing(
            job.output_config.gcs_destination.output_uri_prefix,
            "batchPredictionJob.outputConfig.gcsDestination.outputUriPrefix",
        )
        job.name = f"{parent}/batchPredictionJobs/{job_id}"
        if job.model:
            job.model_version_id = model.version_id
        job.state = State(State.JOB_STATE_PENDING)
        set_times(job, datetime.now(UTC), "create_time", "update_time")
        record = Record(job, {})
        self.store.insert(record)
        self._workers.start(f"batch-{job_id}", self._run, job_id)
        return job

    def cancel(self, name: str) -> None:
        """Ask the job to stop: CANCELLING now, CANCELLED once its batch in flight returns."""
        self._ask_to_cancel(name, State.JOB_STATE_CANCELLING)

    # -- running ---------------------------------------------------------------------------

    def _run(self, job_id: str) -> None:
        try:
            self._drive(job_id)
        except Cancelled:
            record = self.store.get(job_id)
            if record is not None and record.runtime.get("cancel"):
                self._end(record, State.JOB_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
        except _ServerDied as exc:
            message = f"The model server exited while the job ran. Its last lines:\n{exc}"
            self._end(self._current(job_id), State.JOB_STATE_FAILED, errors.INTERNAL, message)
        except Exception as exc:
            self._end_after_bug(job_id, State.JOB_STATE_FAILED, exc)
            raise

    def _drive(self, job_id: str) -> None:
        record = self._current(job_id)
        job = record.resource
        root = self.root.config.storage_root
        try:
            model = self._model(job)
            plan = self._plan(model, job_id)
            files = spec.input_files(list(job.input_config.gcs_source.uris), root)
        except errors.ApiError as exc:
            self._end(record, State.JOB_STATE_FAILED, exc.code, exc.message)
            return
        except ValueError as exc:
            self._end(record, State.JOB_STATE_FAILED, INVALID_ARGUMENT, f"inputConfig: {exc}.")
            return
        prefix = job.output_config.gcs_destination.output_uri_prefix
        name = model.display_name or job.display_name
        output = spec.output_directory(prefix, name, time_of(job, "create_time"))
        with self._lock:
            record = self._current(job_id)
            record.resource.output_info.gcs_output_directory = output
            set_times(record.resource, datetime.now(UTC), "start_time")
            self._set_state(record, State.JOB_STATE_RUNNING)
        server = self._start_server(plan, job_id)
        try:
            problem = self._wait_ready(server, job_id)
            if problem:
                code = errors.FAILED_PRECONDITION
                self._end(self._current(job_id), State.JOB_STATE_FAILED, code, problem)
                return
            self._predict_all(job_id, server, files, path_under(root, output))
        finally:
            server.stop(self.root.config.grace_period)

    def _predict_all(
        self, job_id: str, server: serving.ModelServer, files: list[Path], out: Path
    ) -> None:
        job = self._current(job_id).resource
        size = spec.batch_size(job)
        parameters = _parameters(job)
        writer = _Writer(out)
        root = self.root.config.storage_root
        try:
            for path in files:
                batch: list[Any] = []
                for instance, problem in spec.instances(root, path):
                    if problem:
                        writer.error(instance, INVALID_ARGUMENT, problem)
                        continue
                    batch.append(instance)
                    if len(batch) == size:
                        self._send(job_id, server, batch, parameters, writer)
                        batch = []
                if batch:
                    self._send(job_id, server, batch, parameters, writer)
        except stored_files.StoredFileError as exc:  # swapped for a FIFO, a link, a huge file
            message = f"inputConfig.gcsSource.uris: {exc}."
            self._end(self._current(job_id), State.JOB_STATE_FAILED, INVALID_ARGUMENT, message)
            return
        finally:
            writer.close()
        self._complete(job_id, writer)

    def _send(
        self,
        job_id: str,
        server: serving.ModelServer,
        batch: list[Any],
        parameters: Any,
        writer: "_Writer",
    ) -> None:
        self._check_going(job_id)
        body: dict[str, Any] = {"instances": batch}
        if parameters is not None:
            body["parameters"] = parameters
        status, answer = server.predict(json.dumps(body).encode())
        if server.process is not None and server.process.poll() is not None:
            raise _ServerDied(server.log_tail())
        predictions = _predictions(answer) if status == 200 else None
        if predictions is not None and len(predictions) == len(batch):
            for instance, prediction in zip(batch, predictions, strict=True):
                writer.prediction(instance, prediction)
            return
        if 400 <= status < 500 and len(batch) > 1:  # one bad instance: the others still count
            for instance in batch:
                self._send(job_id, server, [instance], parameters, writer)
            return
        text = answer.decode(errors="replace")[:1000]
        code = INVALID_ARGUMENT if 400 <= status < 500 else errors.INTERNAL
        if status == 200:
            text = f"{len(batch)} instances, but the answer has no list of as many predictions"
        for instance in batch:
            writer.error(instance, code, f"The model server answered {status}: {text}")

    def _complete(self, job_id: str, writer: "_Writer") -> None:
        with self._lock:
            record = self._current(job_id)
            stats = record.resource.completion_stats
            stats.successful_count, stats.failed_count = writer.succeeded, writer.failed
            if writer.failed and not writer.succeeded:
                message = (
                    f"All {writer.failed} instances failed; see {spec.ERRORS_FILE} in "
                    f"{record.resource.output_info.gcs_output_directory}. The first: "
                    f"{writer.first_error}"
                )
                self._end(record, State.JOB_STATE_FAILED, writer.first_code, message)
                return
            if writer.failed:
                message = f"{writer.failed} instances failed; see {spec.ERRORS_FILE}."
                record.resource.partial_failures = [{"code": writer.first_code, "message": message}]
            self._end(record, State.JOB_STATE_SUCCEEDED)

    def _wait_ready(self, server: serving.ModelServer, job_id: str) -> str:
        """ "" once the server is healthy, else why not; Cancelled when the job stops meanwhile."""
        waited = 0.0
        while True:
            problem = server.wait_ready(timeout=1.0)
            if not problem:
                return ""
            if server.process is None or server.process.poll() is not None:
                return f"The model server did not start: {problem}"
            self._check_going(job_id)
            waited += 1.0
            if waited >= serving.READY_TIMEOUT_SECONDS:
                return f"The model server did not start: {problem}"

    def _check_going(self, job_id: str) -> None:
        """Cancelled when the job was cancelled or the service is closing."""
        if self.root.closing.is_set():
            raise Cancelled
        record = self.store.get(job_id)
        if record is None or record.runtime.get("cancel"):
            raise Cancelled

    def _start_server(self, plan: serving.ServingPlan, job_id: str) -> serving.ModelServer:
        folder = self.root.config.state_dir / "batch_prediction" / job_id
        server = serving.ModelServer(plan, folder / "server.log")
        base = serving.service_serving_environment(self.root.config, self.root.service_id)
        machine = self._current(job_id).resource.dedicated_resources.machine_spec.machine_type
        server.start(server.environment(base, serving.Placement(job_id, job_id, machine)), folder)
        return server

    def _model(self, job: BatchPredictionJob) -> aiplatform_v1.Model:
        if job.model:
            return self.registry.get(job.model)  # NOT_FOUND names it
        unmanaged = job.unmanaged_container_model
        return aiplatform_v1.Model(
            name="unmanagedContainerModel",
            artifact_uri=unmanaged.artifact_uri,
            container_spec=unmanaged.container_spec,
        )

    def _plan(self, model: aiplatform_v1.Model, job_id: str) -> serving.ServingPlan:
        callers.refuse_host("batchPredictionJob", "its model server is a host process")
        config = self.root.config
        return serving.plan_serving(
            model, job_id, job_id, config.project_images, config.storage_root,
            serving.operator_modules(os.environ),
        )  # fmt: skip

    def _current(self, job_id: str) -> Record:
        record = self.store.get(job_id)
        if record is None:
            raise Cancelled  # deleted meanwhile (only ended jobs can be)
        return record


class _ServerDied(Exception):
    """The model server exited while the job ran; the message is its log's last lines."""


class _Writer:
    """predictions_00001.jsonl and errors_00001.jsonl in the output folder, opened on first use."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.succeeded = self.failed = 0
        self.first_code, self.first_error = 0, ""
        self._files: dict[str, IO[str]] = {}

    def prediction(self, instance: Any, prediction: Any) -> None:
        """One line of predictions."""
        self._file(spec.PREDICTIONS_FILE).write(spec.prediction_line(instance, prediction))
        self.succeeded += 1

    def error(self, instance: Any, code: int, message: str) -> None:
        """One line of errors."""
        self._file(spec.ERRORS_FILE).write(spec.error_line(instance, code, message))
        if not self.failed:
            self.first_code, self.first_error = code, message
        self.failed += 1

    def close(self) -> None:
        """Close what was opened."""
        for file in self._files.values():
            file.close()

    def _file(self, name: str) -> IO[str]:
        if name not in self._files:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._files[name] = (self.folder / name).open("w", encoding="utf-8")
        return self._files[name]


def _parameters(job: BatchPredictionJob) -> Any:
    """The job's modelParameters as JSON, or None."""
    message = BatchPredictionJob.pb(job)
    if not message.HasField("model_parameters"):
        return None
    return json_format.MessageToDict(message.model_parameters)


def _predictions(answer: bytes) -> list[Any] | None:
    try:
        predictions = json.loads(answer).get("predictions")
    except (ValueError, AttributeError, RecursionError):
        return None
    return predictions if isinstance(predictions, list) else None
