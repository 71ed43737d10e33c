"""Persistent resources through the real aiplatform SDK and its GAPIC client, on REST and gRPC,
and CustomJobs that run on them: they run on the resource's pools, wait while the pools are busy,
and are refused in one line when they ask for more than the resource has."""

import json
import uuid
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform import jobs, persistent_resource

from tests.fixtures import FAST_FLAGS, LocalService, State, wait_for_state, wait_until
from tests.vtp.local.conftest import OTHER_IMAGE, SCRIPT, custom_job, scripted_pool
from vtp.local.base.store import Record, ResourceStore

PR = aiplatform_v1.PersistentResource
MACHINE = {"machine_type": "n1-standard-4"}


@pytest.fixture
def sdk(local_service, monkeypatch):
    """aiplatform initialised for the service (REST transport, the token), quick job polling."""
    monkeypatch.setattr(jobs, "_JOB_WAIT_TIME", 0.1)
    local_service.init_sdk(staging_bucket="gs://staging/pr")
    yield aiplatform
    aiplatform.init(api_endpoint=None, api_transport=None)


@pytest.fixture
def client(local_service) -> aiplatform_v1.PersistentResourceServiceClient:
    """The GAPIC client on REST, with the service's token."""
    return aiplatform_v1.PersistentResourceServiceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=local_service.url),
        credentials=local_service.credentials(),
    )


def new_id() -> str:
    return f"pr-{uuid.uuid4().hex[:12]}"


def pool(replicas: int, **scaling: int) -> aiplatform_v1.ResourcePool:
    spec = aiplatform_v1.ResourcePool(machine_spec=MACHINE, replica_count=replicas)
    if scaling:
        spec.autoscaling_spec = aiplatform_v1.ResourcePool.AutoscalingSpec(**scaling)
    return spec


def script_pool(record: Path, *args: str, replicas: int = 1) -> dict:
    command = ["python", str(SCRIPT), "--record", str(record), *args]
    container = {"image_uri": OTHER_IMAGE, "command": command}
    return {"machine_spec": MACHINE, "replica_count": replicas, "container_spec": container}


def test_sdk_creates_lists_reboots_and_deletes_a_resource(sdk, client):
    resource_id = new_id()
    created = persistent_resource.PersistentResource.create(
        persistent_resource_id=resource_id,
        resource_pools=[pool(2)],
        display_name="cluster",
        labels={"team": "ml"},
        enable_custom_service_account=True,
    )
    assert created.state == PR.State.RUNNING
    assert created.resource_name.endswith(f"/persistentResources/{resource_id}")
    assert created.gca_resource.resource_pools[0].id == "n1-standard-4"
    assert created.start_time is not None
    listed = persistent_resource.PersistentResource.list()
    assert created.resource_name in [r.resource_name for r in listed]

    rebooting = client.reboot_persistent_resource(name=created.resource_name)
    assert client.get_persistent_resource(name=created.resource_name).state in (
        PR.State.REBOOTING,
        PR.State.RUNNING,
    )
    assert rebooting.result(timeout=60).state == PR.State.RUNNING

    created.delete()
    with pytest.raises(exceptions.NotFound, match=resource_id):
        client.get_persistent_resource(name=created.resource_name)


def test_malformed_creates_are_400_naming_the_field(client, local_service):
    parent = local_service.parent
    with pytest.raises(exceptions.BadRequest, match="persistentResourceId"):
        client.create_persistent_resource(
            parent=parent,
            persistent_resource=PR(resource_pools=[pool(1)]),
            persistent_resource_id="Bad_ID",
        )
    with pytest.raises(exceptions.BadRequest, match=r"resourcePools\[0\]\.replicaCount"):
        client.create_persistent_resource(
            parent=parent, persistent_resource=PR(resource_pools=[pool(0)]),
            persistent_resource_id=new_id(),
        )  # fmt: skip
    with pytest.raises(exceptions.BadRequest, match="resourcePools: at least one"):
        client.create_persistent_resource(
            parent=parent, persistent_resource=PR(), persistent_resource_id=new_id()
        )
    taken = new_id()
    client.create_persistent_resource(
        parent=parent, persistent_resource=PR(resource_pools=[pool(1)]),
        persistent_resource_id=taken,
    ).result(timeout=60)  # fmt: skip
    with pytest.raises(exceptions.Conflict, match="already exists"):
        client.create_persistent_resource(
            parent=parent, persistent_resource=PR(resource_pools=[pool(1)]),
            persistent_resource_id=taken,
        )  # fmt: skip


