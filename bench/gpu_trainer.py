"""The trainer on a GPU: its steps/s over a bare loop, its checkpoints' cost over the bare loop and
over DCP's `async_save`, whether a preempted run resumes bit for bit, and peak GPU memory.

Throughput (`ddp`, `compile`, `fsdp`): the trainer (`vtp.trainer.train.run`, one process on the
first GPU, with --strategy and --compile as named; FSDP in one process shards nothing, so `fsdp`
shows the cost of its code path) against a bare loop written by hand on the same device: the same
task model, global batch, data order, precision (bf16 autocast by default), optimizer and schedule,
compiled with torch.compile for `compile`. The trainer's figure is its own loop throughput (first to
last step, progress lines and stop-signal checks included; set-up, the final evaluation and writes
excluded); the bare loop's is its loop, the GPU's queued work included. Rounds alternate the two;
`<variant>_steps_per_s` are best rounds, `<variant>_ratio` the median over rounds of the ratio
within a round (drift cancels out). Compile time counts in both, in every round (later rounds hit
torch.compile's caches); `--epochs` makes the loops longer.

Checkpoints (`checkpoint_*`): bench/checkpoint_scale.py's comparison, on the GPU: a model of
about 29M parameters (350 MB of state with AdamW's moments) training with a checkpoint every
`--every` seconds through vtp.trainer.checkpoint.Checkpointer, against the same loop without
checkpoints and with `torch.distributed.checkpoint.async_save`.

Resume (`resume_bitwise`): a run of the default task on the GPU gets SIGTERM once its first
checkpoint exists, saves and stops; run again, it resumes, and its final model.pt must equal an
uninterrupted run's bit for bit.

Prints one JSON line. Without a CUDA GPU it says so in that line (`"gpu": false`, and why) and
exits 0. Goals: every `<variant>_ratio` >= 0.98, checkpoint_trainer_over_async_save >= 1.0.

    python bench/gpu_trainer.py [--epochs 50] [--rounds 5] [--seconds 10] [--every 2]
"""

import argparse
import dataclasses
import json
import logging
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import checkpoint_scale
import torch
import torch.nn.functional as F
import trainer_overhead

from vtp.trainer import train
from vtp.trainer.config import Config
from vtp.trainer.distributed import Runtime

VARIANTS = {
    "ddp": {},
    "compile": {"compile": True},
    "fsdp": {"strategy": "fsdp"},
}
"""The trainer's flags per throughput variant (one process: DDP wraps nothing, FSDP shards
nothing; each runs its own code path)."""
MB = 2**20


