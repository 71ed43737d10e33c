"""Training pipelines, what the SDK's `CustomTrainingJob`, `CustomContainerTrainingJob` and
`CustomPythonPackageTrainingJob` create: a CustomJob, then the model it describes.

As on Vertex:
- `trainingTaskDefinition` must be the custom task's schema; `trainingTaskInputs` is a
  CustomJobSpec (worker pools with a container or a Python package, `baseOutputDirectory`,
  scheduling). Anything else is refused before anything starts, saying the local service does
  not support it.
- `inputDataConfig` naming a tabular or time-series dataset (CSV in local storage; BigQuery is
  refused naming it) is checked at create; when the job starts, the dataset's rows are split into
  files under `gcsDestination` and every replica gets AIP_DATA_FORMAT and AIP_TRAINING_DATA_URI,
  AIP_VALIDATION_DATA_URI, AIP_TEST_DATA_URI (`datasets/tables.py`).
- The pipeline owns one CustomJob (`trainingTaskMetadata.backingCustomJob`): PENDING until it
  exists, RUNNING while it runs. When it succeeds, `modelToUpload` is registered (a new model, or
  a version of `parentModel`, with `modelId` and the aliases it names) from its `artifactUri`,
  else from `<baseOutputDirectory>/model` (AIP_MODEL_DIR); the pipeline then SUCCEEDS with
  `modelToUpload.name` and `versionId` set. A failed or cancelled job fails or cancels it with
  the job's error.
- `cancel` cancels the job; `delete` is refused until the pipeline has ended.
- A restarted service picks up every pipeline that had not ended (its job is recovered too).
"""

import contextlib
import json
from datetime import UTC, datetime

from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1 import TrainingPipeline
from google.protobuf import json_format, struct_pb2

from vtp.local.base import errors
from vtp.local.base.resources import clear_output_only, new_id, set_times
from vtp.local.base.routing import parse_message
from vtp.local.base.services import RunningCollection
from vtp.local.base.store import Record, ResourceStore
from vtp.local.custom_jobs.service import CustomJobs
from vtp.local.datasets.service import Datasets
from vtp.local.models.service import ModelRegistry
from vtp.local.service import Service
from vtp.vertex.states import JOB_ENDED, PIPELINE_ENDED

State = aiplatform_v1.PipelineState
JobState = aiplatform_v1.JobState
CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"


