"""The training loop, top to bottom: `run` is `build` (and resume), `loop`, `finish`.

Every process runs `run` with the same config. Data order is a pure function of (seed, epoch)
and the loop's position is a pure function of the global step, so a run resumed from a checkpoint
continues bit for bit where the saved one was, and the global batch splits across processes
without changing the mathematics (gradients are averaged by DDP).
"""

import contextlib
import itertools
import logging
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, Dataset, DistributedSampler

from vtp.trainer.checkpoint import (
    Checkpointer,
    Loaded,
    TrainingState,
    latest_state,
    rng_state,
    seed_everything,
    set_rng_state,
)
from vtp.trainer.config import Config, output_dirs
from vtp.trainer.distributed import Runtime, StopSignal
from vtp.trainer.evaluate import evaluate
from vtp.trainer.metrics import Reporter
from vtp.trainer.snapshot import changed_by_step
from vtp.trainer.tasks import Task, dataset_size, load, loss_function

log = logging.getLogger("trainer")


@dataclass(frozen=True)
class Result:
    """How a run ended."""

    step: int
    """Optimizer steps taken in total (including those before a resume)."""
    preempted: bool
    """True when SIGTERM stopped the run (after saving a checkpoint at `step`)."""
    resumed_from: int
    """The step this run started at (0 for a fresh run)."""
    steps_per_second: float
    """Training throughput of this run's loop, checkpoints and evaluations included."""
    metrics: dict[str, Any] | None
    """The final evaluation; None when preempted."""


@dataclass
class Training:
    """Everything `build` makes for one process's run; `loop` advances `step`."""

    config: Config
    runtime: Runtime
    net: nn.Module
    """The model itself: what checkpoints hold and evaluation runs."""
    model: Callable[[torch.Tensor], torch.Tensor]
    """`net` as trained, inputs to logits: wrapped in DDP across processes, compiled with
    --compile (torch.compile's result is typed as the callable it was given)."""
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    eval_set: Dataset
    task: Task
    """The task module: its loss trains the model, its metrics evaluate it."""
    labels: Sequence[str]
    per_process_batch: int
    steps_per_epoch: int
    total_steps: int
    checkpointer: Checkpointer
    reporter: Reporter
    sampler: "ResumableSampler"
    loader: DataLoader
    loader_seed: torch.Generator
    model_dir: Path
    step: int = 0

    def state(self) -> TrainingState:
        """What a checkpoint of the current step holds (every process joins the RNG gather)."""
        return TrainingState(
            model=self.net.state_dict(),
            optimizer=self.optimizer.state_dict(),
            scheduler=self.scheduler.state_dict(),
            step=self.step,
            epoch=self.step // self.steps_per_epoch,
            rng=self.runtime.gather_to_main(rng_state()),
            config=self.config.to_dict(),
        )

    def save(self) -> None:
        """Checkpoint the current step (in the background). Parameters and optimizer moments
        change only at the optimizer step, so their copy may run until the loop's next
        `before_update()`."""
        self.checkpointer.save(
            self.state().to_dict(),
            self.step,
            self.step // self.steps_per_epoch,
            deferred=changed_by_step(self.net, self.optimizer),
        )

    def evaluate(self) -> dict[str, Any]:
        """Evaluate `net` on the evaluation set now, and report it."""
        with _gathered(self.config, self.net):  # processes may run different numbers of batches
            result = self._evaluate()
        self.reporter.evaluation(self.step, result)
        return result

    def _evaluate(self) -> dict[str, Any]:
        return evaluate(
            self.net,
            self.eval_set,
            self.labels,
            self.per_process_batch,
            self.runtime,
            self.config.precision,
            self.task,
        )


@dataclass(frozen=True)
class Ending:
    """How the loop stopped."""

    preempted: bool
    metrics: dict[str, Any] | None
    """The last evaluation, if one ran."""
    evaluated_at: int
    start_step: int
    seconds: float
    stop: StopSignal
    """Still watching for SIGTERM: `finish` closes it after the final writes."""


