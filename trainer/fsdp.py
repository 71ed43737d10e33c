"""`--strategy=fsdp`: the model sharded per block with FSDP2, and sharded checkpoints.

`shard` applies `torch.distributed.fsdp.fully_shard` to each block of the task's model and then
to the whole: every process holds 1/N of each parameter, its gradient and its optimizer moments,
and gathers a block's parameters only while that block runs. A task names its blocks with an
optional `blocks(model) -> Iterable[nn.Module]` (a transformer's layers); by default each direct
child of the model that holds parameters is one. On GPU with --precision=bf16 the blocks compute
in bf16 and reduce gradients in fp32; --activation_checkpointing recomputes each block's
activations in the backward pass instead of keeping them.

Checkpoints go through `torch.distributed.checkpoint` (`ShardedCheckpointer`): every process
writes its own shard, the main process adds trainer.pt (scheduler, every rank's RNG states, step,
config), hashes the files and commits the checkpoint with its manifest, as vtp.trainer.checkpoint
describes. `load_sharded` loads the newest one into whatever sharding this run has, so a job resumes
on a different number of processes (resharding); on the same number it continues bit for bit.

In a one-process job there is no process group, so nothing is sharded, but checkpoints are still
sharded-format ones, which any later number of processes can load.
"""

import contextlib
import functools
import logging
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import torch
import torch.distributed.checkpoint as dcp
from torch import nn
from torch.distributed.checkpoint.state_dict import (
    StateDictOptions,
    get_model_state_dict,
    get_state_dict,
    set_state_dict,
)
from torch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard
from torch.utils.checkpoint import checkpoint

from vtp.trainer.checkpoint import (
    SHARDED,
    TRAINER_FILE,
    Checkpointer,
    CorruptCheckpoint,
    Loaded,
    commit_sharded,
    list_checkpoints,
    manifest_path,
    read_manifest,
    read_trainer_file,
    sharded_path,
    verify_sharded,
)
from vtp.trainer.config import Config
from vtp.trainer.dcp_safe import load_in_place
from vtp.trainer.distributed import Runtime
from vtp.trainer.tasks import load_task

log = logging.getLogger("trainer")


def blocks(net: nn.Module, task_name: str) -> list[nn.Module]:
    """The model's blocks: the task's `blocks(model)`, else its direct children with parameters."""
    named = getattr(load_task(task_name), "blocks", None)
    found: Iterable[nn.Module] = named(net) if callable(named) else net.children()
    return [block for block in found if any(True for _ in block.parameters())]


def shard(net: nn.Module, config: Config, runtime: Runtime) -> None:
    """Shard `net` in place across the job's processes, block by block (before the optimizer is
    made: it must see the sharded parameters)."""
    parts = blocks(net, config.task)
    if config.activation_checkpointing:
        for block in parts:
            block.forward = functools.partial(checkpoint, block.forward, use_reentrant=False)
    if runtime.world_size == 1:
        return  # no process group: nothing to shard across
    policy = MixedPrecisionPolicy()
    if runtime.device.type == "cuda" and config.precision == "bf16":
        policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for block in parts:
        fully_shard(block, mp_policy=policy, reshard_after_forward=True)
    # The root stays gathered after its forward: its backward needs it next.
    fully_shard(net, mp_policy=policy, reshard_after_forward=False)
    log.info("FSDP: %d blocks sharded across %d processes", len(parts), runtime.world_size)


@contextlib.contextmanager
def gathered(net: nn.Module) -> Iterator[None]:
    """Every block's parameters gathered while the body runs, so forward passes need no
    collective (evaluation: processes run different numbers of batches)."""
    if not isinstance(net, FSDPModule):
        yield
        return
    modules = [m for m in net.modules() if isinstance(m, FSDPModule)]
    for module in modules:
        module.unshard()
    net.set_reshard_after_forward(False)
    try:
        yield
    finally:
        net.set_reshard_after_forward(True)  # as `shard` left it: blocks True, the root False
        net.set_reshard_after_forward(False, recurse=False)
        for module in modules:
            module.reshard()


