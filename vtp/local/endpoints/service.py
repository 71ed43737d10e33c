"""Endpoints of the local service: create, read, update, delete; deploy and undeploy models as
long-running operations; predict through the deployed models' serving processes.

As on Vertex:
- `deployModel` checks the request (the model exists, the traffic split adds up to 100) and
  answers with an Operation at once; the operation completes when the model's server is healthy
  (`serving.py`), or fails with why not, and the endpoint lists the model only then.
- `trafficSplit` maps deployed model IDs to percentages; in a deploy request "0" stands for the
  model being deployed. Without one, the new model takes all traffic. `predict` picks a deployed
  model by those weights and answers with its predictions and its ID.
- A model that is deployed cannot be deleted; an endpoint with deployed models cannot either.
- Undeploying stops the server; the service's stop stops them all; a restarted service starts
  the servers of every deployed model again, one log line each, unless its config does not
  resume unfinished work (`vtp run`'s service): the deployments stay recorded, unserved.
"""

import json
import logging
import os
import random
import threading
from datetime import UTC, datetime

from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1 import DeployedModel, Endpoint

from vtp.local.base import callers, errors
from vtp.local.base.resources import new_id, set_times
from vtp.local.base.routing import mask_fields, parse_message
from vtp.local.base.services import CollectionService
from vtp.local.base.store import Record, ResourceStore
from vtp.local.endpoints.containers import plan_in_image, server_for
from vtp.local.endpoints.serving import (
    ModelServer,
    Placement,
    ServingPlan,
    operator_modules,
    plan_serving,
    service_serving_environment,
)
from vtp.local.models.service import ModelRegistry
from vtp.local.service import Service

_TYPE = "type.googleapis.com/google.cloud.aiplatform.v1."
UPDATABLE = ("display_name", "description", "labels", "traffic_split")
_log = logging.getLogger(__name__)


