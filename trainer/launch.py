"""Starting a node's processes, and turning how they ended into the node's exit status.

A node (one Vertex replica) runs `nproc_per_node` processes (one per GPU, or per accelerator of
its pool: trainer.distributed): in this process when it is one, otherwise as spawned children,
with torchrun's RANK/LOCAL_RANK/WORLD_SIZE, that die with their parent. SIGTERM to the node is
passed on to every child (they agree on a step, save a checkpoint and exit); when one child
fails, the others are stopped (SIGTERM, then SIGKILL after a grace period) and the node fails
with that status.

Exit statuses of `python -m trainer`, as Vertex sees them for the replica:

    0       training finished and the final model was written
    1       an error in training: an exception, a lost peer, a collective that timed out
    2       bad flags, task or cluster environment; nothing was trained
    143     stopped by SIGTERM (preemption) after saving a checkpoint; run again to resume
    128+N   a process of this node was killed by signal N (137: SIGKILL, e.g. out of memory)

A node whose peer vanished fails with 1 as soon as a collective notices (a closed connection is
seen at once; a silent peer after --dist_timeout). Vertex counts that as a permanent error, so
run preemptible multi-node jobs with `scheduling.restartJobOnWorkerRestart`: all nodes then
restart together and resume from the newest checkpoint, bit for bit.
"""

import ctypes
import ctypes.util
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
from collections.abc import Mapping
from typing import Any

import torch

from trainer import train
from trainer.config import Config
from trainer.distributed import (
    Nodes,
    Placement,
    configure_logging,
    cpu_threads_per_process,
    default_nproc_per_node,
    free_port,
    init,
    nodes_from_env,
    shutdown,
)
from trainer.tasks import load

log = logging.getLogger("trainer")

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_PREEMPTED = 0, 1, 2, 128 + signal.SIGTERM
STOP_GRACE_SECONDS = 10.0
"""How long a failed node's other processes get to exit after SIGTERM before SIGKILL."""


def plan(config: Config, env: Mapping[str, str]) -> tuple[Nodes, int]:
    """The nodes and processes per node this run will use; ValueError names what is wrong."""
    nodes = nodes_from_env(env) or Nodes("127.0.0.1", free_port(), count=1, rank=0)
    nproc = config.nproc_per_node or default_nproc_per_node(env)
    world_size = nodes.count * nproc
    if config.batch_size % world_size:
        raise ValueError(
            f"--batch_size={config.batch_size} does not split across {world_size} processes "
            f"({nodes.count} nodes x {nproc})"
        )
    load(config)  # the task imports, its flags and tuning metric are its own
    return nodes, nproc


def launch(config: Config, nodes: Nodes, nproc: int) -> int:
    """Run this node's processes to the end; return the node's exit status."""
    if nproc == 1:
        return run_process(config, Placement(nodes, 1, 0))
    configure_logging(f"trainer[node {nodes.rank}]", verbose=True)
    context = multiprocessing.get_context("spawn")
    children = [
        context.Process(
            target=_child, args=(config, Placement(nodes, nproc, i), os.getpid()), name=f"rank{i}"
        )
        for i in range(nproc)
    ]
    for child in children:
        child.start()
    previous = signal.signal(signal.SIGTERM, lambda *_: _signal(children, signal.SIGTERM))
    try:
        return _supervise(children)
    except KeyboardInterrupt:
        _stop(children)
        return 128 + signal.SIGINT
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_process(config: Config, placement: Placement) -> int:
    """Run one training process; its exit status (exceptions propagate)."""
    os.environ.update(placement.torchrun_env())  # what code written for torchrun reads
    runtime = init(placement, config.dist_timeout)
    try:
        result = train.run(config, runtime)
    finally:
        shutdown(runtime)
    return EXIT_PREEMPTED if result.preempted else EXIT_OK


def _supervise(children: list[Any]) -> int:
    status = EXIT_OK
    running = list(children)
    while running:
        multiprocessing.connection.wait([child.sentinel for child in running])
        for child in [child for child in running if child.exitcode is not None]:
            running.remove(child)
            code = exit_status(child.exitcode)
            if code != EXIT_OK and status == EXIT_OK:
                status = code
                if code != EXIT_PREEMPTED:
                    log.warning("process %s exited with status %d: stopping the node",
                                child.name, code)  # fmt: skip
                _stop(running)
    return status


def exit_status(exitcode: int) -> int:
    """A child's multiprocessing exit code as a shell exit status (-N, killed by N: 128+N)."""
    return 128 - exitcode if exitcode < 0 else exitcode


def _signal(children: list[Any], signum: int) -> None:
    for child in children:
        if child.exitcode is None:
            os.kill(child.pid, signum)


def _stop(children: list[Any]) -> None:
    _signal(children, signal.SIGTERM)
    for child in children:
        child.join(STOP_GRACE_SECONDS)
    _signal(children, signal.SIGKILL)
    for child in children:
        child.join()


def _child(config: Config, placement: Placement, parent_pid: int) -> None:
    _die_with_parent(parent_pid)
    if not torch.cuda.is_available() and "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(cpu_threads_per_process(placement.nproc_per_node))
    sys.exit(run_process(config, placement))


def _die_with_parent(parent_pid: int) -> None:
    # Children must not outlive a node that was killed outright (SIGKILL cannot be forwarded).
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(EXIT_ERROR)