def full_model_state(net: nn.Module) -> dict[str, Any]:
    """The whole model's state dict on the main process (every process must call it; the others
    get an empty dict when `net` is sharded)."""
    if not isinstance(net, FSDPModule):
        return net.state_dict()
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    return get_model_state_dict(net, options=options)


class ShardedCheckpointer(Checkpointer):
    """A Checkpointer whose checkpoints are torch.distributed.checkpoint directories written by
    every process; the main process commits them (hashes, manifest) on its checkpoint thread."""

    def __init__(
        self,
        directory: Path,
        keep: int,
        runtime: Runtime,
        net: nn.Module,
        optimizer: torch.optim.Optimizer,
    ) -> None:
        super().__init__(directory, keep, runtime.is_main)
        self.net, self.optimizer = net, optimizer

    def save(self, state: dict[str, Any], step: int, epoch: int, deferred: Any = None) -> None:
        """Write this process's shard of model and optimizer now (every process calls it); the
        main process also writes `state`'s other parts and commits in the background."""
        self.last_step = step
        self.wait()  # the previous commit is done
        staging = self.directory / f".{sharded_path(self.directory, step).name}.tmp"
        if self.enabled:  # before the save's first collective: no shard is written before it
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True, exist_ok=True)  # another rank may have made it
        model, optim = get_state_dict(self.net, self.optimizer)
        dcp.save({"model": model, "optim": optim}, checkpoint_id=staging)
        if self._executor is None:
            return
        rest = {k: v for k, v in state.items() if k not in ("model", "optimizer")}
        torch.save(rest, staging / TRAINER_FILE)
        self._pending = self._executor.submit(self._commit, staging, step, epoch)

    def before_update(self) -> None:
        """Nothing to wait for: the shards were written in `save`."""

    def _commit(self, staging: Path, step: int, epoch: int) -> None:
        manifest = commit_sharded(staging, self.directory, step, epoch)
        self._prune(step)
        log.info("saved sharded checkpoint %s", manifest)


def load_sharded(
    runtime: Runtime, directory: Path, net: nn.Module, optimizer: torch.optim.Optimizer
) -> Loaded | None:
    """Load the newest valid sharded checkpoint's model and optimizer into this run's sharding
    (any number of processes); None when there is none.

    The main process picks and verifies the checkpoint and hands its trainer.pt to the others;
    every process then reads the parts of the shards it holds.
    """
    found = _latest_verified(directory) if runtime.is_main else None
    step, rest = runtime.broadcast_from_main(found or (0, None))
    if rest is None:
        return None
    if not manifest_path(directory, step).exists():
        raise RuntimeError(
            f"rank {runtime.rank} does not see rank 0's checkpoint at step {step}: every node "
            "must see the same checkpoint directory (use a gs:// URI)"
        )
    shards = sharded_path(directory, step)
    model, optim = get_state_dict(net, optimizer)
    # Loaded in place, each process reading the parts of every shard that its own shard covers.
    load_in_place({"model": model, "optim": optim}, shards)
    set_state_dict(net, optimizer, model_state_dict=model, optim_state_dict=optim)
    return Loaded(shards, step, rest["scheduler"], rest["rng"], rest["config"])


def _latest_verified(directory: Path) -> tuple[int, dict[str, Any]] | None:
    """The newest sharded checkpoint whose files match its manifest, and its trainer.pt."""
    for info in list_checkpoints(directory):
        if info.format != SHARDED:
            raise RuntimeError(
                f"{info.path} was written with --strategy=ddp: resume it with --strategy=ddp, "
                "or start --strategy=fsdp in a new checkpoint directory"
            )
        shards = sharded_path(directory, info.step)
        try:
            verify_sharded(shards, read_manifest(info.path))
            return info.step, read_trainer_file(shards)
        except CorruptCheckpoint as exc:
            log.warning("skipping corrupt checkpoint (falling back to the one before): %s", exc)
    return None