class Endpoints(CollectionService[Endpoint, Record]):
    """Endpoints, with the model registry they deploy from; each deployed model's server runs
    while the service does."""

    collection, kind = "endpoints", "Endpoint"

    def __init__(self, root: Service, registry: ModelRegistry) -> None:
        self.root = root
        self.registry = registry
        self.store: ResourceStore = ResourceStore(
            root.config.state_dir / "endpoints.db", "endpoints", Endpoint
        )
        self._servers: dict[str, ModelServer] = {}  # deployed model ID -> its server
        self._lock = threading.RLock()
        registry.deployments = self.deployments_of

    def start(self) -> None:
        """Start the servers of every deployed model again (after a service restart), or, when
        the config does not resume unfinished work, say which stay stopped."""
        if self.root.config.resume_unfinished:
            self.restart_servers()
            return
        for record in self.store.all():
            for deployed in record.resource.deployed_models:
                _log.info(
                    "not restored: the server of deployed model %s (%s) on %s stays stopped",
                    deployed.id,
                    deployed.model,
                    record.resource.name,
                )

    # -- endpoints -------------------------------------------------------------------------

    def create(self, parent: str, body: bytes, endpoint_id: str = "") -> dict:
        """Create an endpoint; the Operation (done at once) whose response is the endpoint."""
        endpoint = parse_message(Endpoint, body)
        if not endpoint.display_name:
            raise errors.invalid_argument("endpoint.displayName is required.")
        if endpoint.deployed_models:
            raise errors.invalid_argument(
                "endpoint.deployedModels is output only: deploy models with deployModel."
            )
        if endpoint_id and not endpoint_id.isdigit():
            raise errors.invalid_argument(f"Invalid endpointId {endpoint_id!r}: expected digits.")
        endpoint.name = f"{parent}/endpoints/{endpoint_id or new_id()}"
        with self._lock:
            if self.store.get(endpoint.name.rsplit("/", 1)[1]):
                raise errors.already_exists(f"Endpoint {endpoint.name} already exists.")
            set_times(endpoint, datetime.now(UTC), "create_time", "update_time")
            endpoint.etag = new_id()
            endpoint.traffic_split.clear()
            self.store.insert(Record(endpoint))
        return self._operation(
            endpoint.name, "CreateEndpointOperationMetadata", "Endpoint", _json(endpoint)
        )

    def update(self, name: str, body: bytes, mask: str) -> Endpoint:
        """Apply the fields of `body` that `mask` names (all updatable ones when empty)."""
        change = parse_message(Endpoint, body)
        fields = mask_fields(mask) or [f for f in UPDATABLE if f in change]
        for field in fields:
            if field not in UPDATABLE:
                raise errors.invalid_argument(
                    f"updateMask: {field!r} cannot be updated; updatable: {', '.join(UPDATABLE)}."
                )
        with self._lock:
            endpoint = self.get(name)
            if "traffic_split" in fields:
                _check_split(dict(change.traffic_split), {d.id for d in endpoint.deployed_models})
            for field in fields:
                setattr(endpoint, field, getattr(change, field))
            set_times(endpoint, datetime.now(UTC), "update_time")
            self.store.update(Record(endpoint))
        return endpoint

    def delete(self, name: str) -> dict:
        """Delete an endpoint without deployed models; the done Operation."""
        with self._lock:
            endpoint = self.get(name)
            if endpoint.deployed_models:
                ids = ", ".join(d.id for d in endpoint.deployed_models)
                raise errors.failed_precondition(
                    f"Endpoint {name} has deployed models ({ids}); undeploy them first."
                )
            self.store.delete(endpoint.name.rsplit("/", 1)[1])
        return self.root.operations.deleted(endpoint.name.rsplit("/endpoints/", 1)[0])

    # -- deploying -------------------------------------------------------------------------

    def deploy(self, name: str, body: bytes) -> dict:
        """Start deploying a model; the Operation, done when its server is healthy."""
        request = parse_message(aiplatform_v1.DeployModelRequest, body)
        wanted = request.deployed_model
        if not wanted.model:
            raise errors.invalid_argument("deployedModel.model is required.")
        endpoint = self.get(name)
        model = self.registry.get(wanted.model)  # NOT_FOUND names it
        deployed_id = wanted.id or new_id()
        if any(d.id == deployed_id for d in endpoint.deployed_models):
            raise errors.already_exists(f"Deployed model {deployed_id} already exists on {name}.")
        endpoint_id = name.rsplit("/", 1)[1]
        plan = self._plan(model, endpoint_id, deployed_id)
        split = dict(request.traffic_split) or {"0": 100}
        existing = {d.id for d in endpoint.deployed_models}
        _check_split(split, existing | {"0"})
        deployed = DeployedModel(wanted)
        deployed.id = deployed_id
        deployed.model = model.name
        deployed.model_version_id = model.version_id
        deployed.display_name = wanted.display_name or model.display_name
        set_times(deployed, datetime.now(UTC), "create_time")
        operation = self._operation(name, "DeployModelOperationMetadata", done=False)
        thread = threading.Thread(
            target=self._deploy,
            args=(name, deployed, plan, split, operation),
            name=f"deploy-{deployed_id}",
            daemon=True,
        )
        thread.start()
        return operation

    def _deploy(
        self,
        name: str,
        deployed: DeployedModel,
        plan: ServingPlan,
        split: dict[str, int],
        operation: dict,
    ) -> None:
        server = self._start_server(name, deployed, plan)
        problem = server.wait_ready()
        if problem:
            server.stop(self.root.config.grace_period)
            self._finish(operation, error=f"Deploying model {deployed.model} failed: {problem}")
            return
        with self._lock:
            try:
                endpoint = self.get(name)
            except errors.ApiError as exc:
                server.stop(self.root.config.grace_period)
                self._finish(operation, error=exc.message)
                return
            endpoint.deployed_models.append(deployed)
            endpoint.traffic_split = {deployed.id if k == "0" else k: v for k, v in split.items()}
            set_times(endpoint, datetime.now(UTC), "update_time")
            self.store.update(Record(endpoint))
            self._servers[deployed.id] = server
        response = {"@type": _TYPE + "DeployModelResponse", "deployedModel": _deployed(deployed)}
        self._finish(operation, response=response)

    def _plan(self, model: aiplatform_v1.Model, endpoint_id: str, deployed_id: str) -> ServingPlan:
        config = self.root.config
        in_image = plan_in_image(
            model, endpoint_id, deployed_id, config.container_engine, config.project_images,
            config.storage_root,
        )  # fmt: skip
        if in_image is not None:  # the model's own image, through the container engine
            return in_image
        callers.refuse_host(
            "deployedModel.model", "its server would be a host process (this project's, a "
            "prebuilt image's stand-in, or any image without a container engine)",
        )  # fmt: skip
        return plan_serving(
            model, endpoint_id, deployed_id, config.project_images, config.storage_root,
            operator_modules(os.environ),
        )  # fmt: skip

    def _start_server(self, name: str, deployed: DeployedModel, plan: ServingPlan) -> ModelServer:
        endpoint_id = name.rsplit("/", 1)[1]
        folder = self.root.config.state_dir / "endpoints" / endpoint_id
        server = server_for(plan, folder / f"{deployed.id}.log")
        base = service_serving_environment(self.root.config, self.root.service_id)
        machine = deployed.dedicated_resources.machine_spec.machine_type
        env = server.environment(base, Placement(endpoint_id, deployed.id, machine))
        server.start(env, folder / "work" / deployed.id)
        return server

    def undeploy(self, name: str, body: bytes) -> dict:
        """Undeploy a model and stop its server; the done Operation."""
        request = parse_message(aiplatform_v1.UndeployModelRequest, body)
        with self._lock:
            endpoint = self.get(name)
            remaining = [d for d in endpoint.deployed_models if d.id != request.deployed_model_id]
            if len(remaining) == len(endpoint.deployed_models):
                raise errors.not_found(
                    f"Deployed model {request.deployed_model_id!r} not found on {name}."
                )
            split = dict(request.traffic_split)
            if not split:
                split = {
                    k: v
                    for k, v in endpoint.traffic_split.items()
                    if k != request.deployed_model_id
                }
                if remaining and sum(split.values()) != 100:
                    split = {remaining[0].id: 100} if len(remaining) == 1 else split
            if remaining:
                _check_split(split, {d.id for d in remaining})
            del endpoint.deployed_models[:]
            endpoint.deployed_models.extend(remaining)
            endpoint.traffic_split = split if remaining else {}
            set_times(endpoint, datetime.now(UTC), "update_time")
            self.store.update(Record(endpoint))
            server = self._servers.pop(request.deployed_model_id, None)
        if server:
            server.stop(self.root.config.grace_period)
        return self._operation(
            name, "UndeployModelOperationMetadata", "UndeployModelResponse", "{}"
        )

    # -- predicting ------------------------------------------------------------------------

    def predict(self, name: str, body: bytes, raw: bool = False) -> tuple[int, bytes, str]:
        """Send `body` to a deployed model chosen by the traffic split: (status, body, the
        deployed model's ID). Not raw: the body is a PredictRequest and the answer a
        PredictResponse."""
        endpoint = self.get(name)
        if not raw:
            try:
                request = json.loads(body or b"{}")
            except (ValueError, RecursionError) as exc:
                raise errors.invalid_argument(f"Invalid JSON payload received. {exc}") from None
            if not isinstance(request, dict) or not isinstance(request.get("instances"), list):
                raise errors.invalid_argument("instances: a list of prediction inputs is required.")
        deployed = _choose(endpoint)
        server = self._servers.get(deployed.id)
        if server is None:
            raise errors.failed_precondition(
                f"Deployed model {deployed.id} on {name} is not serving: its server is starting "
                "again, or was left stopped by a service that does not resume earlier work "
                "(`vtp run`'s; `vtp local serve` starts it)."
            )
        forward = (
            body
            if raw
            else json.dumps(
                {k: v for k, v in request.items() if k in ("instances", "parameters")}
            ).encode()
        )
        status, answer = server.predict(forward)
        if raw:
            return status, answer, deployed.id
        if status != 200:
            raise errors.ApiError(
                errors.INVALID_ARGUMENT if 400 <= status < 500 else errors.INTERNAL,
                f"The model server of deployed model {deployed.id} answered {status}: "
                f"{answer.decode(errors='replace')[:2000]}",
                http_status=400 if 400 <= status < 500 else 500,
            )
        try:
            predictions = json.loads(answer)["predictions"]
        except (ValueError, KeyError, TypeError):
            raise errors.ApiError(
                errors.INTERNAL,
                f"The model server of deployed model {deployed.id} answered without "
                f"'predictions': {answer.decode(errors='replace')[:500]}",
            ) from None
        model_name = deployed.model
        response = {
            "predictions": predictions,
            "deployedModelId": deployed.id,
            "model": model_name,
            "modelVersionId": deployed.model_version_id,
            "modelDisplayName": deployed.display_name,
        }
        return 200, json.dumps(response).encode(), deployed.id

    # -- for the registry, start and stop --------------------------------------------------

    def deployments_of(self, model_name: str) -> list[tuple[str, str]]:
        """(endpoint, deployed model ID) of every deployment of `model_name` (any version, or
        the one `@version` names)."""
        base, _, version = model_name.partition("@")
        found = []
        for record in self.store.all(base.rsplit("/models/", 1)[0]):
            endpoint = record.resource
            for deployed in endpoint.deployed_models:
                if deployed.model == base and version in ("", deployed.model_version_id):
                    found.append((endpoint.name, deployed.id))
        return found

    def restart_servers(self) -> None:
        """Start the servers of every deployed model again (after a service restart)."""
        for record in self.store.all():
            endpoint = record.resource
            endpoint_id = endpoint.name.rsplit("/", 1)[1]
            for deployed in endpoint.deployed_models:
                try:
                    model = self.registry.get(f"{deployed.model}@{deployed.model_version_id}")
                    plan = self._plan(model, endpoint_id, deployed.id)
                except errors.ApiError as exc:
                    _log.warning("not serving deployed model %s: %s", deployed.id, exc.message)
                    continue
                server = self._start_server(endpoint.name, deployed, plan)
                with self._lock:
                    self._servers[deployed.id] = server
                _log.info(
                    "restored: serving deployed model %s (%s) on %s again",
                    deployed.id,
                    deployed.model,
                    endpoint.name,
                )

    def close(self) -> None:
        """Stop every server (the service is stopping; deployments stay recorded)."""
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            server.stop(self.root.config.grace_period)
        self.store.close()

    # -- operations ------------------------------------------------------------------------

    def _operation(
        self,
        parent: str,
        metadata: str,
        response_type: str = "",
        response: str = "",
        done: bool = True,
    ) -> dict:
        now = _now()
        operation: dict = {
            "name": f"{parent}/operations/{new_id()}",
            "metadata": {
                "@type": _TYPE + metadata,
                "genericMetadata": {"createTime": now, "updateTime": now},
            },
            "done": done,
        }
        if done:
            operation["response"] = {"@type": _TYPE + response_type, **json.loads(response)}
        self.root.operations.put(operation)
        return operation

    def _finish(self, operation: dict, response: dict | None = None, error: str = "") -> None:
        operation = dict(operation, done=True)
        operation["metadata"]["genericMetadata"]["updateTime"] = _now()
        if error:
            operation["error"] = {"code": errors.FAILED_PRECONDITION, "message": error}
        else:
            operation["response"] = response or {
                "@type": "type.googleapis.com/google.protobuf.Empty"
            }
        self.root.operations.put(operation)