def run(config: Config, runtime: Runtime) -> Result:
    """Train (or finish training) the task's model as one process of the job."""
    training = build(config, runtime)
    ending = loop(training)
    return finish(training, ending)


def build(config: Config, runtime: Runtime) -> Training:
    """The model, data, optimizer and writers, built identically on every process, and resumed
    from the newest valid checkpoint."""
    task, config = load(config)  # the task's own flags typed, its tuning metric resolved
    dirs = output_dirs(config)
    if config.batch_size % runtime.world_size:
        raise ValueError(
            f"--batch_size={config.batch_size} does not split across {runtime.world_size} processes"
        )
    per_process_batch = config.batch_size // runtime.world_size

    seed_everything(config.seed)
    net = task.build_model(config).to(runtime.device)
    if config.strategy == "fsdp":
        from vtp.trainer import fsdp

        fsdp.shard(net, config, runtime)  # before the optimizer: it holds the shards
    train_set, eval_set = task.build_datasets(config)
    examples = dataset_size(train_set)
    steps_per_epoch = examples // config.batch_size
    if steps_per_epoch == 0:
        raise ValueError(f"--batch_size={config.batch_size} exceeds the {examples} examples")
    total_steps = config.epochs * steps_per_epoch
    if config.max_steps:
        total_steps = min(total_steps, config.max_steps)
    optimizer = torch.optim.AdamW(
        net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
    )
    schedule = lr_schedule(config.lr_schedule, config.warmup_steps, total_steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)

    # Only the main process writes; the others run the same code with silent writers.
    checkpointer = Checkpointer(dirs.checkpoints, config.keep_checkpoints, runtime.is_main)
    if config.strategy == "fsdp":  # sharded checkpoints, written by every process
        from vtp.trainer import fsdp

        checkpointer = fsdp.ShardedCheckpointer(
            dirs.checkpoints, config.keep_checkpoints, runtime, net, optimizer
        )
    reporter = Reporter(dirs.tensorboard, config.hypertune_metric, runtime.is_main)
    step = restore(config, runtime, checkpointer, net, optimizer, scheduler)

    model: Callable[[torch.Tensor], torch.Tensor] = net
    if runtime.world_size > 1 and config.strategy == "ddp":
        device_ids = [runtime.device.index] if runtime.device.type == "cuda" else None
        model = DistributedDataParallel(net, device_ids=device_ids)
    if config.compile:
        model = torch.compile(model)

    sampler = ResumableSampler(train_set, runtime, config.seed, per_process_batch)
    # The loader draws worker seeds from its own generator (reseeded per epoch), never from the
    # global one that dropout uses: resuming mid-epoch must not shift either random stream.
    loader_seed = torch.Generator()
    loader = DataLoader(
        train_set,
        batch_size=per_process_batch,
        sampler=sampler,
        drop_last=True,
        num_workers=config.num_workers,
        pin_memory=runtime.device.type == "cuda",
        generator=loader_seed,
    )
    return Training(
        config, runtime, net, model, optimizer, scheduler, eval_set, task, task.labels(config),
        per_process_batch, steps_per_epoch, total_steps, checkpointer, reporter, sampler, loader,
        loader_seed, dirs.model, step,
    )  # fmt: skip


