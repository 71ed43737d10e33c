"""Sharded checkpoints are artifacts: reading one runs nothing in it (`trainer.dcp_safe`).

A checkpoint saved by torch.distributed.checkpoint reads back through our reader as through
DCP's own; one whose `.metadata` or a byte entry was replaced by a pickle that calls a function
is refused before anything in it runs, whether its manifest was rewritten to match or not."""

import pickle
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp
from torch import nn

from trainer.dcp_safe import UnreadableCheckpoint, load_in_place, load_whole

MARK = "vtp-dcp-safe-ran"
PLANTED_REFUSED = r"not part of a checkpoint|Weights only load|metadata is None"
"""How the refusal reads: our unpickler's words or torch's weights_only loader's; torch 2.11
reports a `.metadata` its reader refused as "metadata is None" (2.13 passes our error on)."""


class _Runs:
    """What an attacker pickles: unpickling it calls os.system."""

    def __reduce__(self):
        return (__import__("os").system, (f"touch {MARK}",))


def _saved(folder: Path) -> tuple[Path, dict]:
    model = nn.Linear(3, 2)
    optim = torch.optim.AdamW(model.parameters())
    model(torch.ones(4, 3)).sum().backward()
    optim.step()
    state = {"model": model.state_dict(), "optim": optim.state_dict(), "step": 7}
    dcp.save(state, checkpoint_id=folder / "ckpt", no_dist=True)
    return folder / "ckpt", state


def test_a_checkpoint_reads_back_whole_and_in_place(tmp_path):
    directory, saved = _saved(tmp_path)
    whole = load_whole(directory)
    assert torch.equal(whole["model"]["weight"], saved["model"]["weight"])
    assert whole["step"] == 7 and whole["optim"]["param_groups"][0]["lr"] == 1e-3
    target = {"model": nn.Linear(3, 2).state_dict(), "step": 0}
    load_in_place(target, directory)
    assert torch.equal(target["model"]["bias"], saved["model"]["bias"]) and target["step"] == 7


@pytest.mark.parametrize("planted", [".metadata", "byte entry"])
def test_a_planted_pickle_is_refused_and_runs_nothing(tmp_path, monkeypatch, planted):
    monkeypatch.chdir(tmp_path)
    directory, _ = _saved(tmp_path)
    if planted == ".metadata":
        (directory / ".metadata").write_bytes(pickle.dumps(_Runs()))
    else:  # the step count, saved as bytes, swapped for a pickle of the same length slot
        evil = {"model": nn.Linear(3, 2).state_dict(), "optim": {}, "step": _Runs()}
        dcp.save(evil, checkpoint_id=tmp_path / "evil", no_dist=True)
        directory = tmp_path / "evil"
    with pytest.raises(UnreadableCheckpoint, match=PLANTED_REFUSED):
        load_whole(directory)
    with pytest.raises(UnreadableCheckpoint, match=PLANTED_REFUSED):
        load_in_place({"model": nn.Linear(3, 2).state_dict(), "step": 0}, directory)
    assert not (tmp_path / MARK).exists()
