"""SQLite rows of persistent resources (`<state dir>/persistent_resources.db`), and which jobs
hold which of their replicas.

A resource is one row of `base/store.py`'s `ResourceStore` (the resource as Vertex shows it; its
runtime data is empty), keyed by its full name, not by its ID as other collections' rows are:
on Vertex a persistent resource's ID is one its creator picks, unique only in its project and
location, so `projects/A/locations/L/persistentResources/x` and `projects/B/.../x` are two
resources (#49: keyed by ID, the second was refused as existing). A file an older service wrote,
keyed by ID, is rekeyed when opened.

What jobs hold is not stored: a job runs on a resource only while this service runs it, and a
service that stops puts its running jobs back in the queue, so the next one starts with every
replica free.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from google.cloud.aiplatform_v1 import PersistentResource

from vtp.local.base.store import Record, ResourceStore

TABLE = "persistent_resources"
_REKEY = f"UPDATE {TABLE} SET id = json_extract(resource, '$.name') WHERE id NOT LIKE 'projects/%'"
"""Rows of an older service, keyed by the resource's ID, keyed by its name instead."""


class NamedStore(ResourceStore):
    """`ResourceStore` rows keyed by the resource's full name: `get` and `delete` take a name,
    and `insert` and `update` key the record by its resource's name."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, TABLE, PersistentResource)
        self._db.write(_REKEY)

    def insert(self, record: Record) -> None:
        """Add a new row; sqlite3.IntegrityError when a resource has the name already."""
        super().insert(_ByName(record.resource, record.runtime))

    def update(self, record: Record) -> None:
        """Replace the row of the record's resource name."""
        super().update(_ByName(record.resource, record.runtime))


class _ByName(Record):
    """A record as `NamedStore` hands it to `ResourceStore`, whose rows are keyed by `id`."""

    @property
    def id(self) -> str:
        """The full name, `projects/P/locations/L/persistentResources/ID`."""
        return str(self.resource.name)


def open_store(state_dir: Path) -> NamedStore:
    """The rows of persistent resources in `state_dir`."""
    return NamedStore(state_dir / f"{TABLE}.db")


@dataclass
class Holdings:
    """The replicas jobs hold on each resource: resource name -> job name -> pool ID -> count.
    By name, as the rows are: a job in one project never holds another's resource of its ID."""

    by_resource: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    def used(self, resource: str) -> dict[str, int]:
        """Replicas in use on each pool of the resource named `resource`."""
        used: dict[str, int] = {}
        for pools in self.by_resource.get(resource, {}).values():
            for pool, count in pools.items():
                used[pool] = used.get(pool, 0) + count
        return used

    def jobs(self, resource: str) -> list[str]:
        """The jobs running on the resource named `resource`."""
        return sorted(self.by_resource.get(resource, {}))

    def hold(self, resource: str, job: str, pools: Mapping[str, int]) -> None:
        """Record that `job` holds `pools`' replicas of the resource named `resource`."""
        self.by_resource.setdefault(resource, {})[job] = dict(pools)

    def release(self, job: str) -> str | None:
        """Forget what `job` held; the name of the resource it held replicas of, if any."""
        for resource, jobs in self.by_resource.items():
            if jobs.pop(job, None) is not None:
                return resource
        return None