class TrainingPipelines(RunningCollection[TrainingPipeline]):
    """Training pipelines: each runs a CustomJob of `jobs` on the data of `datasets`, then
    uploads to `registry`."""

    collection, kind = "trainingPipelines", "TrainingPipeline"
    ended = PIPELINE_ENDED

    def __init__(
        self, root: Service, jobs: CustomJobs, registry: ModelRegistry, datasets: Datasets
    ) -> None:
        path = root.config.state_dir / "training_pipelines.db"
        super().__init__(
            ResourceStore(path, "training_pipelines", TrainingPipeline), root.operations
        )
        self.root, self.jobs, self.registry, self.datasets = root, jobs, registry, datasets

    def start(self) -> None:
        """Watch again every pipeline that had not ended when the service stopped."""
        for record in self.store.all():
            if record.resource.state not in PIPELINE_ENDED:
                self._watch(record)

    def create(self, parent: str, body: bytes) -> TrainingPipeline:
        """Check and start a training pipeline; the resource, PENDING."""
        request = parse_message(TrainingPipeline, body)
        spec = _job_spec(request)
        if not request.display_name:
            raise errors.invalid_argument("trainingPipeline.displayName is required.")
        self.jobs.check_runnable(spec)
        if "input_data_config" in request:
            self.datasets.check_training_input(parent, request.input_data_config)
        now = datetime.now(UTC)
        pipeline = TrainingPipeline(request)
        pipeline.name = f"{parent}/trainingPipelines/{new_id()}"
        pipeline.state = State(State.PIPELINE_STATE_PENDING)
        set_times(pipeline, now, "create_time", "update_time")
        clear_output_only(pipeline, ("start_time", "end_time", "error", "training_task_metadata"))
        record = Record(pipeline, {"job": ""})
        self.store.insert(record)
        self._watch(record)
        return pipeline

    def cancel(self, name: str) -> None:
        """Cancel the pipeline's job; the pipeline ends CANCELLED once the job has."""
        record = self._ask_to_cancel(name, State.PIPELINE_STATE_CANCELLING)
        if job := record.runtime.get("job"):
            with contextlib.suppress(errors.ApiError):  # it ended meanwhile: the watcher says how
                self.jobs.cancel_custom_job(job)

    # -- running ---------------------------------------------------------------------------

    def _watch(self, record: Record) -> None:
        self._workers.start(f"training-{record.id}", self._run, record.id)

    def _run(self, pipeline_id: str) -> None:
        try:
            self._drive(pipeline_id)
        except Exception as exc:
            self._end_after_bug(pipeline_id, State.PIPELINE_STATE_FAILED, exc)
            raise

    def _drive(self, pipeline_id: str) -> None:
        record = self.store.get(pipeline_id)
        if record is None:
            return
        job_name = record.runtime.get("job", "")
        if not job_name:
            if record.runtime.get("cancel"):
                self._end(record, State.PIPELINE_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
                return
            job_name = self._start_job(record)
            if not job_name:
                return
        job = self._wait(job_name)
        record = self.store.get(pipeline_id)
        if record is None:
            return
        if job.state == JobState.JOB_STATE_SUCCEEDED:
            self._upload(record)
        elif job.state == JobState.JOB_STATE_CANCELLED:
            self._end(record, State.PIPELINE_STATE_CANCELLED, errors.CANCELLED, "CANCELED")
        else:
            message = job.error.message or f"The CustomJob {job_name} ended {job.state.name}."
            self._end(record, State.PIPELINE_STATE_FAILED, job.error.code or 13, message)

    def _start_job(self, record: Record) -> str:
        pipeline = record.resource
        job = aiplatform_v1.CustomJob(
            display_name=f"{pipeline.display_name}-custom-job",
            job_spec=_job_spec(pipeline),
            labels=dict(pipeline.labels),
        )
        try:
            data_env = {}
            if "input_data_config" in pipeline:
                data_env = self.datasets.export_for_training(
                    record.parent, pipeline.input_data_config
                )
            name = self.jobs.create_custom_job(record.parent, job, extra_env=data_env)
        except errors.ApiError as exc:
            self._end(record, State.PIPELINE_STATE_FAILED, exc.code, exc.message)
            return ""
        with self._lock:
            record.runtime["job"] = name
            metadata = struct_pb2.Value()
            json_format.ParseDict({"backingCustomJob": name}, metadata)
            record.resource.training_task_metadata = metadata
            set_times(record.resource, datetime.now(UTC), "start_time")
            self._set_state(record, State.PIPELINE_STATE_RUNNING)
        return name

    def _wait(self, job_name: str) -> aiplatform_v1.CustomJob:
        while True:
            job = self.jobs.wait_custom_job(job_name, timeout=self.root.config.poll_interval)
            if job.state in JOB_ENDED:
                return job
            if self.root.closing.is_set():
                raise SystemExit  # the service is stopping: the next start resumes

    def _upload(self, record: Record) -> None:
        pipeline = record.resource
        if "model_to_upload" not in pipeline:
            self._end(record, State.PIPELINE_STATE_SUCCEEDED)
            return
        model = aiplatform_v1.Model(pipeline.model_to_upload)
        if not model.artifact_uri:
            base = _job_spec(pipeline).base_output_directory.output_uri_prefix.rstrip("/")
            model.artifact_uri = f"{base}/model"
        request = aiplatform_v1.UploadModelRequest(
            parent=record.parent, model=model, model_id=pipeline.model_id
        )
        if pipeline.parent_model:
            request.parent_model = pipeline.parent_model
        body = aiplatform_v1.UploadModelRequest.to_json(request).encode()
        try:
            operation = self.registry.upload(record.parent, body)
        except errors.ApiError as exc:
            self._end(record, State.PIPELINE_STATE_FAILED, exc.code, f"Model upload: {exc.message}")
            return
        if "error" in operation:
            error = operation["error"]
            self._end(
                record,
                State.PIPELINE_STATE_FAILED,
                error["code"],
                f"Model upload: {error['message']}",
            )
            return
        uploaded = operation["response"]
        model.name = uploaded["model"]
        model.version_id = uploaded.get("modelVersionId", "1")
        pipeline.model_to_upload = model
        self._end(record, State.PIPELINE_STATE_SUCCEEDED)


def _job_spec(pipeline: TrainingPipeline) -> aiplatform_v1.CustomJobSpec:
    """The CustomJobSpec in `trainingTaskInputs`; refusals say what is not supported."""
    if pipeline.training_task_definition != CUSTOM_TASK:
        raise errors.ApiError(
            errors.UNIMPLEMENTED,
            f"trainingTaskDefinition {pipeline.training_task_definition!r} is not supported by "
            f"the local Vertex service; it runs custom training ({CUSTOM_TASK}).",
        )
    inputs = json_format.MessageToDict(TrainingPipeline.pb(pipeline).training_task_inputs)
    if not isinstance(inputs, dict) or not inputs.get(
        "workerPoolSpecs", inputs.get("worker_pool_specs")
    ):
        raise errors.invalid_argument("trainingTaskInputs.workerPoolSpecs is required.")
    try:
        return aiplatform_v1.CustomJobSpec.from_json(json.dumps(inputs))
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise errors.invalid_argument(f"Invalid trainingTaskInputs: {exc}") from None
