"""Checkpoints at realistic scale: a model of tens of millions of parameters, saved every few
seconds of training, against the same loop without checkpoints and against
`torch.distributed.checkpoint.async_save` on the same model, in one run.

The model is an MLP of 2048-wide layers (about 29M parameters; with AdamW's two moments each
checkpoint holds about 350 MB). Each variant trains for `--seconds`; checkpoints come every
`--every` seconds' worth of steps (the step count is fixed from the first, bare round so every
variant saves at the same steps):

    bare          the loop alone
    trainer       vtp.trainer.checkpoint.Checkpointer: what `python -m vtp.trainer` does (stage the
                  state, copy the weights while the next step runs, write, hash, fsync)
    async_save    torch.distributed.checkpoint.async_save of the same state dict, waiting for
                  the previous save to finish before starting the next (as its docs advise)

Training runs on `--threads` intra-op threads (default: one core fewer than the machine has),
leaving a core to the checkpoint thread as a GPU host leaves its CPU cores: with every core
training, whatever writes a checkpoint in the background (this trainer or async_save) takes its
CPU time from training, and the comparison measures the machine's page-cache bandwidth.
Rounds alternate the variants, each round starting with the next. The `_steps_per_s` figures
are each variant's best round; the ratios are the median over rounds of the ratio within a
round, so slow drift in the machine's speed (a shared VM's) cancels out. Prints one JSON line.
Goals: trainer_over_bare >= 0.98, trainer_over_async_save >= 1.0.

    python bench/checkpoint_scale.py [--seconds 10] [--every 4] [--rounds 7]
"""

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn.functional as F
from torch import nn

from vtp.trainer.checkpoint import Checkpointer, list_checkpoints
from vtp.trainer.snapshot import changed_by_step

WIDTH, LAYERS, BATCH = 2048, 7, 64
PAIRS = (("trainer", "bare"), ("async_save", "bare"), ("trainer", "async_save"))


def build(device: str = "cpu") -> tuple[nn.Module, torch.optim.Optimizer]:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(LAYERS - 1):
        layers += [nn.Linear(WIDTH, WIDTH), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(WIDTH, 10)).to(device)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4)


def step(model: nn.Module, optimizer: torch.optim.Optimizer, before_update: Callable) -> None:
    device = next(model.parameters()).device
    inputs = torch.randn(BATCH, WIDTH, device=device)
    targets = torch.randint(0, 10, (BATCH,), device=device)
    F.cross_entropy(model(inputs), targets).backward()
    before_update()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def state_of(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict:
    return {"model": model.state_dict(), "optimizer": optimizer.state_dict()}


class Bench:
    """One model, optimizer and checkpointer for every variant and round, as one training run
    has: fresh ones per run would make each run's memory layout (and its speed) differ."""

    def __init__(self, folder: Path, device: str = "cpu") -> None:
        self.folder = folder
        self.device = torch.device(device)
        self.model, self.optimizer = build(device)
        step(self.model, self.optimizer, lambda: None)  # the optimizer state exists from here
        self.checkpointer = Checkpointer(folder / "trainer", keep=2, enabled=True)
        self.steps = 0

    def run(self, variant: str, seconds: float, every_steps: int) -> float:
        """Steps per second over `seconds` of training with `variant`'s checkpoints."""
        model, optimizer, checkpointer = self.model, self.optimizer, self.checkpointer
        deferred = changed_by_step(model, optimizer)
        pending, steps = None, 0
        self.synchronize()
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            step(model, optimizer, checkpointer.before_update)
            steps += 1
            if variant == "bare" or steps % every_steps:
                continue
            self.steps += 1
            if variant == "trainer":
                checkpointer.save(state_of(model, optimizer), self.steps, 0, deferred)
            else:
                if pending is not None:
                    pending.result()
                path = self.folder / "dcp" / f"step_{self.steps}"
                pending = dcp.async_save(state_of(model, optimizer), checkpoint_id=str(path))
        self.synchronize()  # a GPU's queued steps count
        elapsed = time.perf_counter() - started
        checkpointer.wait()
        if pending is not None:
            pending.result()
        return steps / elapsed

    def synchronize(self) -> None:
        """Wait for the work queued on the GPU (nothing on the CPU)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def compare(
    scratch: Path, seconds: float, every: float, rounds: int, device: str = "cpu"
) -> dict[str, float | int]:
    """Run the rounds on `device` in folder `scratch`; the figures (see the module docstring)."""
    best = {"bare": 0.0, "trainer": 0.0, "async_save": 0.0}
    every_steps = 0
    # async_save's collectives need a process group: one of one, through a file (no port).
    rendezvous = f"file://{scratch}/rendezvous"
    dist.init_process_group("gloo", init_method=rendezvous, rank=0, world_size=1)
    bench = Bench(scratch, device)
    params = sum(p.numel() for p in bench.model.parameters())
    order, ratios = list(best), {pair: [] for pair in PAIRS}
    for round_ in range(rounds):
        # Each round starts with another variant, so no variant always runs first or last.
        rates = {}
        for variant in order[round_ % 3 :] + order[: round_ % 3]:
            if variant != "bare" and not every_steps:
                every_steps = max(1, round(bench.run("bare", 3.0, 1) * every))
            rates[variant] = bench.run(variant, seconds, every_steps)
            best[variant] = max(best[variant], rates[variant])
        for mine, theirs in PAIRS:
            ratios[(mine, theirs)].append(rates[mine] / rates[theirs])
    bench.checkpointer.close()
    assert list_checkpoints(scratch / "trainer"), "the trainer wrote no checkpoint"
    dist.destroy_process_group()
    return {
        "params_m": round(params / 1e6, 1),
        "checkpoint_mb": round(params * 3 * 4 / 2**20),
        "every_steps": every_steps,
        "every_s": every,
        **{f"{variant}_steps_per_s": round(rate, 2) for variant, rate in best.items()},
        **{
            f"{mine}_over_{theirs}": round(statistics.median(ratios[(mine, theirs)]), 3)
            for mine, theirs in PAIRS
        },
        "rounds": rounds,
        "seconds_per_run": seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--every", type=float, default=4.0, help="seconds between checkpoints")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    options = parser.parse_args()
    torch.set_num_threads(options.threads)
    with tempfile.TemporaryDirectory() as scratch:
        figures = compare(Path(scratch), options.seconds, options.every, options.rounds)
    figures = {**figures, "threads": torch.get_num_threads()}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