def bare_loop(config: Config, device: torch.device) -> float:
    """Train by hand on `device` as the trainer would; steps/s over the loop."""
    parts = trainer_overhead.bare_parts(config, device, pin_memory=True)
    model, optimizer, scheduler = parts.model, parts.optimizer, parts.scheduler
    sampler, loader, total = parts.sampler, parts.loader, parts.total
    forward = torch.compile(model) if config.compile else model
    bf16 = config.precision == "bf16"
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    for epoch in range(config.epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            inputs = inputs.to(device, non_blocking=True)
            targets = targets.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
                loss = F.cross_entropy(forward(inputs), targets)
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize(device)
    return total / (time.perf_counter() - start)


def with_dirs(config: Config, out: Path, **flags: Any) -> Config:
    """`config` writing under `out`, with `flags` changed."""
    return dataclasses.replace(
        config,
        checkpoint_dir=str(out / "checkpoints"),
        model_dir=str(out / "model"),
        tensorboard_dir=str(out / "logs"),
        **flags,
    )


def trainer_loop(config: Config, device: torch.device) -> tuple[float, int]:
    """The trainer's loop steps/s on `device`, and its peak GPU memory (bytes)."""
    runtime = Runtime(rank=0, world_size=1, local_rank=0, device=device)
    torch.cuda.reset_peak_memory_stats(device)
    with tempfile.TemporaryDirectory() as out:
        result = train.run(with_dirs(config, Path(out)), runtime)
    return result.steps_per_second, torch.cuda.max_memory_allocated(device)


def throughput(config: Config, device: torch.device, rounds: int) -> dict[str, Any]:
    """Each variant's trainer and bare steps/s, ratio and peak memory."""
    figures: dict[str, Any] = {}
    for name, flags in VARIANTS.items():
        variant = dataclasses.replace(config, **flags)
        best = {"bare": 0.0, "trainer": 0.0}
        ratios, peak = [], 0
        for round_ in range(rounds):
            rates = {}
            for side in ("bare", "trainer") if round_ % 2 == 0 else ("trainer", "bare"):
                if side == "bare":
                    rates[side] = bare_loop(variant, device)
                else:
                    rates[side], used = trainer_loop(variant, device)
                    peak = max(peak, used)
                best[side] = max(best[side], rates[side])
            ratios.append(rates["trainer"] / rates["bare"])
        figures[f"{name}_bare_steps_per_s"] = round(best["bare"], 1)
        figures[f"{name}_trainer_steps_per_s"] = round(best["trainer"], 1)
        figures[f"{name}_ratio"] = round(statistics.median(ratios), 3)
        figures[f"{name}_peak_memory_mb"] = round(peak / MB)
    return figures


def resumes_bitwise(config: Config, device: torch.device, folder: Path) -> dict[str, Any]:
    """Whether a run stopped by SIGTERM after its first checkpoint, then run again, ends with
    the model of an uninterrupted run, bit for bit."""
    runtime = Runtime(rank=0, world_size=1, local_rank=0, device=device)
    config = dataclasses.replace(config, dropout=0.1, checkpoint_interval=100)
    train.run(with_dirs(config, folder / "whole"), runtime)
    stopped = with_dirs(config, folder / "stopped")
    checkpoints = Path(stopped.checkpoint_dir)

    def preempt() -> None:  # as Vertex does: SIGTERM to the process, mid-run
        while not list(checkpoints.glob("step_*.json")):
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGTERM)

    watcher = threading.Thread(target=preempt, daemon=True)
    watcher.start()
    first = train.run(stopped, runtime)  # the handler is the trainer's while it trains
    watcher.join()
    if not first.preempted:
        return {"resume_bitwise": None, "resume_note": "the run ended before SIGTERM arrived"}
    second = train.run(stopped, runtime)
    whole = torch.load(folder / "whole" / "model" / "model.pt", weights_only=True)
    resumed = torch.load(folder / "stopped" / "model" / "model.pt", weights_only=True)
    same = whole.keys() == resumed.keys() and all(torch.equal(whole[k], resumed[k]) for k in whole)
    return {
        "resume_bitwise": same,
        "resume_stopped_at": first.step,
        "resumed_from": second.resumed_from,
        "model_pt_devices": sorted({str(t.device) for t in resumed.values()}),
    }


def no_gpu() -> dict[str, Any]:
    """The line for a machine without a CUDA GPU."""
    build = torch.version.cuda or "none (a CPU build)"
    return {
        "bench": "gpu_trainer",
        "gpu": False,
        "reason": f"no CUDA GPU visible (torch {torch.__version__}, CUDA {build}): nothing "
        "measured; run it on a machine with an NVIDIA GPU",
    }


def main() -> int:
    """Measure and print one JSON line (the no-GPU line without a GPU)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=50, help="epochs of each throughput run")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--precision", choices=("bf16", "fp32"), default="bf16")
    parser.add_argument("--seconds", type=float, default=10.0, help="per checkpoint variant")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between checkpoints")
    options = parser.parse_args()
    if not torch.cuda.is_available():
        print(json.dumps(no_gpu()))
        return 0
    device = torch.device("cuda", 0)
    torch.cuda.set_device(device)
    logging.getLogger("trainer").setLevel(logging.WARNING)  # stdout: the one JSON line
    steps = options.epochs * (1437 // Config().batch_size)
    config = dataclasses.replace(
        Config(),
        epochs=options.epochs,
        eval_interval=steps + 1,  # evaluated once, after the loop, as the bare loop is not
        checkpoint_interval=0,
        precision=options.precision,
    )
    figures: dict[str, Any] = {
        "bench": "gpu_trainer",
        "gpu": True,
        "device": torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "precision": options.precision,
        "steps": steps,
        "batch_size": config.batch_size,
        "rounds": options.rounds,
    }
    figures.update(throughput(config, device, options.rounds))
    with tempfile.TemporaryDirectory() as scratch:
        figures.update(resumes_bitwise(config, device, Path(scratch)))
    torch.cuda.reset_peak_memory_stats(device)
    with tempfile.TemporaryDirectory() as scratch:
        compared = checkpoint_scale.compare(
            Path(scratch), options.seconds, options.every, options.rounds, "cuda"
        )
    figures.update({f"checkpoint_{name}": value for name, value in compared.items()})
    figures["checkpoint_peak_memory_mb"] = round(torch.cuda.max_memory_allocated(device) / MB)
    figures.update(goal_ratio=0.98, goal_checkpoint_trainer_over_async_save=1.0)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
