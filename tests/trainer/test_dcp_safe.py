"""Sharded checkpoints are artifacts: reading one runs nothing in it (`vtp.trainer.dcp_safe`).

A checkpoint saved by torch.distributed.checkpoint reads back through our reader as through
DCP's own; one whose `.metadata` or a byte entry was replaced by a pickle that calls a function
is refused before anything in it runs, whether its manifest was rewritten to match or not. A
`.metadata` naming files outside the checkpoint (`../`, absolute, through a link) or slices
outside its files is refused too (issue #38), where DCP's own reader loads what it names."""

import dataclasses
import os
import pickle
from pathlib import Path

import pytest
import torch
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.filesystem import FileSystemReader

from vtp.trainer.dcp_safe import UnreadableCheckpoint, load_in_place, load_whole, read_metadata

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


def _secret(folder: Path) -> tuple[Path, torch.Tensor]:
    """Another checkpoint of the same shape, outside the one being read: what an attacker's
    `.metadata` points at. Its data file, and the weight in it."""
    model = nn.Linear(3, 2)
    optim = torch.optim.AdamW(model.parameters())
    model(torch.ones(4, 3)).sum().backward()
    optim.step()  # the same entries as `_saved`'s, at the same offsets
    with torch.no_grad():
        model.weight.fill_(42.0)
    state = {"model": model.state_dict(), "optim": optim.state_dict(), "step": 7}
    dcp.save(state, checkpoint_id=folder / "secret", no_dist=True)
    (data,) = (folder / "secret").glob("*.distcp")
    return data, model.weight.detach().clone()


def _rewrite(directory: Path, change) -> None:
    """Rewrite `.metadata`, applying `change(_StorageInfo) -> _StorageInfo` to every entry."""
    with open(directory / ".metadata", "rb") as file:
        metadata = read_metadata(file)
    metadata.storage_data = {k: change(v) for k, v in metadata.storage_data.items()}
    (directory / ".metadata").write_bytes(pickle.dumps(metadata))


@pytest.mark.parametrize("how", ["../", "absolute", "link"])
def test_metadata_naming_a_file_outside_the_checkpoint_is_refused(tmp_path, how):
    directory, _ = _saved(tmp_path)
    outside, secret_weight = _secret(tmp_path)
    if how == "link":  # a name inside that leads out
        (directory / "inside.distcp").symlink_to(outside)
    path = {
        "../": f"../secret/{outside.name}",
        "absolute": str(outside),
        "link": "inside.distcp",
    }[how]
    _rewrite(directory, lambda info: dataclasses.replace(info, relative_path=path))

    # DCP's own reader follows the names: the model gets the other file's weights.
    stock = {"model": nn.Linear(3, 2).state_dict(), "step": 0}
    dcp.load(stock, storage_reader=FileSystemReader(directory), no_dist=True)
    assert torch.equal(stock["model"]["weight"], secret_weight)

    target = {"model": nn.Linear(3, 2).state_dict(), "step": 0}
    before = target["model"]["weight"].clone()
    outside_words = r"outside the checkpoint folder"
    with pytest.raises(UnreadableCheckpoint, match=outside_words):
        load_in_place(target, directory)
    with pytest.raises(UnreadableCheckpoint, match=outside_words):
        load_whole(directory)
    assert torch.equal(target["model"]["weight"], before)


@pytest.mark.parametrize(
    ("offset", "length"), [(10**9, 8), (0, 10**9), (-1, 8), (0, -1), ("0", 8), (True, 8)]
)
def test_metadata_slicing_outside_its_file_is_refused(tmp_path, offset, length):
    directory, _ = _saved(tmp_path)
    _rewrite(directory, lambda info: dataclasses.replace(info, offset=offset, length=length))
    with pytest.raises(UnreadableCheckpoint, match=r"outside the file|integers"):
        load_whole(directory)


@pytest.mark.parametrize("name", ["", "a\\b", "missing.distcp", "."])
def test_metadata_naming_no_file_of_the_checkpoint_is_refused(tmp_path, name):
    directory, _ = _saved(tmp_path)
    _rewrite(directory, lambda info: dataclasses.replace(info, relative_path=name))
    with pytest.raises(
        UnreadableCheckpoint,
        match=r"storage entry .*(not a file name|No such file|outside the checkpoint)",
    ):
        load_whole(directory)


def test_metadata_naming_a_fifo_is_refused_without_waiting(tmp_path):
    directory, _ = _saved(tmp_path)
    os.mkfifo(directory / "pipe.distcp")
    _rewrite(directory, lambda info: dataclasses.replace(info, relative_path="pipe.distcp"))
    with pytest.raises(UnreadableCheckpoint, match=r"not a regular file"):
        load_whole(directory)
