"""The PipelineJob `vtp run` creates, and the calls that create, read and cancel it.

The request is what the aiplatform SDK's `PipelineJob(template_path=..., parameter_values=...,
enable_caching=...)` sends for the same compiled spec: the spec, the typed parameter values, the
pipeline root (`gs://vtp-local/pipeline-root`, under the local Cloud Storage root) and, when
caching is forced on or off, every task's `cachingOptions.enableCache` set by the SDK's own
function (as `vtp submit --enable-caching/--no-enable-caching` sets it).

With an experiment, the run joins it as `PipelineJob.submit(experiment=...)` joins one: the
experiment's context (`system.Experiment`) is read, or created as `aiplatform.Experiment.create`
creates it, before the job is; then the job's run context (`jobDetail.pipelineRunContext`)
becomes its child, so `aiplatform.get_experiment_df` lists the run with its parameters and
metrics.

The calls go over REST, through the aiplatform PipelineServiceClient, rather than to the
service's Python objects: a run then takes one path whether the service is `vtp run`'s own or a
`vtp local serve`'s, and what `vtp run` reports is what the console, gcloud and the SDK see. The
run's log is the service's local `:logs` extension of pipelineJobs.
"""

import copy
import functools
import re
from datetime import datetime
from typing import Any

from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google.oauth2.credentials import Credentials

from vtp.vertex.pipeline_job import LOCAL_PIPELINE_ROOT

PARENT = "projects/local/locations/us-central1"
"""Where local runs are created (the project and region a local run fills in)."""
METADATA_STORE = f"{PARENT}/metadataStores/default"
EXPERIMENT_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,127}")


class ExperimentError(ValueError):
    """An experiment a run cannot join: a bad name, or a context of another kind."""


def check_experiment(name: str) -> None:
    """Raise ExperimentError unless `name` can name an experiment (a context ID)."""
    if not EXPERIMENT_ID.fullmatch(name):
        raise ExperimentError(
            f"{name!r} cannot name an experiment: use 1 to 128 characters of [a-z0-9-], "
            "starting with a letter or digit"
        )


def request(
    spec: dict[str, Any], arguments: dict[str, Any], cache: bool | None = None
) -> aiplatform_v1.PipelineJob:
    """The PipelineJob for `spec` run with `arguments` (typed values); `cache` True or False
    sets every task's caching, None keeps what the spec says."""
    spec = copy.deepcopy(spec)
    if cache is not None:
        set_caching(spec, cache)
    runtime = aiplatform_v1.PipelineJob.RuntimeConfig(
        gcs_output_directory=LOCAL_PIPELINE_ROOT, parameter_values=arguments
    )
    return aiplatform_v1.PipelineJob(
        display_name=spec["pipelineInfo"]["name"], pipeline_spec=spec, runtime_config=runtime
    )


def set_caching(spec: dict[str, Any], enabled: bool) -> None:
    """Set `cachingOptions.enableCache` on every task of `spec`, in place, with the function
    the SDK's `PipelineJob(enable_caching=...)` applies."""
    from google.cloud.aiplatform.pipeline_jobs import _set_enable_caching_value

    _set_enable_caching_value(spec, enabled)


def job_id(pipeline_name: str, now: datetime | None = None) -> str:
    """`<pipeline name>-<YYYYmmddHHMMSS>`, the ID `aiplatform.PipelineJob` gives a job."""
    name = re.sub("[^-0-9a-z]+", "-", pipeline_name.lower()).strip("-")
    if not name[:1].isalpha():
        name = f"run-{name}".rstrip("-")
    return f"{name[:100]}-{(now or datetime.now()).strftime('%Y%m%d%H%M%S')}"


