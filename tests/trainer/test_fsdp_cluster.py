"""One process per accelerator: a pool's `acceleratorCount` (from CLUSTER_SPEC's job) decides
how many trainer processes each replica runs, with torchrun's ranks; through the local service
that runs accelerator pools on CPU (its default on a GPU-less machine), a 2-replica pool of 2
accelerators each is a 4-process FSDP job."""

import json

import pytest
from google.cloud import aiplatform_v1

from tests.fixtures import FAST_FLAGS, REPO, LocalService, State, wait_for_state
from tests.trainer.conftest import TINY
from vtp.trainer.distributed import accelerators_from_env

IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"  # runs `python -m vtp.trainer`
GPU = {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4"}


def _spec(task: str, *pools: dict) -> dict[str, str]:
    job = {"workerPoolSpecs": list(pools)}
    cluster = {"workerpool0": ["h0:2222"], "workerpool1": ["h1:2222"]}
    spec = {"cluster": cluster, "task": {"type": task, "index": 0}, "job": json.dumps(job)}
    return {"CLUSTER_SPEC": json.dumps(spec)}


def test_accelerators_come_from_the_pool_of_this_replica():
    two = {"machineSpec": {**GPU, "acceleratorCount": 2}, "replicaCount": "1"}
    assert accelerators_from_env(_spec("workerpool1", two, two)) == 2
    snake = {"machine_spec": {"accelerator_type": "NVIDIA_L4", "accelerator_count": 4}}
    assert accelerators_from_env(_spec("workerpool0", snake)) == 4
    cpu = {"machineSpec": {"machineType": "n1-standard-8"}, "replicaCount": "1"}
    assert accelerators_from_env(_spec("workerpool0", cpu, cpu)) == 0
    tpu = {"machineSpec": {"acceleratorType": "TPU_V3", "acceleratorCount": 8}}
    assert accelerators_from_env(_spec("workerpool0", tpu)) == 0  # not one process per chip
    as_number = {"machineSpec": {"acceleratorType": 5, "acceleratorCount": 2}}  # NVIDIA_TESLA_T4
    assert accelerators_from_env(_spec("workerpool0", as_number)) == 2
    assert (
        accelerators_from_env(
            _spec(
                "workerpool0",
                {**as_number, "machineSpec": {"acceleratorType": 7, "acceleratorCount": 8}},
            )
        )
        == 0
    )
    assert accelerators_from_env({}) == 0
    with pytest.raises(ValueError, match="different accelerator counts"):
        accelerators_from_env(_spec("workerpool0", two, {**two, "machineSpec": {**GPU}}))


@pytest.fixture(scope="module")
def cpu_service(tmp_path_factory):
    """A local service that runs accelerator pools on CPU (the default, --gpus none)."""
    service = LocalService(tmp_path_factory.mktemp("service"), *FAST_FLAGS)
    yield service.start()
    service.stop()


@pytest.mark.slow
def test_two_replicas_of_two_accelerators_run_four_ranked_processes(cpu_service, tmp_path):
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    flags = {**TINY, "task": "tests.trainer.fsdp_ranks_task", "max_steps": 4, "strategy": "fsdp"}
    variables = {"OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO), "RANKS_DIR": str(ranks)}
    variables["CLOUD_ML_HP_METRIC_FILE"] = str(tmp_path / "metrics")
    container = {
        "image_uri": IMAGE,
        "args": [f"--{name}={value}" for name, value in flags.items()],
        "env": [{"name": k, "value": v} for k, v in variables.items()],
    }
    machine = {"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4"}
    pool = {
        "machine_spec": {**machine, "accelerator_count": 2},
        "replica_count": 1,
        "container_spec": container,
    }
    job = {
        "display_name": "fsdp-4",
        "job_spec": {
            "worker_pool_specs": [pool, pool],  # the primary and one worker: 2 replicas
            "base_output_directory": {"output_uri_prefix": "gs://runs/fsdp4"},
        },
    }
    client = cpu_service.client()
    name = client.create_custom_job(
        parent=cpu_service.parent, custom_job=aiplatform_v1.CustomJob(job)
    ).name
    assert wait_for_state(client, name, timeout=240).state == State.JOB_STATE_SUCCEEDED

    noted = [json.loads((ranks / f"{rank}.json").read_text()) for rank in range(4)]
    assert [n["world_size"] for n in noted] == [4, 4, 4, 4]
    as_torchrun = [
        {"RANK": "0", "LOCAL_RANK": "0", "GROUP_RANK": "0"},
        {"RANK": "1", "LOCAL_RANK": "1", "GROUP_RANK": "0"},
        {"RANK": "2", "LOCAL_RANK": "0", "GROUP_RANK": "1"},
        {"RANK": "3", "LOCAL_RANK": "1", "GROUP_RANK": "1"},
    ]
    for rank, (seen, expected) in enumerate(zip(noted, as_torchrun, strict=True)):
        assert seen["rank"] == rank
        assert seen["env"] == {**expected, "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "2"}
    assert len({n["pid"] for n in noted}) == 4
    shards = cpu_service.gcs_root / "runs" / "fsdp4" / "checkpoints" / "step_00000004"
    assert sorted(p.name for p in shards.glob("*.distcp")) == [f"__{r}_0.distcp" for r in range(4)]
