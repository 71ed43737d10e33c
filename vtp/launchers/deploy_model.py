"""What the `deploy_model` component does inside its container: deploy a registered model version
to an endpoint, then (optionally) ask it for a prediction.

The same `deployModel` request GCPC's `ModelDeployOp` sends, through the aiplatform clients
(REST), so it reaches Vertex or the local service alike; the endpoint output is the
`google.VertexEndpoint` artifact GCPC writes. Like the other components:

- **Re-attach, never deploy twice.** The endpoint this task creates carries the `vtp-task` label
  of its pipeline run and task, and each deployed model's display name ends in that key; a retried
  task finds the endpoint and the deployment an earlier attempt made and reuses them.
- **Cancel.** SIGTERM while the deploy operation runs asks Vertex to cancel the operation before
  the task exits (the local service finishes a deploy it started; undeploy it if unwanted).

`sample_instances`, when given, are sent to the endpoint once the model is deployed; the
predictions are the task's `sample_prediction` output, the smoke test a release gate wants.
"""

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from google.cloud import aiplatform_v1
from google.protobuf import json_format, struct_pb2

from vtp.vertex import gcp_resources as resources
from vtp.vertex.cancel import CancelOnSigterm
from vtp.vertex.client import vertex_client
from vtp.vertex.lifecycle import TASK_LABEL, Target

DEPLOY_TIMEOUT_SECONDS = 3600.0
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Deployment:
    """What to deploy where, checked before any request is sent."""

    model: str
    """`projects/P/locations/L/models/ID@VERSION` (upload_model's resourceName)."""
    endpoint: str = ""
    """An existing endpoint's name or ID; empty: create one."""
    endpoint_display_name: str = ""
    machine_type: str = "n1-standard-2"
    min_replica_count: int = 1
    max_replica_count: int = 1
    traffic_percentage: int = 100

    def __post_init__(self) -> None:
        if "/models/" not in self.model:
            raise ValueError(f"model: {self.model!r} is not a model resource name")
        if not 0 <= self.traffic_percentage <= 100:
            raise ValueError(f"traffic_percentage must be 0..100, got {self.traffic_percentage}")
        if not 1 <= self.min_replica_count <= self.max_replica_count:
            raise ValueError(
                "min_replica_count and max_replica_count: need 1 <= min <= max, got "
                f"{self.min_replica_count} and {self.max_replica_count}"
            )


def endpoint_client(target: Target) -> aiplatform_v1.EndpointServiceClient:
    """A REST EndpointServiceClient for the target."""
    return vertex_client(aiplatform_v1.EndpointServiceClient, target.location, local=target.local)


def prediction_client(target: Target) -> aiplatform_v1.PredictionServiceClient:
    """A REST PredictionServiceClient for the target."""
    client_class = aiplatform_v1.PredictionServiceClient
    return vertex_client(client_class, target.location, local=target.local)


def endpoint_name(target: Target, endpoint: str) -> str:
    """A full endpoint name from a name or an ID."""
    return endpoint if endpoint.startswith("projects/") else f"{target.parent}/endpoints/{endpoint}"


def find_or_create_endpoint(
    client: aiplatform_v1.EndpointServiceClient, target: Target, deployment: Deployment, key: str
) -> str:
    """The endpoint to deploy to: the given one, this task's earlier one, or a new one."""
    if deployment.endpoint:
        return client.get_endpoint(name=endpoint_name(target, deployment.endpoint)).name
    wanted = f'labels.{TASK_LABEL}="{key}"'
    for endpoint in client.list_endpoints(request={"parent": target.parent, "filter": wanted}):
        _log.info("Re-using %s, created by an earlier attempt of this task", endpoint.name)
        return endpoint.name
    model_id = deployment.model.rsplit("/", 1)[1].split("@")[0]
    display = deployment.endpoint_display_name or f"{model_id}-endpoint"
    endpoint = aiplatform_v1.Endpoint(display_name=display, labels={TASK_LABEL: key})
    created = client.create_endpoint(parent=target.parent, endpoint=endpoint)
    name = created.result(timeout=DEPLOY_TIMEOUT_SECONDS).name
    _log.info("Created %s", name)
    return name


