"""PersistentResources: Vertex's reserved training clusters, kept by the local service.

    operation = resources.create(parent, body, "my-cluster", "v1")   # PROVISIONING, then RUNNING
    resources.get(name); resources.list(parent, filter, size, token)
    resources.reboot(name)                                           # REBOOTING, then RUNNING
    resources.delete(name)                                           # STOPPING, then gone

A resource is its project's and location's: its ID (the creator's choice) is unique there only,
so rows, and the replicas jobs hold, go by the full name (`store.py`), and a job uses the
resource of its ID in its own project and location.

Each change of state is a long-running operation, as on Vertex: it is answered at once, not
done, and a worker thread finishes it. Provisioning checks that this machine can host the pools
under --strict-accelerators (a pool's accelerators must be GPUs this service may hand out; by
default GPU pools run on CPU, as jobs do); a resource that it cannot host ends in ERROR with why,
and its operation fails with the same.

CustomJobs that name a resource (`jobSpec.persistentResourceId`) call `asked` when they are
created (the resource must exist and be usable, and its pools must be able to hold the job:
`pools.py`), `claim` when the scheduler would start them (False while other jobs hold the
replicas they need: they wait) and `release` when they end. A pool that autoscales grows to what
its jobs use, up to its maximum, and shrinks back to its minimum as they end; `usedReplicaCount`
says how many replicas jobs hold.
"""

import json
import logging
import re
import threading
from datetime import UTC, datetime
from typing import Any

from google.cloud.aiplatform_v1 import CustomJobSpec, PersistentResource

from vtp.local.base import errors, names
from vtp.local.base.resources import (
    clear_output_only,
    done_operation,
    new_id,
    rest_json,
    set_times,
)
from vtp.local.base.routing import parse_message
from vtp.local.base.services import CollectionService
from vtp.local.base.store import Record
from vtp.local.base.threads import Workers
from vtp.local.persistent_resources import pools
from vtp.local.persistent_resources.store import Holdings, NamedStore, open_store
from vtp.local.service import Service

State = PersistentResource.State
_ID = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")
_OUTPUT_ONLY = ("state", "error", "create_time", "start_time", "update_time", "resource_runtime")
_SETTLING = (State.PROVISIONING, State.REBOOTING, State.STOPPING)
_API = "type.googleapis.com/google.cloud.aiplatform.{version}."
_log = logging.getLogger(__name__)


