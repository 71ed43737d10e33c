"""SQLite rows of persistent resources (`<state dir>/persistent_resources.db`), and which jobs
hold which of their replicas.

A resource is one row of `base/store.py`'s `ResourceStore` (the resource as Vertex shows it; its
runtime data is empty). What jobs hold is not stored: a job runs on a resource only while this
service runs it, and a service that stops puts its running jobs back in the queue, so the next
one starts with every replica free.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from google.cloud.aiplatform_v1 import PersistentResource

from vtp.local.base.store import ResourceStore

TABLE = "persistent_resources"


def open_store(state_dir: Path) -> ResourceStore:
    """The rows of persistent resources in `state_dir`."""
    return ResourceStore(state_dir / f"{TABLE}.db", TABLE, PersistentResource)


@dataclass
class Holdings:
    """The replicas jobs hold on each resource: resource ID -> job name -> pool ID -> count."""

    by_resource: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    def used(self, resource_id: str) -> dict[str, int]:
        """Replicas in use on each pool of the resource."""
        used: dict[str, int] = {}
        for pools in self.by_resource.get(resource_id, {}).values():
            for pool, count in pools.items():
                used[pool] = used.get(pool, 0) + count
        return used

    def jobs(self, resource_id: str) -> list[str]:
        """The jobs running on the resource."""
        return sorted(self.by_resource.get(resource_id, {}))

    def hold(self, resource_id: str, job: str, pools: Mapping[str, int]) -> None:
        """Record that `job` holds `pools`' replicas of the resource."""
        self.by_resource.setdefault(resource_id, {})[job] = dict(pools)

    def release(self, job: str) -> str | None:
        """Forget what `job` held; the ID of the resource it held replicas of, if any."""
        for resource_id, jobs in self.by_resource.items():
            if jobs.pop(job, None) is not None:
                return resource_id
        return None
