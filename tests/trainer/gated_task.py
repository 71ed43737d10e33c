"""A test task: the digits task, whose training set can stop at a chosen fetch.

Set by environment (read at run time): `GATE_DIR` turns the gate on; after `GATE_AFTER` fetched
examples, each process writes `GATE_DIR/waiting.<rank>` and blocks until `GATE_DIR/open` exists.
With `GATE_FAIL_RANK` set, that rank raises there instead and the others do not stop. Without
`GATE_DIR` it is exactly the digits task, so gated and ungated runs train the same model.
"""

import os
import time
from pathlib import Path

import torch.distributed as dist
from torch.utils.data import Dataset

from vtp.trainer.tasks import digits

labels = digits.labels
build_model = digits.build_model


class GatedDataset(Dataset):
    """Passes examples through, then blocks (or fails) after a number of fetches."""

    def __init__(self, inner: Dataset, gate_dir: Path, after: int, fail_rank: int) -> None:
        self.inner, self.gate_dir, self.after, self.fail_rank = inner, gate_dir, after, fail_rank
        self.fetched = 0

    def __len__(self) -> int:
        return len(self.inner)

    def __getitem__(self, index: int):
        self.fetched += 1
        if self.fetched > self.after:
            rank = dist.get_rank() if dist.is_initialized() else 0
            if rank == self.fail_rank:
                raise RuntimeError(f"gated_task: rank {rank} fails on purpose")
            if self.fail_rank >= 0:
                return self.inner[index]
            (self.gate_dir / f"waiting.{rank}").touch()
            while not (self.gate_dir / "open").exists():
                time.sleep(0.01)
        return self.inner[index]


def build_datasets(config):
    """The digits data sets, the training one gated when GATE_DIR is set."""
    train_set, eval_set = digits.build_datasets(config)
    if not os.environ.get("GATE_DIR"):
        return train_set, eval_set
    gate = GatedDataset(
        train_set,
        Path(os.environ["GATE_DIR"]),
        int(os.environ["GATE_AFTER"]),
        int(os.environ.get("GATE_FAIL_RANK", "-1")),
    )
    return gate, eval_set