class PersistentResources(CollectionService[PersistentResource, Record]):
    """Persistent resources of this service, and the replicas jobs hold on them."""

    collection, kind = "persistentResources", "PersistentResource"

    def __init__(self, root: Service) -> None:
        self.root = root
        self.store: NamedStore = open_store(root.config.state_dir)
        self._holdings = Holdings()
        self._lock = threading.RLock()
        self._workers = Workers()

    def start(self) -> None:
        """Finish what a previous service left settling (provisioning, rebooting, stopping)."""
        for record in self.store.all():
            if record.resource.state in _SETTLING:
                operation = record.runtime.get("operation", "")
                self._settle_later(record.resource.name, operation)

    def close(self) -> None:
        """Wait for the operations under way, then close the store."""
        self._workers.join()
        self.store.close()

    # -- the API ------------------------------------------------------------------------------

    def create(self, parent: str, body: bytes, resource_id: str, version: str = "v1") -> dict:
        """Check and store a new resource `resource_id` under `parent`, PROVISIONING; its
        operation (not done yet). ALREADY_EXISTS only for that ID under that same parent."""
        resource = parse_message(PersistentResource, body)
        if not _ID.fullmatch(resource_id or ""):
            raise errors.invalid_argument(
                f"persistentResourceId {resource_id!r} is invalid: 1 to 63 characters, lowercase "
                "letters, digits and hyphens, starting with a letter and not ending with a hyphen."
            )
        clear_output_only(resource, _OUTPUT_ONLY)
        _check_pools(resource)
        resource.name = f"{parent}/persistentResources/{resource_id}"
        now = datetime.now(UTC)
        set_times(resource, now, "create_time", "update_time")
        resource.state = State(State.PROVISIONING)
        with self._lock:
            if self.store.get(resource.name) is not None:
                raise errors.already_exists(f"PersistentResource {resource.name} already exists.")
            metadata = "CreatePersistentResourceOperationMetadata"
            operation = self._begin(resource.name, metadata, version)
            self.store.insert(Record(resource, {"operation": operation["name"]}))
        self._settle_later(resource.name, operation["name"])
        return operation

    def reboot(self, name: str, version: str = "v1") -> dict:
        """Reboot a RUNNING (or ERROR) resource no job runs on; its operation (not done yet)."""
        with self._lock:
            record = self._record(name)
            state = record.resource.state
            if state not in (State.RUNNING, State.ERROR):
                raise errors.failed_precondition(
                    f"PersistentResource {record.resource.name} is {state.name}; only a RUNNING "
                    "or ERROR resource can be rebooted."
                )
            self._refuse_while_held(record, "rebooted")
            operation = self._begin(
                record.resource.name, "RebootPersistentResourceOperationMetadata", version
            )
            record.runtime["operation"] = operation["name"]
            self._set_state(record, State.REBOOTING)
        self._settle_later(record.resource.name, operation["name"])
        return operation

    def delete(self, name: str) -> dict:
        """Stop and remove a resource no job runs on; its operation (not done yet)."""
        with self._lock:
            record = self._record(name)
            if record.resource.state in _SETTLING:
                raise errors.failed_precondition(
                    f"PersistentResource {record.resource.name} is {record.resource.state.name}; "
                    "wait for its operation to finish."
                )
            self._refuse_while_held(record, "deleted")
            operation = self._begin(record.resource.name, "DeleteOperationMetadata", "v1")
            record.runtime["operation"] = operation["name"]
            self._set_state(record, State.STOPPING)
        self._settle_later(record.resource.name, operation["name"])
        return operation

    # -- what CustomJobs ask ------------------------------------------------------------------

    def asked(self, parent: str, spec: CustomJobSpec) -> dict[str, int]:
        """Replicas the job `spec` asks of each pool of the resource it names (under
        `parent`); NOT_FOUND, FAILED_PRECONDITION or INVALID_ARGUMENT naming the field when
        it could not run there."""
        name = f"{parent}/persistentResources/{spec.persistent_resource_id}"
        record = self.store.get(name)
        if record is None:
            raise errors.not_found(f"PersistentResource {name} not found ({pools.FIELD}).")
        state = record.resource.state
        if state not in (State.PROVISIONING, State.RUNNING, State.REBOOTING):
            raise errors.failed_precondition(
                f"{pools.FIELD}: PersistentResource {name} is {state.name}; jobs run only on a "
                "RUNNING resource."
            )
        return pools.asked(spec, name, record.resource.resource_pools)

    def claim(self, parent: str, spec: CustomJobSpec, job: str) -> bool:
        """Hold the replicas job `job` needs on its resource: True when held, False while the
        resource is busy (other jobs hold them, or it is provisioning or rebooting). An error
        (the resource is gone or unusable) says why the job cannot run."""
        with self._lock:
            wanted = self.asked(parent, spec)
            record = self.store.get(f"{parent}/persistentResources/{spec.persistent_resource_id}")
            assert record is not None, "asked() found it"
            resource = record.resource
            used = self._holdings.used(resource.name)
            if resource.state != State.RUNNING or not pools.free(
                resource.resource_pools, used, wanted
            ):
                return False
            self._holdings.hold(resource.name, job, wanted)
            self._show_use(record)
        _log.info("job %s runs on persistent resource %s", job, resource.name)
        return True

    def release(self, job: str) -> None:
        """Give back what job `job` held (nothing when it held nothing)."""
        with self._lock:
            held = self._holdings.release(job)
            record = self.store.get(held) if held else None
            if record is not None:
                self._show_use(record)

    # -- helpers ------------------------------------------------------------------------------

    def _record(self, name: str) -> Record:
        """The row `name` means, `-` standing for any project or location; NOT_FOUND when none
        does. A resource's ID is unique only in its project and location, so a `-` that matches
        several is INVALID_ARGUMENT rather than any one of them (a delete of another project's)."""
        found = self._matching(name)
        if not found:
            raise errors.not_found(f"{self.kind} {name} not found.")
        if len(found) > 1:
            raise errors.invalid_argument(
                f"{name} names {len(found)} persistent resources "
                f"({', '.join(r.resource.name for r in found)}): name its project and location."
            )
        return found[0]

    def _matching(self, name: str) -> list[Record]:
        """The rows `name` means: the one of that name, or with `-`, those of its ID there."""
        wanted = names.resource_id(name, self.collection)
        if wanted is None or "@" in name:  # no versions of persistent resources
            return []
        parent = names.location(name)
        if names.ANY not in parent.split("/"):
            record = self.store.get(name)
            return [record] if record else []
        return [r for r in self.store.all(parent) if r.id == wanted]

    def _settle_later(self, name: str, operation: str) -> None:
        """Finish `operation` on the resource `name` in a worker thread (`_settle`)."""
        self._workers.start(f"settle-{name}", self._settle, name, operation)

    def _settle(self, name: str, operation: str) -> None:
        """Finish the operation under way on the resource `name`: provisioned (or rebooted)
        RUNNING, or ERROR when this machine cannot host it; stopped and removed."""
        with self._lock:
            record = self.store.get(name)
            if record is None:
                return
            resource = record.resource
            if resource.state == State.STOPPING:
                self.store.delete(name)
                self._finish(operation, {"@type": "type.googleapis.com/google.protobuf.Empty"})
                _log.info("persistent resource %s: deleted", resource.name)
                return
            problem = self._cannot_host(resource)
            if problem:
                resource.error = {"code": errors.RESOURCE_EXHAUSTED, "message": problem}
                self._set_state(record, State.ERROR)
                self._finish(
                    operation, error={"code": errors.RESOURCE_EXHAUSTED, "message": problem}
                )
                _log.info("persistent resource %s: ERROR: %s", resource.name, problem)
                return
            if "error" in resource:
                del resource.error
            for pool in resource.resource_pools:
                if "autoscaling_spec" in pool and pool.autoscaling_spec.min_replica_count:
                    pool.replica_count = pool.autoscaling_spec.min_replica_count
            set_times(resource, datetime.now(UTC), "start_time")
            self._set_state(record, State.RUNNING)
            version = operation_version(self.root.operations.get(operation)) if operation else "v1"
            self._finish(operation, _typed(resource, version))
            _log.info("persistent resource %s: RUNNING", resource.name)

    def _cannot_host(self, resource: PersistentResource) -> str:
        """Why this machine cannot host the resource's pools, or empty."""
        config = self.root.config
        if not config.strict_accelerators:
            return ""  # GPU pools run on CPU, as jobs do
        wanted = sum(
            pools.capacity(p) * p.machine_spec.accelerator_count for p in resource.resource_pools
        )
        if wanted > len(config.gpus):
            return (
                f"the resource's pools have {wanted} accelerator(s) in all but this machine has "
                f"{len(config.gpus)} GPU(s) for the service, which refuses what it lacks "
                "(--strict-accelerators)"
            )
        return ""

    def _begin(self, name: str, metadata_type: str, version: str) -> dict:
        """A new operation on resource `name`, not done, stored so that clients can poll it."""
        operation = done_operation(f"{name}/operations/{new_id()}", metadata_type)
        operation["metadata"]["@type"] = _API.format(version=version) + metadata_type
        operation["done"] = False
        del operation["response"]
        return self.root.operations.put(operation)

    def _finish(self, name: str, response: dict | None = None, error: dict | None = None) -> None:
        """Mark operation `name` done with `response` or `error`."""
        if not name:
            return
        operation = self.root.operations.get(name)
        now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        operation["metadata"].setdefault("genericMetadata", {})["updateTime"] = now
        operation["done"] = True
        if error is not None:
            operation["error"] = error
        else:
            operation["response"] = response or {}
        self.root.operations.put(operation)

    def _refuse_while_held(self, record: Record, what: str) -> None:
        jobs = self._holdings.jobs(record.resource.name)
        if jobs:
            raise errors.failed_precondition(
                f"PersistentResource {record.resource.name} cannot be {what} while jobs run on "
                f"it: {', '.join(jobs)}."
            )

    def _show_use(self, record: Record) -> None:
        """Store how many replicas jobs use on each pool (an autoscaling pool grows to it)."""
        used = self._holdings.used(record.resource.name)
        for pool in record.resource.resource_pools:
            pool.used_replica_count = used.get(pool.id, 0)
            if "autoscaling_spec" in pool and pool.autoscaling_spec.max_replica_count:
                floor = pool.autoscaling_spec.min_replica_count
                pool.replica_count = max(floor, pool.used_replica_count)
        self._set_state(record, record.resource.state)

    def _set_state(self, record: Record, state: Any) -> None:
        record.resource.state = state
        set_times(record.resource, datetime.now(UTC), "update_time")
        self.store.update(record)


