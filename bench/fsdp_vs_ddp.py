"""DDP against FSDP (--strategy) on the same model: steps/s, memory per process, checkpoint time.

Both strategies train the built-in digits task's MLP made wide (--hidden_size, default 2048:
4.3M parameters) with the trainer's own `build`, `loop` and `finish`, on N processes of one
thread each over gloo (CPU), in turn, rounds alternating. Per strategy and process:

    steps_per_s       the loop's throughput (first to last step; set-up and final writes excluded)
    state_mib         parameters, gradients and AdamW moments this process holds (FSDP: 1/N)
    peak_rss_mib      the process's peak resident memory (torch itself included)
    checkpoint_s      one checkpoint written to disk: torch.save by rank 0 (DDP) or every rank's
                      shard through torch.distributed.checkpoint, hashed and committed (FSDP)

Figures are the best of the rounds (the median process per round); other work on the machine
makes wall-clock figures noisy. On CPU FSDP pays for an all-gather per block per pass that DDP
does not need: what it buys is memory, which the state_mib column shows.

Prints one JSON line. Usage: python bench/fsdp_vs_ddp.py [--processes 2] [--steps 40] [--rounds 2]
"""

import argparse
import json
import logging
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from torch.distributed.tensor import DTensor

from vtp.trainer import train
from vtp.trainer.config import Config
from vtp.trainer.distributed import Nodes, Placement, free_port, init, shutdown


def _local_bytes(tensor: torch.Tensor) -> int:
    local = tensor.to_local() if isinstance(tensor, DTensor) else tensor
    return local.numel() * local.element_size()


def _child(config: Config, placement: Placement, results: Any) -> None:
    torch.set_num_threads(1)
    sys.stdout = sys.stderr  # the trainer's progress lines: stdout holds the JSON line only
    runtime = init(placement, timeout_s=600)
    logging.getLogger("trainer").setLevel(logging.WARNING)
    t = train.build(config, runtime)
    ending = train.loop(t)
    params = list(t.net.parameters())
    state = sum(_local_bytes(p) * 2 for p in params)  # the parameter and its gradient
    state += sum(
        _local_bytes(v)
        for s in t.optimizer.state.values()
        for v in s.values()
        if isinstance(v, torch.Tensor)
    )
    t.runtime.barrier()
    start = time.perf_counter()
    t.save()
    t.checkpointer.wait()
    t.runtime.barrier()
    checkpoint_s = time.perf_counter() - start
    train.finish(t, ending)
    results.put(
        {
            "rank": runtime.rank,
            "steps_per_s": (t.step - ending.start_step) / ending.seconds,
            "state_mib": state / 2**20,
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "checkpoint_s": checkpoint_s,
        }
    )
    shutdown(runtime)


def run(strategy: str, processes: int, steps: int, hidden: int, scratch: Path) -> dict[str, Any]:
    """One run of `strategy`: the median process's figures."""
    out = scratch / f"{strategy}-{time.monotonic_ns()}"
    config = Config(
        hidden_size=hidden,
        batch_size=64,
        max_steps=steps,
        eval_interval=10**6,
        log_interval=10**6,
        checkpoint_interval=0,
        strategy=strategy,  # type: ignore[arg-type]
        checkpoint_dir=str(out / "checkpoints"),
        model_dir=str(out / "model"),
        tensorboard_dir=str(out / "logs"),
    )
    nodes = Nodes("127.0.0.1", free_port(), count=1, rank=0)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    children = [
        context.Process(target=_child, args=(config, Placement(nodes, processes, i), results))
        for i in range(processes)
    ]
    for child in children:
        child.start()
    rows = [results.get(timeout=600) for _ in children]
    for child in children:
        child.join()
        assert child.exitcode == 0, f"a {strategy} process exited with {child.exitcode}"
    return {key: statistics.median(row[key] for row in rows) for key in rows[0] if key != "rank"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--hidden_size", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    best: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(args.rounds):
            for strategy in ("ddp", "fsdp"):
                found = run(strategy, args.processes, args.steps, args.hidden_size, Path(scratch))
                kept = best.setdefault(strategy, found)
                for key, value in found.items():  # fastest and smallest of the rounds
                    kept[key] = (
                        max(kept[key], value) if key == "steps_per_s" else min(kept[key], value)
                    )
    hidden = args.hidden_size
    parameters = 64 * hidden + hidden + hidden * hidden + hidden + hidden * 10 + 10
    print(
        json.dumps(
            {
                "bench": "fsdp_vs_ddp",
                "device": "cpu (gloo), 1 thread per process",
                "processes": args.processes,
                "parameters": parameters,
                "steps": args.steps,
                **{k: {n: round(v, 3) for n, v in figures.items()} for k, figures in best.items()},
                "fsdp_steps_ratio": round(
                    best["fsdp"]["steps_per_s"] / best["ddp"]["steps_per_s"], 3
                ),
                "fsdp_state_ratio": round(best["fsdp"]["state_mib"] / best["ddp"]["state_mib"], 3),
            }
        )
    )


if __name__ == "__main__":
    main()
