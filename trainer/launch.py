"""Starting a node's processes, and turning how they ended into the node's exit status.

A node (one Vertex replica) runs `nproc_per_node` processes (one per GPU, or per accelerator of
its pool: vtp.trainer.distributed): in this process when it is one, otherwise as child processes
with torchrun's RANK/LOCAL_RANK/WORLD_SIZE that die with their parent (forked from the node where
that is safe, which spares each importing PyTorch and the task again: `start_method`, else
spawned). SIGTERM to the node is passed on to every child (they agree on a step, save a
checkpoint and exit); when one child fails, the others are stopped (SIGTERM, then SIGKILL after a
grace period) and the node fails with the status of the child that failed first (`_supervise`
says how it is told apart from the children that failed because of it).

Exit statuses of `python -m vtp.trainer`, as Vertex sees them for the replica:

    0       training finished and the final model was written
    1       an error in training: an exception, a lost peer, a collective that timed out
    2       bad flags, task or cluster environment (more processes than the node's GPUs);
            nothing was trained
    143     stopped by SIGTERM (preemption) after saving a checkpoint; run again to resume
    128+N   a process of this node was killed by signal N (137: SIGKILL, e.g. out of memory)

A node whose peer vanished fails with 1 as soon as a collective notices (a closed connection is
seen at once; a silent peer after --dist_timeout). Vertex counts that as a permanent error, so
run preemptible multi-node jobs with `scheduling.restartJobOnWorkerRestart`: all nodes then
restart together and resume from the newest checkpoint, bit for bit.
"""

import ctypes
import ctypes.util
import dataclasses
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
import traceback
import weakref
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

import torch

from vtp.native_threads import native_threads
from vtp.process_exit import exit_now
from vtp.trainer import train
from vtp.trainer.config import Config
from vtp.trainer.distributed import (
    Nodes,
    Placement,
    check_gpus,
    configure_logging,
    cpu_threads_per_process,
    default_nproc_per_node,
    free_port,
    init,
    nodes_from_env,
    shutdown,
    visible_gpus,
)
from vtp.trainer.rendezvous import private_folder
from vtp.trainer.tasks import load

log = logging.getLogger("trainer")

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_PREEMPTED = 0, 1, 2, 128 + signal.SIGTERM
STOP_GRACE_SECONDS = 10.0
"""How long a failed node's other processes get to exit after SIGTERM before SIGKILL."""
_task_modules: set[str] = set()
"""The modules of the task's own package that its import in `plan` brought in: a forked child
imports them again (`_as_if_spawned`)."""
_node_modules: list[ModuleType] = []
"""In a forked child, the node's copies of those modules, kept from being freed."""


def plan(config: Config, env: Mapping[str, str], gpus: int | None = None) -> tuple[Nodes, int]:
    """The nodes and processes per node this run will use; ValueError names what is wrong.
    `gpus`: the GPUs this node sees (default: `visible_gpus()`, which is what training uses)."""
    gpus = visible_gpus() if gpus is None else gpus
    nodes = nodes_from_env(env) or Nodes("127.0.0.1", free_port(), count=1, rank=0)
    nproc = config.nproc_per_node or default_nproc_per_node(env, gpus)
    check_gpus(nproc, gpus)
    world_size = nodes.count * nproc
    if config.batch_size % world_size:
        raise ValueError(
            f"--batch_size={config.batch_size} does not split across {world_size} processes "
            f"({nodes.count} nodes x {nproc})"
        )
    before = set(sys.modules)
    load(config)  # the task imports, its flags and tuning metric are its own
    package = config.task.split(".")[0]
    _task_modules.clear()
    _task_modules.update(
        name
        for name in set(sys.modules) - before
        if name == package or name.startswith(package + ".")
    )
    return nodes, nproc


def launch(config: Config, nodes: Nodes, nproc: int) -> int:
    """Run this node's processes to the end; return the node's exit status.

    A job of this node alone meets in a private folder this node makes for it (and removes
    after its processes ended), unless the local service gave one: no TCP store that another
    user or network namespace could reach (vtp.trainer.rendezvous)."""
    if nproc == 1:
        return run_process(config, Placement(nodes, 1, 0))
    if nodes.count > 1 or nodes.store_dir:
        return _launch_children(config, nodes, nproc)
    with private_folder() as folder:
        return _launch_children(config, dataclasses.replace(nodes, store_dir=folder), nproc)


