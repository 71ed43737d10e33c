"""pytorch/examples' multinode DDP tutorial (CPU), launched with torchrun in a 2-replica job, as
its README launches it on two machines: it trains, and after a preemption with
restartJobOnWorkerRestart both ranks restart consistently (fresh working directories: rank 0's
snapshot.pt is gone with its container, so both start again from epoch 0)."""

from pathlib import Path

import pytest

from tests.fixtures import wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job

SCRIPT = Path(__file__).with_name("ddp_tutorial") / "multinode.py"
TORCHRUN = (
    'exec torchrun --nnodes="$WORLD_SIZE" --node_rank="$RANK" --nproc_per_node=1 '
    '--master_addr="$MASTER_ADDR" --master_port="$MASTER_PORT" {script} {epochs} 10'
)


def pool(epochs: int) -> dict:
    command = ["sh", "-c", TORCHRUN.format(script=SCRIPT, epochs=epochs)]
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {
            "imageUri": "pytorch/pytorch:latest",
            "command": command,
            "env": [{"name": "OMP_NUM_THREADS", "value": "1"}],
        },
    }


def log(service, name: str, replica: str) -> str:
    path = service.state_dir / "jobs" / name.rsplit("/", 1)[-1] / "logs" / f"{replica}.log"
    return path.read_text() if path.exists() else ""


@pytest.mark.slow
def test_the_tutorial_trains_with_torchrun_on_two_replicas(local_service) -> None:
    job = custom_job(pool(20), pool(20), display_name="ddp-tutorial")
    created = local_service.client().create_custom_job(parent=local_service.parent, custom_job=job)
    ended = wait_for_state(local_service.client(), created.name, timeout=300)
    assert ended.state.name == "JOB_STATE_SUCCEEDED", ended.error.message
    for replica, rank in (("workerpool0-0", 0), ("workerpool1-0", 1)):
        assert f"[GPU{rank}] Epoch 19 |" in log(local_service, created.name, replica)


@pytest.mark.slow
def test_after_a_preemption_both_ranks_restart_consistently(local_service) -> None:
    scheduling = {"restartJobOnWorkerRestart": True}
    # 60 epochs: the preemption lands at about epoch 10, fifty epochs (seconds) before the end.
    job = custom_job(pool(60), pool(60), display_name="ddp-tutorial", scheduling=scheduling)
    created = local_service.client().create_custom_job(parent=local_service.parent, custom_job=job)
    name = created.name
    saved = "Epoch 10 | Training snapshot saved"
    wait_until(lambda: saved in log(local_service, name, "workerpool0-0"), 300, "a snapshot")
    answer = local_service.session().post(
        f"{local_service.url}/v1/{name}:preempt", json={"replica": "workerpool1-0"}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    ended = wait_for_state(local_service.client(), name, timeout=600)
    assert ended.state.name == "JOB_STATE_SUCCEEDED", ended.error.message
    primary, worker = (log(local_service, name, r) for r in ("workerpool0-0", "workerpool1-0"))
    assert primary.count("[vtp local] starting") == worker.count("[vtp local] starting") == 2
    assert "Loading snapshot" not in primary + worker  # neither rank resumed alone
    assert "[GPU0] Epoch 59 |" in primary and "[GPU1] Epoch 59 |" in worker