class RunClient:
    """The pipelineJobs methods of the local service at `url`, with its `token`."""

    def __init__(self, url: str, token: str) -> None:
        import requests

        self.url = url.rstrip("/")
        self.client = aiplatform_v1.PipelineServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=self.url),
            credentials=Credentials(token),
        )
        self._token = token
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        # The local service, never through a proxy: nor read the environment's proxy settings
        # at every request (each read walks the whole environment).
        self.session.trust_env = False
        self.last_state = aiplatform_v1.PipelineState.PIPELINE_STATE_UNSPECIFIED
        """The run's state in the last `logs` answer."""

    @functools.cached_property
    def metadata(self) -> "aiplatform_v1.MetadataServiceClient":  # (a hint that imports none)
        """The service's MetadataServiceClient (made when a run joins an experiment)."""
        return aiplatform_v1.MetadataServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=self.url),
            credentials=Credentials(self._token),
        )

    def experiment(self, name: str) -> aiplatform_v1.Context:
        """The experiment `name`'s context, created as `aiplatform.Experiment.create` creates
        it when there is none; ExperimentError when the name is another kind of context's."""
        from google.api_core.exceptions import AlreadyExists, NotFound
        from google.cloud.aiplatform.metadata import constants

        check_experiment(name)
        context_name = f"{METADATA_STORE}/contexts/{name}"
        try:
            found = self.metadata.get_context(name=context_name)
        except NotFound:
            context = aiplatform_v1.Context(
                display_name=name,
                schema_title=constants.SYSTEM_EXPERIMENT,
                schema_version=constants.SCHEMA_VERSIONS[constants.SYSTEM_EXPERIMENT],
                metadata=constants.EXPERIMENT_METADATA,
            )
            try:
                return self.metadata.create_context(
                    parent=METADATA_STORE, context=context, context_id=name
                )
            except AlreadyExists:  # another run made it meanwhile
                found = self.metadata.get_context(name=context_name)
        if found.schema_title != constants.SYSTEM_EXPERIMENT:
            raise ExperimentError(f"{name!r} is a {found.schema_title} context, not an experiment")
        return found

    def join(self, experiment: aiplatform_v1.Context, job: aiplatform_v1.PipelineJob) -> None:
        """Make the run context of `job` a child of `experiment`'s, as the SDK does."""
        run_context = job.job_detail.pipeline_run_context.name
        self.metadata.add_context_children(context=experiment.name, child_contexts=[run_context])

    def create(self, job: aiplatform_v1.PipelineJob) -> aiplatform_v1.PipelineJob:
        """Create `job` under PARENT with an ID as the SDK makes one (`job_id`); the created
        job (its name, QUEUED)."""
        from vtp.vertex.pipeline_job import create_with_free_id

        return create_with_free_id(
            lambda wanted: self.client.create_pipeline_job(
                parent=PARENT, pipeline_job=job, pipeline_job_id=wanted
            ),
            job_id(job.display_name),
        )

    def get(self, name: str) -> aiplatform_v1.PipelineJob:
        """The job `name` now, its tasks in `job_detail.task_details`."""
        return self.client.get_pipeline_job(name=name)

    def cancel(self, name: str) -> None:
        """Ask the service to cancel the job (it then stops what its tasks started)."""
        self.client.cancel_pipeline_job(name=name)

    def display_names(self, names: list[str]) -> dict[str, str]:
        """The display name of each resource of `names` this service has (any kind: a GET of
        `/v1/NAME`); those it cannot read are left out."""
        found = {}
        for name in dict.fromkeys(names):
            try:
                answer = self.session.get(f"{self.url}/v1/{name}", timeout=30)
                display = answer.json().get("displayName", "") if answer.ok else ""
            except (OSError, ValueError):
                continue
            if display:
                found[name] = str(display)
        return found

    def logs(self, name: str, offset: int, wait: float = 0.0) -> tuple[str, int]:
        """The run's log text from byte `offset`, and the offset to read on from; with `wait`,
        once there is some or the run has ended, or after `wait` seconds (the `:logs` long
        poll). The run's state as of before the text was read is `last_state`."""
        params: dict[str, Any] = {"offset": offset}
        if wait:
            params["timeout"] = f"{wait:.3f}s"
        answer = self.session.get(f"{self.url}/v1/{name}:logs", params=params, timeout=30 + wait)
        answer.raise_for_status()
        body = answer.json()
        states: dict[str, aiplatform_v1.PipelineState] = dict(
            aiplatform_v1.PipelineState.__members__
        )
        self.last_state = states.get(body.get("pipelineState", ""), self.last_state)
        return body.get("text", ""), int(body.get("nextOffset", offset))