def _launch_children(config: Config, nodes: Nodes, nproc: int) -> int:
    """Start `nproc` processes for this node, supervise them, and return the node's status."""
    configure_logging(f"trainer[node {nodes.rank}]", verbose=True)
    fork = start_method() == "fork"
    context = multiprocessing.get_context("fork") if fork else multiprocessing.get_context("spawn")
    failed_at = context.Array("d", nproc, lock=False)  # see _supervise
    children = [
        context.Process(
            target=_child,
            args=(config, Placement(nodes, nproc, i), os.getpid(), failed_at, fork),
            name=f"rank{i}",
        )
        for i in range(nproc)
    ]
    for child in children:
        child.start()
    previous = signal.signal(signal.SIGTERM, lambda *_: _signal(children, signal.SIGTERM))
    try:
        return _supervise(children, failed_at)
    except KeyboardInterrupt:
        _stop(children)
        return 128 + signal.SIGINT
    finally:
        signal.signal(signal.SIGTERM, previous)


def start_method() -> str:
    """How this node starts its processes: "fork" on a CPU node whose only threads besides its
    own are OpenBLAS's pools, else "spawn".

    A forked child starts with PyTorch and the libraries of the task imported, where a spawned
    one imports them again (2-3 s of CPU each on a 2-core machine, all of them at once); the
    task's own modules it imports again (`_as_if_spawned`). Forking is safe only where the child
    inherits no state that a thread of the node holds, or that a library cannot rebuild without
    the threads it had: so never on CUDA (a CUDA context does not survive a fork), and not once
    PyTorch's OpenMP pool (started by its first parallel operation) or any other thread runs,
    since a lock such a thread held would stay held in the child. OpenBLAS built on pthreads,
    as numpy and scipy load it with a pool of threads, registers a fork handler that stops its
    pool before the fork and starts it again when next used, in the parent and in the child, as
    it does under multiprocessing's default fork on Linux. The node has run no tensor operation
    by then (its flags, the task's import and the plan), so this holds where nothing in the
    task's import started a thread of its own. `VTP_TRAINER_FORK=0` spawns them regardless."""
    if os.environ.get("VTP_TRAINER_FORK") == "0" or visible_gpus() or torch.cuda.is_initialized():
        return "spawn"
    from threadpoolctl import threadpool_info

    blas_threads = sum(  # a pthreads build's pool, started as the library loads
        max(0, pool["num_threads"] - 1)
        for pool in threadpool_info()
        if pool["internal_api"] == "openblas" and pool.get("threading_layer") == "pthreads"
    )
    linux = sys.platform.startswith("linux")  # elsewhere forking a process with a runtime is not
    return "fork" if linux and native_threads() == 1 + blas_threads else "spawn"


def run_process(
    config: Config, placement: Placement, failed: Callable[[], None] | None = None
) -> int:
    """Run one training process; its exit status.

    An exception propagates, after `failed()` is called, and without the orderly leaving of the
    process group (`shutdown`): the main process would wait there for peers that are blocked
    in a collective with it until --dist_timeout. The process is about to exit, and its exit
    closes its connections, which is how its peers learn of the failure at once."""
    os.environ.update(placement.torchrun_env())  # what code written for torchrun reads
    try:
        runtime = init(placement, config.dist_timeout)
        result = train.run(config, runtime)
    except BaseException:
        if failed is not None:
            failed()
        raise
    shutdown(runtime)
    return EXIT_PREEMPTED if result.preempted else EXIT_OK


