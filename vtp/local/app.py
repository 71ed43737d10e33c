"""The composition root: one local Vertex service, put together, started, served and closed.

`App(config)` does, in this order:

1. takes the state directory (`StateDir`: the lock first, then the token), so a second service
   on the same directory is refused before it reads or writes anything;
2. binds the front ends (`FrontEnds`: HTTP, gRPC, TLS) over one empty `Router`, so the ports,
   and with them the service's addresses, are known;
3. builds the root (`Service`) and every resource service in dependency order, each given what
   it needs in its constructor: persistent resources; custom jobs (some run on those);
   tuning (its trials are custom jobs); models; ML
   Metadata; TensorBoard; training pipelines (a custom job, then a model); endpoints (deploy
   models); pipeline jobs
   (cancel the custom and tuning jobs their tasks started, undeploy the models they deployed;
   record their runs in ML Metadata);
   schedules (create pipeline jobs);
4. adds every resource's routes, and the operations and health routes, to the router.

`start()` starts the root, then each resource in that order (each recovers what a previous
service left); `close()` closes them in reverse, the root last. `running(config)` does all of it
and serves in a background thread:

    with running(ServiceConfig(state_dir, port=0)) as served:
        served.url, served.token, served.resources.custom_jobs
"""

import json
import logging
from dataclasses import dataclass

from vtp import containers, private_files
from vtp.local.base.config import ServiceConfig
from vtp.local.base.routing import OPERATIONS_PARENT, Router, operation_routes
from vtp.local.base.state_dir import StateDir
from vtp.local.batch_prediction import routes as batch_prediction_routes
from vtp.local.batch_prediction.service import BatchPredictionJobs
from vtp.local.custom_jobs import routes as custom_job_routes
from vtp.local.custom_jobs.service import CustomJobs
from vtp.local.datasets import routes as dataset_routes
from vtp.local.datasets.service import Datasets
from vtp.local.endpoints import routes as endpoint_routes
from vtp.local.endpoints.service import Endpoints
from vtp.local.metadata import routes as metadata_routes
from vtp.local.metadata.service import Metadata
from vtp.local.models import routes as model_routes
from vtp.local.models.service import ModelRegistry
from vtp.local.persistent_resources import routes as persistent_resource_routes
from vtp.local.persistent_resources.service import PersistentResources
from vtp.local.pipeline_jobs import routes as pipeline_job_routes
from vtp.local.pipeline_jobs.service import PipelineJobs
from vtp.local.pipeline_jobs.standby import Standby
from vtp.local.projects import routes as project_routes
from vtp.local.schedules import routes as schedule_routes
from vtp.local.schedules.service import Schedules
from vtp.local.server import FrontEnds
from vtp.local.service import Part, Service
from vtp.local.tensorboards import routes as tensorboard_routes
from vtp.local.tensorboards.service import Tensorboards
from vtp.local.training_pipelines import routes as training_pipeline_routes
from vtp.local.training_pipelines.service import TrainingPipelines
from vtp.local.tuning import routes as tuning_routes
from vtp.local.tuning.service import Tuner
from vtp.local.vizier import routes as vizier_routes
from vtp.local.vizier.service import Vizier
from vtp.vertex import local_auth

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Resources:
    """Every resource service, in the order they are built and started."""

    persistent_resources: PersistentResources
    custom_jobs: CustomJobs
    tuning: Tuner
    models: ModelRegistry
    metadata: Metadata
    tensorboards: Tensorboards
    datasets: Datasets
    training_pipelines: TrainingPipelines
    endpoints: Endpoints
    pipeline_jobs: PipelineJobs
    schedules: Schedules
    vizier: Vizier
    batch_prediction: BatchPredictionJobs

    def parts(self) -> list[Part]:
        """The services in start order."""
        return [
            self.persistent_resources,
            self.custom_jobs,
            self.tuning,
            self.models,
            self.metadata,
            self.tensorboards,
            self.datasets,
            self.training_pipelines,
            self.endpoints,
            self.pipeline_jobs,
            self.schedules,
            self.vizier,
            self.batch_prediction,
        ]