def deploy(target: Target, deployment: Deployment, key: str, gcp_resources: str) -> tuple[str, str]:
    """Deploy (or find this task's earlier deployment); return (endpoint, deployed model ID)."""
    client = endpoint_client(target)
    name = find_or_create_endpoint(client, target, deployment, key)
    endpoint = client.get_endpoint(name=name)
    for deployed in endpoint.deployed_models:
        if deployed.display_name.endswith(key):
            _log.info("Re-using deployed model %s on %s", deployed.id, name)
            resources.write(gcp_resources, "VertexEndpoint", target.resource_uri(name))
            return name, deployed.id
    model, _, version = deployment.model.partition("@")
    deployed = aiplatform_v1.DeployedModel(
        model=f"{model}@{version}" if version else model,
        display_name=f"{model.rsplit('/', 1)[1]}-{key}",
        dedicated_resources=aiplatform_v1.DedicatedResources(
            machine_spec=aiplatform_v1.MachineSpec(machine_type=deployment.machine_type),
            min_replica_count=deployment.min_replica_count,
            max_replica_count=deployment.max_replica_count,
        ),
    )
    split = _traffic_split(endpoint, deployment.traffic_percentage)
    with CancelOnSigterm().installed() as guard:
        operation = client.deploy_model(endpoint=name, deployed_model=deployed, traffic_split=split)
        lro = operation.operation.name
        resources.write(gcp_resources, "VertexLro", target.resource_uri(lro))
        guard.attach(f"the deploy operation {lro}", lambda: _cancel(operation))
        response = operation.result(timeout=DEPLOY_TIMEOUT_SECONDS)
    _log.info("Deployed %s to %s as %s", deployment.model, name, response.deployed_model.id)
    resources.write(gcp_resources, "VertexEndpoint", target.resource_uri(name))
    return name, response.deployed_model.id


def predict(target: Target, endpoint: str, instances: Sequence[Any]) -> list[Any]:
    """The endpoint's predictions for `instances` (plain JSON values)."""
    values = [json_format.ParseDict(instance, struct_pb2.Value()) for instance in instances]
    response = prediction_client(target).predict(endpoint=endpoint, instances=values)
    predictions = aiplatform_v1.PredictResponse.pb(response).predictions
    return [json_format.MessageToDict(p) for p in predictions]


def _traffic_split(endpoint: aiplatform_v1.Endpoint, percentage: int) -> dict[str, int]:
    """The new model ("0") gets `percentage`; the rest keeps its proportions."""
    current = dict(endpoint.traffic_split)
    rest = 100 - percentage
    total = sum(current.values())
    if not current or total == 0:
        return {"0": 100}
    split = {k: v * rest // total for k, v in current.items()}
    split["0"] = 100 - sum(split.values())
    return split


def _cancel(operation: Any) -> None:
    try:
        operation.cancel()
    except Exception as exc:  # the operation may be done, or the service may not cancel it
        _log.warning("The deploy operation was not cancelled: %s", exc)


def zero_instance(model_dir: str) -> Any:
    """An all-zero instance shaped like the exported model's input (its export.json)."""
    from vtp.trainer.export import read_metadata

    shape = read_metadata(model_dir)["inputs"][0]["shape"][1:]  # without the batch dimension
    instance: Any = 0.0
    for size in reversed(shape):
        instance = [instance] * int(size)
    return json.loads(json.dumps(instance))  # independent lists


def sample_prediction_json(predictions: list[Any]) -> str:
    """The `sample_prediction` output: the predictions as one JSON line."""
    return json.dumps(predictions)