def two_projects_and_a_location() -> list[str]:
    """Three parents: two projects in one location, and the first project in another."""
    a, b = (f"team-{uuid.uuid4().hex[:8]}" for _ in range(2))
    return [
        f"projects/{a}/locations/us-central1",
        f"projects/{b}/locations/us-central1",
        f"projects/{a}/locations/europe-west4",
    ]


def test_the_same_id_in_two_projects_is_two_resources(client):
    """As on Vertex, a persistent resource's ID is its project's and location's: creating it in
    one never collides with another's, and get, list and delete each see their own (#49)."""
    resource_id = new_id()
    parents = two_projects_and_a_location()
    for index, parent in enumerate(parents):
        created = client.create_persistent_resource(
            parent=parent, persistent_resource_id=resource_id,
            persistent_resource=PR(display_name=f"r{index}", resource_pools=[pool(index + 1)]),
        ).result(timeout=60)  # fmt: skip
        assert created.name == f"{parent}/persistentResources/{resource_id}"
    for index, parent in enumerate(parents):
        name = f"{parent}/persistentResources/{resource_id}"
        got = client.get_persistent_resource(name=name)
        assert (got.name, got.display_name, got.resource_pools[0].replica_count) == (
            name, f"r{index}", index + 1,
        )  # fmt: skip
        assert [r.name for r in client.list_persistent_resources(parent=parent)] == [name]

    client.delete_persistent_resource(
        name=f"{parents[0]}/persistentResources/{resource_id}"
    ).result(timeout=60)
    with pytest.raises(exceptions.NotFound, match=resource_id):
        client.get_persistent_resource(name=f"{parents[0]}/persistentResources/{resource_id}")
    assert list(client.list_persistent_resources(parent=parents[0])) == []
    for parent in parents[1:]:  # the others' resources of the same ID are untouched
        name = f"{parent}/persistentResources/{resource_id}"
        assert client.get_persistent_resource(name=name).state == PR.State.RUNNING
        assert [r.name for r in client.list_persistent_resources(parent=parent)] == [name]
    with pytest.raises(exceptions.BadRequest, match="2 persistent resources"):  # which one?
        client.get_persistent_resource(
            name=f"projects/-/locations/-/persistentResources/{resource_id}"
        )
    for parent in parents[1:]:
        client.delete_persistent_resource(
            name=f"{parent}/persistentResources/{resource_id}"
        ).result(timeout=60)


def test_a_state_dir_an_older_service_keyed_by_id_is_read_by_name(tmp_path):
    """An older service keyed its rows by ID alone: the next service finds them by their names,
    and the same ID is free in another project."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    name = "projects/local/locations/us-central1/persistentResources/old-cluster"
    older = ResourceStore(state / "persistent_resources.db", "persistent_resources", PR)
    older.insert(Record(PR(name=name, state=PR.State.RUNNING, resource_pools=[pool(1)]), {}))
    older.close()
    with LocalService(state) as service:
        client = aiplatform_v1.PersistentResourceServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=service.url),
            credentials=service.credentials(),
        )
        assert client.get_persistent_resource(name=name).state == PR.State.RUNNING
        other = "projects/other/locations/us-central1"
        client.create_persistent_resource(
            parent=other, persistent_resource_id="old-cluster",
            persistent_resource=PR(resource_pools=[pool(1)]),
        ).result(timeout=60)  # fmt: skip
        names = [r.name for r in client.list_persistent_resources(parent="projects/-/locations/-")]
        assert names == [name, f"{other}/persistentResources/old-cluster"]
        client.delete_persistent_resource(name=name).result(timeout=60)
        assert [r.name for r in client.list_persistent_resources(parent=service.parent)] == []


def used_replicas(client: aiplatform_v1.PersistentResourceServiceClient, name: str) -> int:
    """How many replicas of the resource's first pool jobs hold."""
    return client.get_persistent_resource(name=name).resource_pools[0].used_replica_count


