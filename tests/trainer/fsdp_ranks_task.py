"""A test task: the digits task, whose every process notes where it sits in the job.

With `RANKS_DIR` set, each process writes `RANKS_DIR/<rank>.json` when it builds its data sets:
its rank and world size in the process group, the torchrun variables it was given, its pid,
and the GPUs it sees (CUDA_VISIBLE_DEVICES as given, and how many devices torch finds).
"""

import json
import os
from pathlib import Path

import torch
import torch.distributed as dist

from vtp.trainer.tasks import digits

labels = digits.labels
build_model = digits.build_model

TORCHRUN = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK")


def build_datasets(config):
    """The digits data sets; the process's place noted first."""
    if os.environ.get("RANKS_DIR"):
        rank = dist.get_rank() if dist.is_initialized() else 0
        noted = {
            "rank": rank,
            "world_size": dist.get_world_size() if dist.is_initialized() else 1,
            "pid": os.getpid(),
            "env": {name: os.environ.get(name) for name in TORCHRUN},
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "gpus": torch.cuda.device_count() if torch.cuda.is_available() else 0,
        }
        (Path(os.environ["RANKS_DIR"]) / f"{rank}.json").write_text(json.dumps(noted))
    return digits.build_datasets(config)
