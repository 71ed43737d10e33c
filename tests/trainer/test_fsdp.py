"""`--strategy=fsdp` in real `python -m vtp.trainer` processes over gloo: FSDP2 trains as DDP does,
sharded checkpoints resume bit for bit on the same number of processes and reshard onto another
(runs held by the gate at a known step: conftest.gate_env).
"""

import json
import signal

import pytest
import torch

from tests.trainer.conftest import (
    assert_bitwise_equal,
    load_model,
    run_trainer,
    start_gated,
    tiny_args,
    train_here,
    trainer_env,
    wait_for,
)
from vtp.trainer.checkpoint import list_checkpoints, read_state

pytestmark = pytest.mark.slow

FSDP = {"strategy": "fsdp", "nproc_per_node": 2}


def _accuracy(out) -> float:
    return json.loads((out / "model" / "metrics.json").read_text())["accuracy"]


@pytest.fixture(scope="module")
def fsdp_model(tmp_path_factory) -> dict[str, torch.Tensor]:
    """The model of an uninterrupted tiny FSDP run (with dropout) on two processes."""
    out = tmp_path_factory.mktemp("fsdp")
    output = run_trainer(tiny_args(out, **FSDP), trainer_env(out))
    assert "FSDP: 3 blocks sharded across 2 processes" in output
    return load_model(out)


def test_fsdp_reaches_the_accuracy_of_ddp(tmp_path):
    runs = {}
    for strategy in ("ddp", "fsdp"):
        out = tmp_path / strategy
        flags = {"task": "vtp.trainer.tasks.digits", "epochs": 3, "batch_size": 32, "max_steps": 0}
        flags.update(hidden_size=64, learning_rate=0.01, eval_interval=0, checkpoint_interval=0)
        args = tiny_args(out, **flags, strategy=strategy, nproc_per_node=2)
        run_trainer(args, trainer_env(out))
        runs[strategy] = _accuracy(out)
    assert runs["ddp"] >= 0.9, runs
    assert abs(runs["fsdp"] - runs["ddp"]) <= 0.02, runs


def test_fsdp_on_two_processes_trains_the_one_process_model(tmp_path):
    out = tmp_path / "fsdp"
    run_trainer(tiny_args(out, dropout=0, **FSDP), trainer_env(out))
    train_here(tiny_args(tmp_path / "one", dropout=0))
    one_process, sharded = load_model(tmp_path / "one"), load_model(out)
    assert one_process.keys() == sharded.keys()
    for name in one_process:  # averaged by reduce-scatter instead of all-reduce
        torch.testing.assert_close(sharded[name], one_process[name], atol=1e-5, rtol=0)


def test_sigkill_then_restart_on_the_same_processes_ends_bitwise_equal(tmp_path, fsdp_model):
    process = start_gated(tmp_path, tiny_args(tmp_path, **FSDP), steps=10, batch_per_process=8)
    wait_for(tmp_path / "gate" / "waiting.1", process)  # held in step 11
    wait_for(tmp_path / "checkpoints" / "step_00000008.json", process)
    process.kill()  # the node; its children die with it
    process.communicate()
    saved = list_checkpoints(tmp_path / "checkpoints")[0]
    assert (saved.step, saved.format) == (8, "dcp")
    shards = sorted(p.name for p in (tmp_path / "checkpoints" / "step_00000008").iterdir())
    assert shards == [".metadata", "__0_0.distcp", "__1_0.distcp", "trainer.pt"]

    output = run_trainer(tiny_args(tmp_path, **FSDP), trainer_env(tmp_path))
    assert "at step 8\n" in output
    assert_bitwise_equal(load_model(tmp_path), fsdp_model)


def test_preempted_on_two_processes_resumes_resharded_on_three(tmp_path):
    # A global batch of 24 splits over 2 and over 3 processes.
    args = tiny_args(tmp_path, batch_size=24, **FSDP)
    process = start_gated(tmp_path, args, steps=10, batch_per_process=12)
    wait_for(tmp_path / "gate" / "waiting.0", process)
    wait_for(tmp_path / "gate" / "waiting.1", process)
    process.send_signal(signal.SIGTERM)
    (tmp_path / "gate" / "open").touch()
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 143, output
    saved = list_checkpoints(tmp_path / "checkpoints")[0]
    # The step the processes agreed on: 10 or 11 when the node passed SIGTERM on before the
    # gate opened, later when a busy machine ran the node's handler after that.
    assert 10 <= saved.step < 24, output
    assert not (tmp_path / "model" / "model.pt").exists()

    # Three processes load the two shards into theirs: gathered again, it is the saved model.
    three = {"batch_size": 24, "strategy": "fsdp", "nproc_per_node": 3}
    loaded = tmp_path / "loaded"
    args = tiny_args(tmp_path, **three, max_steps=saved.step, model_dir=loaded / "model")
    output = run_trainer(args, trainer_env(tmp_path))
    assert f"at step {saved.step}\n" in output and "resharded onto 3" in output
    assert_bitwise_equal(load_model(loaded), read_state(saved.path).model)

    # And they train on to the end.
    output = run_trainer(tiny_args(tmp_path, **three), trainer_env(tmp_path))
    assert "joined 3 processes" in output and f"at step {saved.step}\n" in output
    newest = list_checkpoints(tmp_path / "checkpoints")[0]
    assert newest.step == 24
    assert (tmp_path / "checkpoints" / "step_00000024" / "__2_0.distcp").exists()
    assert load_model(tmp_path).keys() == read_state(newest.path).model.keys()


def test_activation_checkpointing_trains_the_same_model_bit_for_bit(tmp_path, fsdp_model):
    # Recomputed blocks replay dropout with the random state of their first pass.
    run_trainer(tiny_args(tmp_path, activation_checkpointing=True, **FSDP), trainer_env(tmp_path))
    assert_bitwise_equal(load_model(tmp_path), fsdp_model)