def operation_version(operation: dict) -> str:
    """The API version (v1, v1beta1) an operation's metadata is typed for."""
    kind = str(operation.get("metadata", {}).get("@type", ""))
    return "v1beta1" if ".v1beta1." in kind else "v1"


def _typed(resource: PersistentResource, version: str) -> dict:
    """The resource as an operation's response, typed for the API version the client called."""
    return {
        "@type": _API.format(version=version) + "PersistentResource",
        **json.loads(rest_json(resource)),
    }


def _check_pools(resource: PersistentResource) -> None:
    """INVALID_ARGUMENT naming the field for pools Vertex would refuse; IDs filled in."""
    if not resource.resource_pools:
        raise errors.invalid_argument("persistentResource.resourcePools: at least one is required.")
    seen: set[str] = set()
    for index, pool in enumerate(resource.resource_pools):
        field = f"persistentResource.resourcePools[{index}]"
        machine = pool.machine_spec
        if not machine.machine_type:
            raise errors.invalid_argument(f"{field}.machineSpec.machineType is required.")
        if machine.accelerator_count < 0:
            raise errors.invalid_argument(f"{field}.machineSpec.acceleratorCount must be >= 0.")
        if machine.accelerator_count and not machine.accelerator_type:
            raise errors.invalid_argument(
                f"{field}.machineSpec.acceleratorType is required with an acceleratorCount."
            )
        scaling = pool.autoscaling_spec if "autoscaling_spec" in pool else None
        if scaling is not None:
            low, high = scaling.min_replica_count, scaling.max_replica_count
            if low < 1 or high < low:
                raise errors.invalid_argument(
                    f"{field}.autoscalingSpec: minReplicaCount must be >= 1 and "
                    f"maxReplicaCount >= minReplicaCount (got {low} and {high})."
                )
            if pool.replica_count and not low <= pool.replica_count <= high:
                raise errors.invalid_argument(
                    f"{field}.replicaCount must lie between the autoscaling minimum and maximum."
                )
        elif pool.replica_count < 1:
            raise errors.invalid_argument(f"{field}.replicaCount must be >= 1.")
        if pool.used_replica_count:
            raise errors.invalid_argument(f"{field}.usedReplicaCount is output only.")
        if not pool.id:
            base = re.sub(r"[^a-z0-9-]", "-", machine.machine_type.lower())
            pool.id = base if base not in seen else f"{base}-{index}"
        if pool.id in seen:
            raise errors.invalid_argument(f"{field}.id {pool.id!r} is not unique.")
        seen.add(pool.id)
