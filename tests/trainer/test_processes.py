"""Real `python -m vtp.trainer` processes: DDP over gloo, SIGKILL and SIGTERM, lost peers (the
gate of conftest.gate_env holds a run at a known step, so a kill lands after a known checkpoint).
"""

import signal

import pytest
import torch

from tests.trainer.conftest import (
    assert_bitwise_equal,
    gate_env,
    load_model,
    run_trainer,
    start_gated,
    start_trainer,
    tiny_args,
    train_here,
    trainer_env,
    wait_for,
)
from vtp.trainer.checkpoint import list_checkpoints, load_checkpoint
from vtp.trainer.distributed import free_port

pytestmark = pytest.mark.slow

GLOBAL_BATCH = 16  # TINY's batch_size


@pytest.fixture
def one_process_model(tmp_path_factory) -> dict[str, torch.Tensor]:
    """The model of an uninterrupted tiny run, trained in this process (one thread, like the
    subprocesses, so the arithmetic is the same bit for bit)."""
    out = tmp_path_factory.mktemp("one_process")
    train_here(tiny_args(out))
    return load_model(out)


@pytest.fixture(scope="module")
def two_process_model(tmp_path_factory) -> dict[str, torch.Tensor]:
    """The model of an uninterrupted tiny run without dropout, two processes on one node."""
    out = tmp_path_factory.mktemp("two_processes")
    output = run_trainer(tiny_args(out, dropout=0, nproc_per_node=2), trainer_env(out))
    assert "joined 2 processes on 1 nodes" in output
    return load_model(out)


def test_two_processes_match_one_process_with_the_same_global_batch(tmp_path, two_process_model):
    train_here(tiny_args(tmp_path, dropout=0))
    one_process = load_model(tmp_path)
    assert one_process.keys() == two_process_model.keys()
    for name in one_process:  # after 24 optimizer steps (TINY's max_steps)
        torch.testing.assert_close(two_process_model[name], one_process[name], atol=1e-5, rtol=0)


def test_sigkill_after_a_checkpoint_then_restart_ends_bitwise_equal(tmp_path, one_process_model):
    process = start_gated(tmp_path, tiny_args(tmp_path), steps=10)
    wait_for(tmp_path / "gate" / "waiting.0", process)  # held in step 11
    wait_for(tmp_path / "checkpoints" / "step_00000008.json", process)
    process.kill()
    process.communicate()
    assert process.returncode == -signal.SIGKILL
    assert not (tmp_path / "model" / "model.pt").exists()

    output = run_trainer(tiny_args(tmp_path), trainer_env(tmp_path))
    assert "at step 8\n" in output
    assert_bitwise_equal(load_model(tmp_path), one_process_model)


def test_sigterm_saves_at_that_step_exits_143_and_the_rerun_resumes_there(
    tmp_path, one_process_model
):
    process = start_gated(tmp_path, tiny_args(tmp_path), steps=10)
    wait_for(tmp_path / "gate" / "waiting.0", process)
    process.send_signal(signal.SIGTERM)
    (tmp_path / "gate" / "open").touch()
    output, _ = process.communicate(timeout=180)

    # The signal came while step 11's batch was loading: the run stops before taking that step.
    assert process.returncode == 143, output
    assert "SIGTERM: saving a checkpoint at step 10" in output
    assert list_checkpoints(tmp_path / "checkpoints")[0].step == 10
    assert not (tmp_path / "model" / "model.pt").exists()

    output = run_trainer(tiny_args(tmp_path), trainer_env(tmp_path))
    assert "at step 10\n" in output
    assert_bitwise_equal(load_model(tmp_path), one_process_model)


def test_sigterm_to_one_of_two_nodes_stops_both_at_one_step_and_resumes_exactly(
    tmp_path, two_process_model, monkeypatch
):
    # Two nodes as Vertex starts them: MASTER_*/WORLD_SIZE/RANK and gs:// AIP_* directories.
    gate = gate_env(tmp_path, steps=10, batch_per_process=GLOBAL_BATCH // 2)
    bucket = tmp_path / "gcs" / "bucket" / "job"
    vertex = {
        "VTP_GCS_ROOT": str(tmp_path / "gcs"),
        "AIP_CHECKPOINT_DIR": "gs://bucket/job/checkpoints/",
        "AIP_MODEL_DIR": "gs://bucket/job/model/",
        "AIP_TENSORBOARD_LOG_DIR": "gs://bucket/job/logs/",
    }
    args = [arg for arg in tiny_args(tmp_path, dropout=0) if "_dir=" not in arg]

    def start_nodes(**extra: str) -> list:
        cluster = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "WORLD_SIZE": "2"}
        nodes = {}
        for rank in (1, 0):  # the worker first: start order must not matter
            env = trainer_env(tmp_path, **vertex, **cluster, RANK=str(rank), **extra)
            nodes[rank] = start_trainer(args, env)
        return [nodes[0], nodes[1]]

    nodes = start_nodes(**gate)
    for rank, node in enumerate(nodes):
        wait_for(tmp_path / "gate" / f"waiting.{rank}", node)
    nodes[1].send_signal(signal.SIGTERM)
    (tmp_path / "gate" / "open").touch()
    outputs = [node.communicate(timeout=180)[0] for node in nodes]

    assert [node.returncode for node in nodes] == [143, 143], outputs
    # Node 1 got the signal during step 11; the ranks learn of it one step later and stop there.
    monkeypatch.setenv("VTP_GCS_ROOT", vertex["VTP_GCS_ROOT"])
    saved = list_checkpoints(vertex["AIP_CHECKPOINT_DIR"])[0]
    assert saved.step == 11
    rng = load_checkpoint(saved.path)["rng"]
    assert len(rng) == 2 and not torch.equal(rng[0]["torch"], rng[1]["torch"]), "one per rank"

    outputs = [node.communicate(timeout=120)[0] for node in start_nodes()]
    assert "at step 11\n" in outputs[0]
    assert_bitwise_equal(load_model(bucket), two_process_model)
    assert list((bucket / "logs").glob("events.out.tfevents.*"))


@pytest.mark.parametrize("rank", [0, 1])
def test_a_failing_process_fails_its_node_promptly(tmp_path, rank):
    # The other rank then fails too (its collective loses its peer), and may exit first: the
    # node must still name the one that failed first. Rank 0 hosts the store and writes the
    # checkpoints: its failure must not wait for the others (--dist_timeout is 600 s).
    args = tiny_args(tmp_path, nproc_per_node=2)
    process = start_gated(tmp_path, args, steps=3, GATE_FAIL_RANK=str(rank))
    output, _ = process.communicate(timeout=180)  # well before --dist_timeout's 600 s
    assert process.returncode == 1, output
    assert f"rank {rank} fails on purpose" in output
    assert f"process rank{rank} exited with status 1: stopping the node" in output, output
    assert output.count("stopping the node") == 1, output
    assert not (tmp_path / "model" / "model.pt").exists()