def loop(t: Training) -> Ending:
    """Train until the last step or a SIGTERM, evaluating and checkpointing on the way."""
    config, runtime = t.config, t.runtime
    stop = StopSignal(runtime)
    eval_interval = config.eval_interval or t.steps_per_epoch
    metrics: dict[str, Any] | None = None
    evaluated_at = -1
    preempted = False
    start_step, start_time = t.step, time.perf_counter()
    loss_sum = torch.zeros((), device=runtime.device)
    logged_step, logged_time = t.step, start_time
    loss_of = loss_function(t.task)
    log.info("training %s: step %d of %d, %d per epoch", config.task, t.step, t.total_steps,
             t.steps_per_epoch)  # fmt: skip

    while t.step < t.total_steps and not preempted:
        epoch, batch_in_epoch = divmod(t.step, t.steps_per_epoch)
        t.sampler.set_position(epoch, batch_in_epoch)
        t.loader_seed.manual_seed(config.seed + epoch)
        batches = min(t.steps_per_epoch - batch_in_epoch, t.total_steps - t.step)
        for inputs, targets in itertools.islice(t.loader, batches):
            if stop.should_stop():
                preempted = True
                break
            inputs = inputs.to(runtime.device, non_blocking=True)
            targets = targets.to(runtime.device, non_blocking=True)
            with runtime.autocast(config.precision):
                loss = loss_of(t.model(inputs), targets)
            loss.backward()
            if config.max_grad_norm:
                nn.utils.clip_grad_norm_(t.net.parameters(), config.max_grad_norm)
            t.checkpointer.before_update()  # a checkpoint's copy of the weights is complete
            t.optimizer.step()
            t.scheduler.step()
            t.optimizer.zero_grad(set_to_none=True)
            t.step += 1
            loss_sum += loss.detach()  # stays on the device: no host sync until we log

            if t.step % config.log_interval == 0:
                now = time.perf_counter()
                mean_loss = runtime.all_reduce_sum(loss_sum).item() / runtime.world_size
                scalars = {
                    "loss": mean_loss / (t.step - logged_step),
                    "lr": float(t.scheduler.get_last_lr()[0]),  # typed float | Tensor; a float here
                    "steps_per_second": (t.step - logged_step) / (now - logged_time),
                }
                t.reporter.train(t.step, t.total_steps, t.step // t.steps_per_epoch, scalars)
                loss_sum.zero_()
                logged_step, logged_time = t.step, now
            if t.step % eval_interval == 0:
                metrics, evaluated_at = t.evaluate(), t.step
            if config.checkpoint_interval and t.step % config.checkpoint_interval == 0:
                t.save()
    seconds = time.perf_counter() - start_time
    return Ending(preempted, metrics, evaluated_at, start_step, seconds, stop)


def finish(t: Training, ending: Ending) -> Result:
    """The final evaluation, checkpoint and model; every process waits for the writes."""
    metrics = ending.metrics
    if ending.preempted:
        log.warning("SIGTERM: saving a checkpoint at step %d, then exiting", t.step)
    elif ending.evaluated_at != t.step:
        metrics = t.evaluate()
    if t.checkpointer.last_step != t.step:
        t.save()
    t.checkpointer.close()
    if not ending.preempted:
        final = {**(metrics or {}), "step": t.step}
        state = _full_model_state(t.config, t.net)
        t.reporter.final_model(t.model_dir, state, t.config, final)
    t.reporter.close()
    t.runtime.barrier()  # nobody exits before the main process has written everything
    ending.stop.close()  # only now: a SIGTERM after the loop must not cut the writes short
    return Result(
        step=t.step,
        preempted=ending.preempted,
        resumed_from=ending.start_step,
        steps_per_second=(t.step - ending.start_step) / ending.seconds
        if t.step > ending.start_step
        else 0.0,
        metrics=None if ending.preempted else metrics,
    )


def _gathered(config: Config, net: nn.Module) -> contextlib.AbstractContextManager[None]:
    """`fsdp.gathered(net)` under --strategy=fsdp, else nothing to gather. vtp.trainer.fsdp is
    imported only for that strategy: FSDP and torch.distributed.checkpoint take seconds to
    import, in every replica before its first step."""
    if config.strategy != "fsdp":
        return contextlib.nullcontext()
    from vtp.trainer import fsdp

    return fsdp.gathered(net)


def _full_model_state(config: Config, net: nn.Module) -> dict[str, Any]:
    """The whole model's state dict: `fsdp.full_model_state` under --strategy=fsdp."""
    if config.strategy != "fsdp":
        return net.state_dict()
    from vtp.trainer import fsdp

    return fsdp.full_model_state(net)


def restore(
    config: Config,
    runtime: Runtime,
    checkpointer: Checkpointer,
    net: nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: torch.optim.lr_scheduler.LRScheduler,
) -> int:
    """Load the newest valid checkpoint into the model, optimizer, scheduler and random number
    generators; return its step (0, with generators seeded, when there is none).

    The strategy decides how model and optimizer are read (`_load_replicated` for ddp: one file
    every process reads whole; `fsdp.load_sharded`: each process its parts of the shards, in any
    sharding); the rest is applied alike.
    """
    sharded = config.strategy == "fsdp"
    load = _load_replicated
    if sharded:
        from vtp.trainer import fsdp

        load = fsdp.load_sharded
    loaded = load(runtime, checkpointer.directory, net, optimizer)
    if loaded is None:
        log.info("no valid checkpoint in %s: starting fresh", checkpointer.directory)
        seed_everything(config.seed + runtime.rank)
        return 0
    step = loaded.step
    scheduler.load_state_dict(loaded.scheduler)
    if len(loaded.rng) == runtime.world_size:
        set_rng_state(loaded.rng[runtime.rank])
    else:
        log.warning(
            "checkpoint saved by %d processes, %s %d: random generators are reseeded, "
            "so this run will not match an uninterrupted one bit for bit",
            len(loaded.rng), "resharded onto" if sharded else "this job has", runtime.world_size,
        )  # fmt: skip
        seed_everything(config.seed + runtime.rank + step)
    changed = sorted(k for k, v in config.to_dict().items() if loaded.config.get(k) != v)
    if changed:
        log.warning("resuming with changed flags: %s", ", ".join(f"--{name}" for name in changed))
    checkpointer.last_step = step
    log.info("resumed from %s at step %d", loaded.path, step)
    return step


def _load_replicated(
    runtime: Runtime, directory: Path, net: nn.Module, optimizer: torch.optim.Optimizer
) -> Loaded | None:
    """Load the newest valid (one-file) checkpoint's model and optimizer; None when there is
    none. Every process reads it, and fails unless it found the one the main process found."""
    found = latest_state(directory)
    step = found[0].step if found else 0
    main_step = runtime.broadcast_from_main(step)
    if step != main_step:
        raise RuntimeError(
            f"rank {runtime.rank} found a checkpoint at step {step}, rank 0 at step {main_step}: "
            "every node must see the same checkpoint directory (use a gs:// URI)"
        )
    if found is None:
        return None
    info, state = found
    net.load_state_dict(state.model)
    optimizer.load_state_dict(state.optimizer)
    return Loaded(info.path, step, state.scheduler, state.rng, state.config)


def lr_schedule(kind: str, warmup_steps: int, total_steps: int) -> Callable[[int], float]:
    """Learning-rate factor per step: linear warm-up, then cosine decay to zero or constant."""

    def factor(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        if kind == "constant":
            return 1.0
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    return factor


class ResumableSampler(DistributedSampler):
    """DistributedSampler (reshuffled per epoch from the seed) that can start mid-epoch."""

    def __init__(self, dataset: Dataset, runtime: Runtime, seed: int, batch_size: int) -> None:
        super().__init__(dataset, runtime.world_size, runtime.rank, shuffle=True, seed=seed)
        self.batch_size = batch_size
        self.skip = 0

    def set_position(self, epoch: int, batch: int) -> None:
        """Start the next pass at `batch` (this process's batches) of `epoch`."""
        self.set_epoch(epoch)
        self.skip = batch * self.batch_size

    def __iter__(self) -> Iterator[int]:
        return itertools.islice(super().__iter__(), self.skip, None)

    def __len__(self) -> int:
        return self.num_samples - self.skip