def _check_split(split: dict[str, int], known: set[str]) -> None:
    unknown = sorted(set(split) - known)
    if unknown:
        raise errors.invalid_argument(
            f"trafficSplit names deployed models that are not on the endpoint: {unknown}."
        )
    if split and sum(split.values()) != 100:
        raise errors.invalid_argument(
            f"trafficSplit must add up to 100; it adds up to {sum(split.values())}."
        )


def _choose(endpoint: Endpoint) -> DeployedModel:
    if not endpoint.deployed_models:
        raise errors.failed_precondition(
            f"Endpoint {endpoint.name} has no deployed model: deploy one before predicting."
        )
    by_id = {d.id: d for d in endpoint.deployed_models}
    weights = {k: v for k, v in endpoint.traffic_split.items() if v > 0 and k in by_id}
    if not weights:
        raise errors.failed_precondition(
            f"Endpoint {endpoint.name} sends no traffic to any deployed model (trafficSplit)."
        )
    chosen = random.choices(list(weights), weights=list(weights.values()))[0]
    return by_id[chosen]


def _deployed(deployed: DeployedModel) -> dict:
    return json.loads(DeployedModel.to_json(deployed, indent=None))


def _json(endpoint: Endpoint) -> str:
    return Endpoint.to_json(endpoint, indent=None)


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")
