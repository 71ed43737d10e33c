"""The `upload_model` component: register an exported model in the Vertex AI Model Registry.

Its `vertex_model` output is the `google.VertexModel` artifact GCPC's `ModelUploadOp` writes, so
GCPC's `ModelDeployOp` (and anything else that takes a VertexModel) accepts it. The body runs in
the project's image; everything it does lives in `vtp.launchers.upload_model`.

The model is served by the project's image too (`python -m vtp.trainer.serve`): it holds the torch
that wrote model.pt2. The default image is a literal, as kfp copies this function's source into
the task, where module names are not defined; it is `images.COMPONENT_IMAGE` exactly (a test
checks), so `vtp compile --image` rewrites it along with the component images.
"""

# mypy: disable-error-code="valid-type"
# (kfp's own annotations, OutputPath(str) and NamedTuple("Outputs", [...]), are calls, not types)

from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp import dsl
from kfp.dsl import Input, Model, Output, OutputPath

from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def upload_model(
    project: str,
    location: str,
    display_name: str,
    model: Input[Model],
    vertex_model: Output[VertexModel],
    gcp_resources: OutputPath(str),
    serving_container_image_uri: str = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
    serving_container_command: list = [],
    serving_container_args: list = [],
    serving_container_ports: list = [],
    serving_container_predict_route: str = "",
    serving_container_health_route: str = "",
    serving_container_environment_variables: dict = {},
    parent_model: str = "",
    is_default_version: bool = True,
    version_aliases: list = [],
    description: str = "",
    labels: dict = {},
    pipeline_run: str = dsl.PIPELINE_JOB_ID_PLACEHOLDER,
    task_name: str = dsl.PIPELINE_TASK_NAME_PLACEHOLDER,
):
    """Uploads a model directory to the Model Registry, as a new model or a new version.

    Args:
        project: Google Cloud project of the Model Registry.
        location: Vertex AI region (e.g. us-central1) to register the model in.
        display_name: Name of the model in the Vertex AI console (at most 128 characters);
            empty: vtp-<task>, the task named in the model's config.json.
        model: The model directory to register, e.g. export_model's `model` (model.pt2, model.pt,
            config.json, metrics.json, export.json); it becomes the model's artifactUri.
        vertex_model: The registered model version (google.VertexModel): GCPC's
            ModelDeployOp deploys it.
        gcp_resources: The upload operation, so the Vertex console links it.
        serving_container_image_uri: Image that serves predictions from the model directory
            (Vertex copies the directory and names the copy in AIP_STORAGE_URI). The default,
            the project's image, serves model.pt2 with the torch that wrote it: its command,
            port and routes default to `python -m vtp.trainer.serve`, 8080, /predict and /health.
            Any other image gets only the serving_container_* values given here.
        serving_container_command: Command that starts the server (overrides the ENTRYPOINT).
        serving_container_args: Arguments of the command (override the CMD).
        serving_container_ports: Port the server listens on (Vertex sets AIP_HTTP_PORT to the
            first); empty: Vertex's default, 8080.
        serving_container_predict_route: Path that takes prediction requests (AIP_PREDICT_ROUTE).
        serving_container_health_route: Path that answers health checks (AIP_HEALTH_ROUTE).
        serving_container_environment_variables: Environment of the server, name to value.
        parent_model: Resource name or ID of a registered model: the upload becomes its next
            version. Empty registers a new model.
        is_default_version: Make this version the model's default (what `models/ID` means).
        version_aliases: Further aliases for this version (e.g. ["candidate"]).
        description: Description of the model version.
        labels: Labels of the model version (lowercase keys and values).
        pipeline_run: Filled in by the pipeline: ties the version to this run, so a retried
            task re-uses it instead of uploading twice.
        task_name: Filled in by the pipeline, with pipeline_run.
    """
    import logging

    from vtp.launchers import upload_model as launcher
    from vtp.vertex import lifecycle

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    target = lifecycle.Target.resolve(project, location)
    serving = launcher.serving(
        serving_container_image_uri,
        # The default above, written again (no module names here); `vtp compile --image`
        # rewrites both, so a recompiled project image still serves with vtp.trainer.serve.
        project_image="us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
        command=serving_container_command,
        args=serving_container_args,
        ports=serving_container_ports,
        predict_route=serving_container_predict_route,
        health_route=serving_container_health_route,
        env=serving_container_environment_variables,
    )
    upload = launcher.Upload(
        display_name=launcher.model_name(display_name, model.uri),
        artifact_uri=launcher.artifact_uri(model.uri),
        serving=serving,
        parent_model=parent_model,
        description=description,
        labels=labels,
        version_aliases=version_aliases,
        is_default_version=is_default_version,
    )
    key = launcher.upload_key(target, upload, pipeline_run, task_name)
    name = launcher.upload_model(target, upload, key, gcp_resources)
    vertex_model.uri = target.resource_uri(name)
    vertex_model.metadata["resourceName"] = name