def build_resources(root: Service, standby: Standby | None = None) -> Resources:
    """Every resource service over `root`, each given the services it uses (pipeline jobs the
    `standby` worker spawned for their runs, if any)."""
    persistent_resources = PersistentResources(root)
    custom_jobs = CustomJobs(root, persistent_resources)
    tuning = Tuner(root, custom_jobs)
    models = ModelRegistry(root)
    metadata = Metadata(root)
    tensorboards = Tensorboards(root)
    datasets = Datasets(root)
    training = TrainingPipelines(root, custom_jobs, models, datasets)
    endpoints = Endpoints(root, models)
    pipeline_jobs = PipelineJobs(root, custom_jobs, tuning, endpoints, metadata, standby)
    schedules = Schedules(root, pipeline_jobs)
    vizier = Vizier(root)
    batch_prediction = BatchPredictionJobs(root, models)
    return Resources(
        persistent_resources,
        custom_jobs,
        tuning,
        models,
        metadata,
        tensorboards,
        datasets,
        training,
        endpoints,
        pipeline_jobs,
        schedules,
        vizier,
        batch_prediction,
    )


def add_routes(router: Router, root: Service, resources: Resources) -> None:
    """Every route the service answers: each resource's, operations, health."""
    operation_routes(router, OPERATIONS_PARENT, root.operations.get)
    router.add("GET", "/healthz", lambda _request: json.dumps({"status": "ok"}))
    persistent_resource_routes.add_routes(router, resources.persistent_resources)
    custom_job_routes.add_routes(router, resources.custom_jobs)
    tuning_routes.add_routes(router, resources.tuning)
    model_routes.add_routes(router, resources.models)
    metadata_routes.add_routes(router, resources.metadata)
    tensorboard_routes.add_routes(router, resources.tensorboards)
    project_routes.add_routes(router)
    training_pipeline_routes.add_routes(router, resources.training_pipelines)
    endpoint_routes.add_routes(router, resources.endpoints)
    pipeline_job_routes.add_routes(router, resources.pipeline_jobs)
    schedule_routes.add_routes(router, resources.schedules)
    vizier_routes.add_routes(router, resources.vizier)
    dataset_routes.add_routes(router, resources.datasets)
    batch_prediction_routes.add_routes(router, resources.batch_prediction)


class App:
    """One local Vertex service: bound and built by the constructor, then `start`, `close`."""

    def __init__(self, config: ServiceConfig, standby: Standby | None = None) -> None:
        """`standby`: a pipeline run's worker spawned for this service ahead of it
        (`pipeline_jobs/standby.py`), which the service kills when it closes unless a run took
        it (should this raise, the caller still has it to kill)."""
        self.config = config
        exposed = config.container_engine and containers.storage_exposure(config.storage_root)
        if exposed:
            raise private_files.UnsafePath(f"refusing to start: {exposed}")
        state_dir = StateDir(config.state_dir, config.storage_root)
        try:
            router = Router()
            self.front = FrontEnds(config, state_dir.token, router)
        except BaseException:
            state_dir.release()
            raise
        self.root = Service(config, state_dir, self.front.addresses)
        try:
            self.resources = build_resources(self.root, standby)
        except BaseException:
            self.front.stop()
            self.root.close()
            raise
        add_routes(router, self.root, self.resources)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        return self.root.url

    @property
    def token(self) -> str:
        """The bearer token requests carry."""
        return self.root.token

    def start(self) -> None:
        """Start the root, then every resource in dependency order (each recovers first)."""
        if self.root.config.untrusted_reason:  # one line, before any job can start
            _log.warning("%s", self.root.config.untrusted_reason)
        for part in [self.root, *self.resources.parts()]:
            part.start()

    def close(self) -> None:
        """Close every resource in reverse order, then the root (which releases the lock)."""
        self.root.closing.set()
        for part in reversed(self.resources.parts()):
            try:
                part.close()
            except Exception:  # close the rest whatever one of them does
                _log.exception("closing %s failed", type(part).__name__)
        self.root.close()


class Running:
    """A started service, serving in background threads until `stop()` (or the `with` ends)."""

    def __init__(self, app: App) -> None:
        self.app, self.root, self.resources = app, app.root, app.resources
        self.url, self.api_endpoint, self.token = app.url, app.root.api_endpoint, app.token
        config = app.config
        self.runtime_file = local_auth.publish(
            self.url,
            config.state_dir,
            config.storage_root,
            api_endpoint=self.api_endpoint,
            roots_file=app.front.tls.roots_file,
        )

    def __enter__(self) -> "Running":
        self.app.front.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving, stop every replica (their jobs are queued again), close the state."""
        local_auth.withdraw(self.runtime_file)
        self.app.front.stop()
        self.app.close()


def running(config: ServiceConfig, standby: Standby | None = None) -> Running:
    """Build and start a service for `config` (and `standby`, as `App` takes it); serve it as a
    context manager. A busy port or a state directory in use fails here, before anything
    starts."""
    app = App(config, standby)
    try:
        app.start()
    except BaseException:
        app.front.stop()
        app.close()
        raise
    return Running(app)
