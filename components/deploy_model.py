"""The `deploy_model` component: deploy a registered model version to a Vertex AI endpoint.

It takes the `google.VertexModel` that `upload_model` (or GCPC's `ModelUploadOp`) outputs and
writes the `google.VertexEndpoint` GCPC's `EndpointCreateOp` does, so it mixes with GCPC's
components. The body runs in the project's image; everything it does lives in
`vtp.launchers.deploy_model`.
"""

# mypy: disable-error-code="valid-type"
# (kfp's own annotations, OutputPath(str) and NamedTuple("Outputs", [...]), are calls, not types)

from typing import NamedTuple

from google_cloud_pipeline_components.types.artifact_types import VertexEndpoint, VertexModel
from kfp import dsl
from kfp.dsl import Input, Model, Output, OutputPath

from vtp.images import COMPONENT_IMAGE


@dsl.component(base_image=COMPONENT_IMAGE, install_kfp_package=False)
def deploy_model(
    project: str,
    location: str,
    model: Input[VertexModel],
    endpoint: Output[VertexEndpoint],
    gcp_resources: OutputPath(str),
    endpoint_name: str = "",
    endpoint_display_name: str = "",
    machine_type: str = "n1-standard-2",
    min_replica_count: int = 1,
    max_replica_count: int = 1,
    traffic_percentage: int = 100,
    sample_instances: list = [],
    example_model: Input[Model] = None,
    pipeline_run: str = dsl.PIPELINE_JOB_ID_PLACEHOLDER,
    task_name: str = dsl.PIPELINE_TASK_NAME_PLACEHOLDER,
) -> NamedTuple("Outputs", [("sample_prediction", str)]):
    """Deploys a model version to an endpoint (a new one unless named) and smoke-tests it.

    Args:
        project: Google Cloud project of the endpoint.
        location: Vertex AI region of the model and the endpoint.
        model: The model version to deploy (google.VertexModel, e.g. upload_model's output).
        endpoint: The endpoint the model serves on (google.VertexEndpoint).
        gcp_resources: The deploy operation, then the endpoint, for the Vertex console.
        endpoint_name: An existing endpoint (resource name or ID) to deploy to; empty creates
            one, labelled with this pipeline run and task so a retry finds it.
        endpoint_display_name: Display name of a new endpoint; empty: <model ID>-endpoint.
        machine_type: Machine type of each serving replica.
        min_replica_count: Serving replicas always running.
        max_replica_count: Serving replicas at most (autoscaling).
        traffic_percentage: Share of the endpoint's traffic the new model gets (0-100); the
            models already there keep the rest in their proportions.
        sample_instances: Prediction instances sent once the model is deployed, e.g. one
            example input: a deploy that cannot predict fails the task.
        example_model: An exported model directory (export_model's `model`): without
            sample_instances, one all-zero instance shaped like its input is sent.
        pipeline_run: Filled in by the pipeline (re-attach key, with task_name).
        task_name: Filled in by the pipeline.

    Returns:
        sample_prediction: The endpoint's predictions for the sample instances, as JSON ("[]"
            when there are none).
    """
    import logging
    from collections import namedtuple

    from vtp.launchers import deploy_model as launcher
    from vtp.vertex import lifecycle

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    target = lifecycle.Target.resolve(project, location)
    deployment = launcher.Deployment(
        model=model.metadata.get("resourceName") or model.uri.split("/v1/", 1)[-1],
        endpoint=endpoint_name,
        endpoint_display_name=endpoint_display_name,
        machine_type=machine_type,
        min_replica_count=min_replica_count,
        max_replica_count=max_replica_count,
        traffic_percentage=traffic_percentage,
    )
    key = lifecycle.task_key(pipeline_run, task_name)
    name, _ = launcher.deploy(target, deployment, key, gcp_resources)
    endpoint.uri = target.resource_uri(name)
    endpoint.metadata["resourceName"] = name
    instances = list(sample_instances)
    if not instances and example_model is not None:
        instances = [launcher.zero_instance(example_model.path)]
    predictions = launcher.predict(target, name, instances) if instances else []
    if predictions:
        logging.info("Sample prediction from %s: %s", name, predictions)
    Outputs = namedtuple("Outputs", ["sample_prediction"])
    return Outputs(launcher.sample_prediction_json(predictions))