def test_a_job_holds_only_its_own_projects_resource(client, local_service, tmp_path):
    """A job on project A's resource holds A's replicas only: project B's resource of the same
    ID stays free, and B's job runs on it at once (#49)."""
    resource_id = new_id()
    a, b = two_projects_and_a_location()[:2]
    for parent in (a, b):
        client.create_persistent_resource(
            parent=parent, persistent_resource_id=resource_id,
            persistent_resource=PR(resource_pools=[pool(1)]),
        ).result(timeout=60)  # fmt: skip
    gate = tmp_path / "go"
    for record in ("a", "b"):
        (tmp_path / record).mkdir()
    jobs_client = local_service.client()
    holds = jobs_client.create_custom_job(
        parent=a,
        custom_job=custom_job(
            scripted_pool(tmp_path / "a", "--wait-file", str(gate)),
            persistentResourceId=resource_id,
        ),
    )
    wait_for_state(jobs_client, holds.name, [State.JOB_STATE_RUNNING])
    other = jobs_client.create_custom_job(
        parent=b,
        custom_job=custom_job(scripted_pool(tmp_path / "b"), persistentResourceId=resource_id),
    )
    ended = wait_for_state(jobs_client, other.name)
    assert (ended.state, ended.error.message) == (State.JOB_STATE_SUCCEEDED, "")
    assert used_replicas(client, f"{a}/persistentResources/{resource_id}") == 1
    gate.touch()
    assert wait_for_state(jobs_client, holds.name).state == State.JOB_STATE_SUCCEEDED
    for parent in (a, b):
        name = f"{parent}/persistentResources/{resource_id}"
        wait_until(lambda n=name: used_replicas(client, n) == 0, what=f"{name} freed")
        client.delete_persistent_resource(name=name).result(timeout=60)


def test_a_resource_this_machine_cannot_host_ends_in_error(tmp_path):
    """Under --strict-accelerators, a pool of GPUs the machine lacks cannot be provisioned."""
    gpus = aiplatform_v1.MachineSpec(
        machine_type="a2-highgpu-1g", accelerator_type="NVIDIA_TESLA_A100", accelerator_count=1
    )
    with LocalService(tmp_path / "strict", *FAST_FLAGS, "--strict-accelerators") as service:
        client = aiplatform_v1.PersistentResourceServiceClient(
            transport="rest",
            client_options=ClientOptions(api_endpoint=service.url),
            credentials=service.credentials(),
        )
        operation = client.create_persistent_resource(
            parent=service.parent,
            persistent_resource=PR(resource_pools=[{"machine_spec": gpus, "replica_count": 1}]),
            persistent_resource_id="gpus",
        )
        with pytest.raises(exceptions.GoogleAPICallError, match="1 accelerator"):
            operation.result(timeout=60)
        resource = client.get_persistent_resource(name=f"{service.parent}/persistentResources/gpus")
        assert resource.state == PR.State.ERROR
        assert "0 GPU(s)" in resource.error.message


