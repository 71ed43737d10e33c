"""Trainer overhead: `vtp.trainer.train.run` steps/s over a bare PyTorch loop doing the same work.

Both sides train the built-in digits task's model with the default config's optimizer, schedule,
global batch and data order, in this process with one thread; the bare loop is what one would
write by hand (DataLoader, forward, backward, AdamW, LambdaLR). The trainer runs once without
periodic checkpoints and once with a checkpoint every 50 steps; its figure is its own loop
throughput (first to last step, progress lines, TensorBoard scalars, the stop-signal check and
checkpoints included; set-up and the final writes excluded). Rounds alternate the three runs and
each figure is the best of its rounds, which filters out noise from other work on the machine.
The trainer evaluates only once, at the end, since the bare loop does not evaluate.

Wall-clock figures drift when other processes share the cores, so the `cpu_` ratios also compare
the CPU time of whole runs (this process, all threads; best of the rounds). They charge the
trainer for everything it does beyond the loop (TensorBoard writer, final evaluation, model and
checkpoint writes), so they understate it a little.

Prints one JSON line. Goals: ratio >= 0.95, ratio_checkpoint_every_50 >= 0.90.
Usage: python bench/trainer_overhead.py [--epochs 60] [--rounds 5]
"""

import argparse
import dataclasses
import json
import logging
import math
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler

from vtp.trainer import train
from vtp.trainer.checkpoint import seed_everything
from vtp.trainer.config import Config
from vtp.trainer.distributed import Runtime
from vtp.trainer.tasks import load_task


@dataclasses.dataclass
class BareParts:
    """What a hand-written loop trains with: the trainer's model, optimizer, schedule and data
    order for `config`, and its step count."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    sampler: DistributedSampler
    loader: DataLoader
    total: int


def bare_parts(
    config: Config, device: torch.device | None = None, pin_memory: bool = False
) -> BareParts:
    """The parts of a bare loop as the trainer builds them (model on `device`, if given)."""
    task = load_task(config.task)
    seed_everything(config.seed)
    model = task.build_model(config)
    if device is not None:
        model = model.to(device)
    train_set, _ = task.build_datasets(config)
    total = config.epochs * (len(train_set) // config.batch_size)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    schedule = train.lr_schedule(config.lr_schedule, config.warmup_steps, total)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    sampler = DistributedSampler(train_set, num_replicas=1, rank=0, shuffle=True, seed=config.seed)
    loader = DataLoader(
        train_set,
        batch_size=config.batch_size,
        sampler=sampler,
        drop_last=True,
        pin_memory=pin_memory,
    )
    return BareParts(model, optimizer, scheduler, sampler, loader, total)


def bare_loop(config: Config) -> tuple[float, dict[str, torch.Tensor]]:
    """Train by hand; return steps/s over the loop and the final parameters."""
    parts = bare_parts(config)
    model, optimizer, scheduler = parts.model, parts.optimizer, parts.scheduler
    sampler, loader, total = parts.sampler, parts.loader, parts.total
    start = time.perf_counter()
    for epoch in range(config.epochs):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            loss = F.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
    return total / (time.perf_counter() - start), model.state_dict()


def trainer_loop(config: Config, checkpoint_interval: int) -> tuple[float, dict[str, torch.Tensor]]:
    """Train with the trainer in this process; return its loop steps/s and final parameters."""
    runtime = Runtime(rank=0, world_size=1, local_rank=0, device=torch.device("cpu"))
    with tempfile.TemporaryDirectory() as out:
        run_config = dataclasses.replace(
            config,
            checkpoint_interval=checkpoint_interval,
            checkpoint_dir=f"{out}/checkpoints",
            model_dir=f"{out}/model",
            tensorboard_dir=f"{out}/logs",
        )
        result = train.run(run_config, runtime)
        model = torch.load(Path(out) / "model" / "model.pt", weights_only=True)
    return result.steps_per_second, model


def main() -> None:
    """Run the rounds and print the figures as one JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    defaults = Config()
    steps = args.epochs * (1437 // defaults.batch_size)
    config = dataclasses.replace(defaults, epochs=args.epochs, eval_interval=steps)
    best = {"bare": 0.0, "trainer": 0.0, "trainer_ckpt50": 0.0}
    cpu = {name: math.inf for name in best}
    same_params = True
    logging.getLogger("trainer").setLevel(logging.WARNING)  # keep stdout to the one JSON line
    for _ in range(args.rounds):
        started = time.process_time()
        rate, bare_params = bare_loop(config)
        best["bare"], cpu["bare"] = (
            max(best["bare"], rate),
            min(cpu["bare"], time.process_time() - started),
        )
        for name, interval in (("trainer", 0), ("trainer_ckpt50", 50)):
            started = time.process_time()
            rate, params = trainer_loop(config, interval)
            best[name], cpu[name] = (
                max(best[name], rate),
                min(cpu[name], time.process_time() - started),
            )
            same_params &= all(torch.equal(params[k], bare_params[k]) for k in bare_params)
    print(
        json.dumps(
            {
                "bench": "trainer_overhead",
                "device": "cpu",
                "threads": 1,
                "steps": steps,
                "batch_size": config.batch_size,
                "rounds": args.rounds,
                "bare_steps_per_s": round(best["bare"], 1),
                "trainer_steps_per_s": round(best["trainer"], 1),
                "trainer_checkpoint_every_50_steps_per_s": round(best["trainer_ckpt50"], 1),
                "ratio": round(best["trainer"] / best["bare"], 3),
                "ratio_checkpoint_every_50": round(best["trainer_ckpt50"] / best["bare"], 3),
                "cpu_ratio": round(cpu["bare"] / cpu["trainer"], 3),
                "cpu_ratio_checkpoint_every_50": round(cpu["bare"] / cpu["trainer_ckpt50"], 3),
                "goal_ratio": 0.95,
                "goal_ratio_checkpoint_every_50": 0.90,
                "same_final_parameters": same_params,
            }
        )
    )


if __name__ == "__main__":
    main()
