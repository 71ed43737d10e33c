"""The trainer as a two-replica Vertex job through the service: the same model as a direct run,
even when a worker is preempted twice mid-run under `restartJobOnWorkerRestart`.

The gated task (tests/trainer/gated_task.py) holds every process at a known step until the test
opens the gate, so each preemption lands mid-run after a known checkpoint, without timing guesses.
"""

import pytest
import torch
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform import jobs

from tests.fixtures import REPO, State, wait_for_state, wait_until
from tests.trainer.conftest import (
    TINY,
    assert_bitwise_equal,
    load_model,
    run_trainer,
    tiny_args,
    trainer_env,
)
from tests.vtp.local.conftest import two_replica_trainer_job
from vtp.cli import main as vtp

pytestmark = pytest.mark.slow

PER_PROCESS_BATCH = TINY["batch_size"] // 2


@pytest.fixture(scope="module")
def direct_model(tmp_path_factory) -> dict[str, torch.Tensor]:
    """The model of the trainer started directly with two processes (one node, no service)."""
    out = tmp_path_factory.mktemp("direct")
    run_trainer(tiny_args(out, nproc_per_node=2), trainer_env(out))
    return load_model(out)


def trainer_job(tmp_path, output: str, **env: str) -> dict:
    """Two replicas (pool 0 and pool 1) of the tiny run (TINY's gated task, ungated unless
    `env` sets GATE_DIR); outputs go to the AIP_* directories under `output` (gs://)."""
    variables = {"OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO), **env}
    variables["CLOUD_ML_HP_METRIC_FILE"] = str(tmp_path / "metrics")
    restart = {"restart_job_on_worker_restart": True}
    return two_replica_trainer_job("ddp", output, TINY, variables, scheduling=restart)


def final_model(local_service, output: str) -> dict[str, torch.Tensor]:
    bucket_path = output.removeprefix("gs://")
    return torch.load(
        local_service.gcs_root / bucket_path / "model" / "model.pt", weights_only=True
    )


def test_two_replicas_through_the_service_train_the_direct_model(
    local_service, tmp_path, direct_model, monkeypatch
):
    monkeypatch.setattr(jobs, "_JOB_WAIT_TIME", 0.2)
    local_service.init_sdk(staging_bucket="gs://runs/staging")
    spec = trainer_job(tmp_path, "gs://runs/plain")
    job = aiplatform.CustomJob(
        display_name=spec["display_name"],
        worker_pool_specs=spec["job_spec"]["worker_pool_specs"],
        base_output_dir="gs://runs/plain",
    )
    job.run()
    aiplatform.init(api_endpoint=None, api_transport=None)
    assert job.state == State.JOB_STATE_SUCCEEDED
    assert_bitwise_equal(final_model(local_service, "gs://runs/plain"), direct_model)


def test_a_worker_preempted_twice_mid_run_still_trains_the_same_model(
    local_service, tmp_path, direct_model
):
    gate = tmp_path / "gate"
    gate.mkdir()
    steps_before_gate = 6  # the last checkpoint before the gate is step 4 (every 4 steps)
    job = trainer_job(
        tmp_path,
        "gs://runs/preempted",
        GATE_DIR=str(gate),
        GATE_AFTER=str(steps_before_gate * PER_PROCESS_BATCH),
    )
    client = local_service.client()
    name = client.create_custom_job(
        parent=local_service.parent, custom_job=aiplatform_v1.CustomJob(job)
    ).name

    def held() -> bool:
        return (gate / "waiting.0").exists() and (gate / "waiting.1").exists()

    def preempt(grace: str) -> None:
        for waiting in gate.glob("waiting.*"):
            waiting.unlink()
        command = ["local", "preempt", name, "--replica", "workerpool1-0", "--grace", grace]
        assert vtp([*command, "--endpoint", local_service.url]) == 0

    # 1: both held at step 7; the worker ignores the notice (held) and is killed after 0.5 s.
    wait_until(held, timeout=120, what="both replicas to reach the gate")
    preempt("0.5")
    # 2: everyone restarted from step 4 and is held again; this time the worker checkpoints.
    wait_until(held, timeout=120, what="both replicas to reach the gate again")
    preempt("60")
    (gate / "open").touch()

    assert wait_for_state(client, name, timeout=180).state == State.JOB_STATE_SUCCEEDED
    assert_bitwise_equal(final_model(local_service, "gs://runs/preempted"), direct_model)
    job_dir = local_service.state_dir / "jobs" / name.rsplit("/", 1)[-1] / "logs"
    worker_log = (job_dir / "workerpool1-0.log").read_text()
    assert worker_log.count("restart_all after exit status") == 2
    primary_log = (job_dir / "workerpool0-0.log").read_text()
    assert "at step 4\n" in primary_log and "SIGTERM: saving a checkpoint" in primary_log
