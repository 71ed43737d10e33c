"""The `upload_model` component: register an exported model in the Vertex AI Model Registry.

Its `vertex_model` output is the `google.VertexModel` artifact GCPC's `ModelUploadOp` writes, so
GCPC's `ModelDeployOp` (and anything else that takes a VertexModel) accepts it. The body runs in
the project's image; everything it does lives in `components.vertex.models`.
"""

from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp import dsl
from kfp.dsl import Input, Model, Output, OutputPath

from components.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def upload_model(
    project: str,
    location: str,
    display_name: str,
    model: Input[Model],
    vertex_model: Output[VertexModel],
    gcp_resources: OutputPath(str),
    # A literal: kfp copies this source into the task, where module names are not defined.
    serving_container_image_uri: str = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest",  # noqa: E501
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
        display_name: Name of the model in the Vertex AI console (at most 128 characters).
        model: The model directory to register, e.g. export_model's `model` (model.pt2, model.pt,
            config.json, metrics.json, export.json); it becomes the model's artifactUri.
        vertex_model: The registered model version (google.VertexModel): GCPC's
            ModelDeployOp deploys it.
        gcp_resources: The upload operation, so the Vertex console links it.
        serving_container_image_uri: Image that serves predictions from the model directory. The
            default is Vertex's newest prebuilt PyTorch image (torch 2.4, TorchServe), which
            serves a model.mar; give an image that loads model.pt2 with a torch that reads its
            schema (see export.json's torch_version) to serve the export as is.
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

    from components.vertex import lifecycle
    from components.vertex import models as registry

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    target = lifecycle.Target.resolve(project, location)
    upload = registry.Upload(
        display_name=display_name,
        artifact_uri=registry.artifact_uri(model.uri),
        serving_image=serving_container_image_uri,
        parent_model=parent_model,
        description=description,
        labels=labels,
        version_aliases=version_aliases,
        is_default_version=is_default_version,
    )
    key = lifecycle.task_key(pipeline_run, task_name)
    name = registry.upload_model(target, upload, key, gcp_resources)
    vertex_model.uri = target.resource_uri(name)
    vertex_model.metadata["resourceName"] = name
