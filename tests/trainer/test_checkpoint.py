"""Checkpoint files: committed by their manifest, verified on load, pruned to the newest K."""

import logging

import pytest
import torch

from vtp.trainer.checkpoint import (
    Checkpointer,
    CorruptCheckpoint,
    checkpoint_path,
    latest_state,
    list_checkpoints,
    load_checkpoint,
    load_latest,
    read_state,
    rng_state,
    set_rng_state,
)


def _save_steps(directory, steps, keep=10):
    checkpointer = Checkpointer(directory, keep=keep, enabled=True)
    for step in steps:
        checkpointer.save(
            {"step": step, "weights": torch.full((4,), float(step))}, step, step // 10
        )
    checkpointer.close()


def test_saved_checkpoints_list_newest_first_and_load_verified(tmp_path):
    _save_steps(tmp_path, [5, 10, 15])
    infos = list_checkpoints(tmp_path)
    assert [(info.step, info.epoch) for info in infos] == [(15, 1), (10, 1), (5, 0)]
    assert load_checkpoint(infos[0].path)["weights"].tolist() == [15.0] * 4
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"step_{s:08d}{ext}" for s in (5, 10, 15) for ext in (".pt", ".json")
    ), "no temporary files are left behind"


def test_temporaries_of_a_killed_writer_are_removed(tmp_path):
    leftover = tmp_path / ".step_00000007.pt.123.tmp"
    leftover.write_bytes(b"half")
    _save_steps(tmp_path, [8])
    assert not leftover.exists()


def test_only_the_newest_k_are_kept(tmp_path):
    _save_steps(tmp_path, [1, 2, 3, 4, 5], keep=2)
    assert [info.step for info in list_checkpoints(tmp_path)] == [5, 4]
    assert not checkpoint_path(tmp_path, 3).exists()


def test_a_disabled_checkpointer_writes_nothing(tmp_path):
    checkpointer = Checkpointer(tmp_path / "ck", keep=2, enabled=False)
    checkpointer.save({"step": 1}, 1, 0)
    checkpointer.close()
    assert not (tmp_path / "ck").exists()
    assert checkpointer.last_step == 1


def test_data_without_a_manifest_is_not_a_checkpoint(tmp_path):
    _save_steps(tmp_path, [1, 2])
    checkpoint_path(tmp_path, 2).with_suffix(".json").unlink()
    assert [info.step for info in list_checkpoints(tmp_path)] == [1]


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_newest_checkpoint_falls_back_with_a_warning(
    tmp_path, damage, caplog, monkeypatch
):
    monkeypatch.setattr(logging.getLogger("trainer"), "propagate", True)
    _save_steps(tmp_path, [10, 20])
    newest = checkpoint_path(tmp_path, 20)
    data = newest.read_bytes()
    if damage == "truncate":
        newest.write_bytes(data[: len(data) // 2])
    else:
        newest.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(CorruptCheckpoint):
        load_checkpoint(newest)
    info, state = load_latest(tmp_path)
    assert (info.step, state["step"]) == (10, 10)
    assert "corrupt checkpoint" in caplog.text and "step_00000020" in caplog.text


def test_pruning_ignores_a_corrupt_checkpoint_newer_than_the_run(tmp_path):
    _save_steps(tmp_path, [10, 20, 30], keep=3)
    checkpoint_path(tmp_path, 30).write_bytes(b"torn")
    _save_steps(tmp_path, [21], keep=1)  # the resumed run saves past 20; 30 is not "newer"
    assert [info.step for info in list_checkpoints(tmp_path)] == [30, 21]
    assert load_latest(tmp_path)[0].step == 21


def test_random_states_round_trip():
    import random

    import numpy as np

    state = rng_state()
    first = (torch.rand(2).tolist(), np.random.rand(), random.random())
    set_rng_state(state)
    assert (torch.rand(2).tolist(), np.random.rand(), random.random()) == first


@pytest.mark.parametrize("manifest", ["[]", "7", '"x"', "null", '{"step": "x"}', "{not json"])
def test_a_manifest_of_any_wrong_shape_is_skipped_with_a_warning(
    tmp_path, manifest, caplog, monkeypatch
):
    monkeypatch.setattr(logging.getLogger("trainer"), "propagate", True)
    _save_steps(tmp_path, [10, 20])
    checkpoint_path(tmp_path, 20).with_suffix(".json").write_text(manifest)
    assert [info.step for info in list_checkpoints(tmp_path)] == [10]
    assert load_latest(tmp_path)[0].step == 10
    warned = [r for r in caplog.records if "step_00000020.json" in r.getMessage()]
    assert len(warned) == 2  # one warning per listing, nothing raised
    with pytest.raises(CorruptCheckpoint):
        load_checkpoint(checkpoint_path(tmp_path, 20))


def test_a_checkpoint_that_is_not_a_training_state_is_refused(tmp_path):
    _save_steps(tmp_path, [10])
    with pytest.raises(CorruptCheckpoint, match="not a training state"):
        read_state(checkpoint_path(tmp_path, 10))
    assert latest_state(tmp_path) is None


def test_a_checkpoint_holds_the_state_of_its_step_however_training_goes_on(tmp_path):
    # The weights may be copied while the next step runs, up to before_update(); everything
    # else (here a batch-norm-like buffer) is copied before save() returns.
    weights, buffer = torch.arange(1_000_000.0), torch.zeros(3)
    checkpointer = Checkpointer(tmp_path, keep=3, enabled=True)
    for step in (1, 2):
        state = {"model": {"weight": weights, "running_mean": buffer}, "step": step}
        checkpointer.save(state, step, 0, deferred=lambda t, w=weights: t is w)
        buffer += 1  # the next forward pass
        checkpointer.before_update()
        weights += 1  # the next optimizer step
    checkpointer.close()
    for step in (1, 2):
        saved = load_checkpoint(checkpoint_path(tmp_path, step))
        assert saved["model"]["weight"][:3].tolist() == [step - 1, step, step + 1]
        assert saved["model"]["running_mean"].tolist() == [step - 1] * 3
        assert saved["step"] == step


def test_a_failed_background_copy_or_write_surfaces_at_the_next_save(tmp_path):
    checkpointer = Checkpointer(tmp_path / "file-not-dir", keep=1, enabled=True)
    (tmp_path / "file-not-dir").write_text("in the way")
    checkpointer.save({"w": torch.ones(2)}, 1, 0, deferred=lambda _: True)
    checkpointer.before_update()  # the copy ran; the write fails after it
    with pytest.raises(OSError):
        checkpointer.save({"w": torch.ones(2)}, 2, 0)