def test_sdk_job_runs_on_the_resource_and_waits_while_it_is_busy(sdk, client, local_service,
                                                                 tmp_path):  # fmt: skip
    resource = persistent_resource.PersistentResource.create(
        persistent_resource_id=new_id(), resource_pools=[pool(1)]
    )
    resource_id = resource.resource_name.rsplit("/", 1)[1]
    gate = tmp_path / "go"
    for record in ("a", "b"):
        (tmp_path / record).mkdir()
    first = sdk.CustomJob(
        display_name="holds",
        worker_pool_specs=[script_pool(tmp_path / "a", "--wait-file", str(gate))],
    )
    first.submit(persistent_resource_id=resource_id)
    jobs_client = local_service.client()
    wait_for_state(jobs_client, first.resource_name, [State.JOB_STATE_RUNNING])
    held = client.get_persistent_resource(name=resource.resource_name)
    assert held.resource_pools[0].used_replica_count == 1

    second = sdk.CustomJob(display_name="waits", worker_pool_specs=[script_pool(tmp_path / "b")])
    second.submit(persistent_resource_id=resource_id)
    # While the first holds the one replica, the second stays queued (it ran nowhere).
    assert jobs_client.get_custom_job(name=second.resource_name).state == State.JOB_STATE_QUEUED
    assert not list((tmp_path / "b").iterdir())
    with pytest.raises(exceptions.BadRequest, match="while jobs run on it"):
        client.delete_persistent_resource(name=resource.resource_name)

    gate.touch()
    ended = [wait_for_state(jobs_client, j.resource_name) for j in (first, second)]
    assert [(j.state, j.error.message) for j in ended] == [(State.JOB_STATE_SUCCEEDED, "")] * 2
    assert ended[1].job_spec.persistent_resource_id == resource_id
    assert json.loads((tmp_path / "b" / "workerpool0-0.env.json").read_text())
    wait_until(
        lambda: (
            client.get_persistent_resource(name=resource.resource_name)
            .resource_pools[0]
            .used_replica_count
            == 0
        )
    )
    resource.delete()


def test_a_job_asking_more_than_the_resource_has_is_refused(sdk, local_service, tmp_path):
    resource = persistent_resource.PersistentResource.create(
        persistent_resource_id=new_id(), resource_pools=[pool(1, min_replica_count=1,
                                                              max_replica_count=2)]
    )  # fmt: skip
    resource_id = resource.resource_name.rsplit("/", 1)[1]
    too_big = sdk.CustomJob(
        display_name="too-big",
        worker_pool_specs=[script_pool(tmp_path), script_pool(tmp_path, replicas=2)],
    )
    with pytest.raises(exceptions.BadRequest) as refused:
        too_big.submit(persistent_resource_id=resource_id)
    message = refused.value.message
    assert "asks for 3 replica(s)" in message and "at most 2" in message
    assert "persistentResourceId" in message and "\n" not in message

    other = dict(script_pool(tmp_path), machine_spec={"machine_type": "n1-highmem-8"})
    with pytest.raises(exceptions.BadRequest, match=r"n1-highmem-8 is not a machine"):
        sdk.CustomJob(display_name="m", worker_pool_specs=[other]).submit(
            persistent_resource_id=resource_id
        )
    with pytest.raises(exceptions.NotFound, match="persistentResourceId"):
        sdk.CustomJob(display_name="n", worker_pool_specs=[script_pool(tmp_path)]).submit(
            persistent_resource_id="no-such-resource"
        )
    resource.delete()


def test_grpc_transport_as_a_user_program(local_service, tmp_path):
    """The SDK's default transport (gRPC, through the TLS front) from the user's own script."""
    script = tmp_path / "cluster.py"
    script.write_text(
        "from google.cloud import aiplatform\n"
        "from google.cloud.aiplatform import persistent_resource as pr\n"
        "aiplatform.init(project='local', location='us-central1')\n"
        "r = pr.PersistentResource.create(persistent_resource_id='grpc-cluster',\n"
        "    resource_pools=[{'machine_spec': {'machine_type': 'n1-standard-4'},\n"
        "                     'replica_count': 1}])\n"
        "print('result', r.state.name, len(pr.PersistentResource.list()) >= 1)\n"
        "r.delete()\n"
    )
    result = local_service.run_user_program(tmp_path, script.name)
    lines = [line.split() for line in result.stdout.splitlines() if line.startswith("result ")]
    assert lines == [["result", "RUNNING", "True"]]