def _supervise(children: list[Any], failed_at: Sequence[float]) -> int:
    """Wait for the children; stop them all when one fails or is preempted; the node's status.

    The node reports the child that failed first, not the first one seen to have exited: one
    failure makes the others fail (a collective whose peer closed its connection), and those
    may exit first, or exit by the time the watcher looks (it then sees several at once).
    So each child writes into `failed_at[local rank]` the moment (CLOCK_MONOTONIC, one clock
    for the whole machine) its run raised, before anything of it closes, so before any peer can
    fail because of it; a failure it caused is written later. When the watcher sees a failure:

    - a child that exited with an error without writing a moment (killed by a signal, e.g.
      SIGKILL from the out-of-memory killer, or a crash) is the cause: a peer's failure reaches
      a process as an error in a collective, which it writes (NCCL's watchdog, which may abort
      a process instead, does so when a collective times out: after --dist_timeout, long after
      the child that failed first exited);
    - otherwise the child with the earliest moment is, even if it has not exited yet (then it
      gets up to STOP_GRACE_SECONDS to do so before the others are stopped); it raised, so its
      status is EXIT_ERROR if it does not exit in that time.
    """
    status = EXIT_OK
    running = list(children)
    while running:
        multiprocessing.connection.wait([child.sentinel for child in running])
        exited = [child for child in running if child.exitcode is not None]
        for child in exited:
            running.remove(child)
        if status != EXIT_OK:
            continue
        codes = [exit_status(child.exitcode) for child in exited]
        if any(code not in (EXIT_OK, EXIT_PREEMPTED) for code in codes) or any(failed_at):
            first = _first_failure(children, exited, failed_at)
            if first.exitcode is None:
                first.join(STOP_GRACE_SECONDS)
            if first.exitcode is None:
                status = EXIT_ERROR
                log.warning("process %s failed and has not exited: stopping the node with "
                            "status %d", first.name, status)  # fmt: skip
            else:
                status = exit_status(first.exitcode)
                log.warning("process %s exited with status %d: stopping the node",
                            first.name, status)  # fmt: skip
        elif EXIT_PREEMPTED in codes:
            status = EXIT_PREEMPTED
        else:
            continue
        _stop([child for child in running if child.exitcode is None])
    return status


def _first_failure(children: list[Any], exited: list[Any], failed_at: Sequence[float]) -> Any:
    """The child that failed first (see `_supervise`), given those that just exited and the
    moments at which children failed (0: not failed)."""
    for child in exited:
        code = exit_status(child.exitcode)
        if code not in (EXIT_OK, EXIT_PREEMPTED) and not failed_at[children.index(child)]:
            return child
    moments = [(moment, i) for i, moment in enumerate(failed_at) if moment]
    return children[min(moments)[1]]


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


def _child(
    config: Config, placement: Placement, parent_pid: int, failed_at: Any, forked: bool
) -> None:
    _die_with_parent(parent_pid)
    if forked:
        _as_if_spawned()
    if not visible_gpus() and "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(cpu_threads_per_process(placement.nproc_per_node))

    def failed() -> None:
        failed_at[placement.local_rank] = time.monotonic()

    try:
        code = run_process(config, placement, failed)
    except BaseException:
        # Exit at once: freeing what the traceback holds can hang. DDP's reducer holds the
        # gloo process group, whose destructor (holding the GIL) joins its worker thread while
        # that thread waits for the GIL to free the work it just finished.
        sys.stderr.write(f"Process {multiprocessing.current_process().name}:\n")
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_ERROR)
    exit_now(code)  # not sys.exit: the teardown of PyTorch's modules would hold the job


def _as_if_spawned() -> None:
    """In a child forked from the node, undo what it would not have shared with a spawned one.

    - The task's own modules (`_task_modules`) are imported again, in `run_process`, after the
      process's RANK, LOCAL_RANK and WORLD_SIZE are set: a task written for torchrun may read
      them as it is imported. The libraries it imported (and PyTorch) stay as the node loaded
      them; they are the same files, and many extension modules cannot load twice.
    - The node's `weakref.finalize` callbacks no longer run at this process's exit: the objects
      are the node's (a temporary directory a task made as it was imported, say), and the node
      finalizes them at its own exit, as multiprocessing's forked children (which end with
      `os._exit`) leave them. Those this process registers run as they would have."""
    for name in _task_modules:
        module = sys.modules.pop(name, None)
        if module is not None:
            _node_modules.append(module)
    for finalizer in list(getattr(weakref.finalize, "_registry", {})):  # CPython's, since 3.4
        finalizer.atexit = False


def _die_with_parent(parent_pid: int) -> None:
    # Children must not outlive a node that was killed outright (SIGKILL cannot be forwarded).
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(EXIT_ERROR)
