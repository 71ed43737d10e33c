"""Cluster set-up: where this process sits in the job, the process group, and the few collectives
the training loop needs.

Vertex AI describes NODES (replicas of worker pools 0 and 1), not processes: `MASTER_ADDR`,
`MASTER_PORT`, `WORLD_SIZE` (number of nodes) and `RANK` (this node). `CLUSTER_SPEC` carries the
same cluster as JSON and is the fallback. Each node runs `nproc_per_node` processes itself
(vtp.trainer.launch), so a process's rank is `node_rank * nproc_per_node + local_rank`. With neither
variable set, the job is one node. A one-process job starts no process group at all. Where the
processes meet, and why no other user or network namespace can reach that, is
vtp.trainer.rendezvous: a store in a private folder when they all run on this machine.

A node runs one process per GPU it sees; without GPUs, one per accelerator its pool asks for in
CLUSTER_SPEC's job (`acceleratorCount` of an NVIDIA accelerator: a local service that ignores
accelerators runs them as CPU processes), else one. Each process gets RANK, LOCAL_RANK,
WORLD_SIZE and LOCAL_WORLD_SIZE as torchrun would set them.

Every rank-dependent decision of the trainer is made here: `Runtime.is_main` is the only place
that asks "am I rank 0?", and the writers (checkpoints, metrics, model) are handed that answer.
"""

import contextlib
import dataclasses
import datetime
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

from vtp.trainer.rendezvous import folder_from_env, open_store

log = logging.getLogger("trainer")

DEFAULT_MASTER_PORT = 29500


@dataclass(frozen=True)
class Nodes:
    """The job's nodes as Vertex describes them, and which one this is."""

    master_addr: str
    master_port: int
    count: int
    rank: int
    store_dir: str = ""
    """A private folder on this machine where every process of the job meets (its store);
    empty: rank 0's TCP store at `master_addr`:`master_port` (vtp.trainer.rendezvous)."""


@dataclass(frozen=True)
class Placement:
    """One process's place in the job."""

    nodes: Nodes
    nproc_per_node: int
    local_rank: int

    @property
    def rank(self) -> int:
        """Global process rank."""
        return self.nodes.rank * self.nproc_per_node + self.local_rank

    @property
    def world_size(self) -> int:
        """Number of processes in the job."""
        return self.nodes.count * self.nproc_per_node

    def torchrun_env(self) -> dict[str, str]:
        """The variables torchrun gives each process it starts."""
        return {
            "RANK": str(self.rank),
            "LOCAL_RANK": str(self.local_rank),
            "WORLD_SIZE": str(self.world_size),
            "LOCAL_WORLD_SIZE": str(self.nproc_per_node),
            "GROUP_RANK": str(self.nodes.rank),
        }


def nodes_from_env(env: Mapping[str, str]) -> Nodes | None:
    """The nodes from `MASTER_ADDR`/`MASTER_PORT`/`WORLD_SIZE`/`RANK`, else `CLUSTER_SPEC`,
    meeting in the local service's folder when it gave one (`VTP_RENDEZVOUS_DIR`); None when
    neither is set (a job on this machine only)."""
    if env.get("MASTER_ADDR"):
        nodes = Nodes(
            master_addr=env["MASTER_ADDR"],
            master_port=_env_int(env, "MASTER_PORT", DEFAULT_MASTER_PORT),
            count=_env_int(env, "WORLD_SIZE", 1),
            rank=_env_int(env, "RANK", 0),
        )
    elif env.get("CLUSTER_SPEC"):
        nodes = _nodes_from_cluster_spec(env["CLUSTER_SPEC"])
    else:
        return None
    if not 0 <= nodes.rank < nodes.count:
        raise ValueError(f"node RANK={nodes.rank} is outside WORLD_SIZE={nodes.count}")
    return dataclasses.replace(nodes, store_dir=folder_from_env(env))


def _nodes_from_cluster_spec(text: str) -> Nodes:
    try:
        spec = json.loads(text)
        cluster, task = spec["cluster"], spec["task"]
        kind, index = task["type"], int(task["index"])
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"CLUSTER_SPEC is not Vertex's cluster JSON: {exc}") from exc
    primary, workers = cluster.get("workerpool0", []), cluster.get("workerpool1", [])
    if kind not in ("workerpool0", "workerpool1") or not primary:
        raise ValueError(f"CLUSTER_SPEC task {kind} is not a training node (pools 0 and 1 are)")
    host, _, port = primary[0].rpartition(":")
    rank = index if kind == "workerpool0" else len(primary) + index
    return Nodes(host, int(port or DEFAULT_MASTER_PORT), len(primary) + len(workers), rank)


def accelerators_from_env(env: Mapping[str, str]) -> int:
    """GPUs per replica of this node's pool, from CLUSTER_SPEC's job; 0 without one. Pools 0
    and 1 (the training nodes) must agree: every node runs as many processes."""
    text = env.get("CLUSTER_SPEC")
    if not text:
        return 0
    try:
        spec = json.loads(text)
        job = spec.get("job") or {}
        job = json.loads(job) if isinstance(job, str) else job
        pools = _field(job, "workerPoolSpecs") or []
        kind = spec["task"]["type"]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"CLUSTER_SPEC is not Vertex's cluster JSON: {exc}") from exc
    counts = {}
    for index, pool in enumerate(pools[:2]):
        machine = _field(pool, "machineSpec") if isinstance(pool, dict) else None
        if not isinstance(machine, dict) or not int(_field(pool, "replicaCount", 1) or 0):
            continue  # a skipped pool (only pool 0 has an implicit replica count)
        gpu = _accelerator_name(_field(machine, "acceleratorType")).startswith("NVIDIA_")
        counts[f"workerpool{index}"] = int(_field(machine, "acceleratorCount") or 0) if gpu else 0
    if len(set(counts.values())) > 1:
        raise ValueError(
            "worker pools 0 and 1 have different accelerator counts "
            f"({counts['workerpool0']} and {counts['workerpool1']}): every training node runs "
            "as many processes; set --nproc_per_node"
        )
    return counts.get(kind, 0)


def _accelerator_name(value: object) -> str:
    """An acceleratorType as its enum name; proto-plus JSON may carry the enum's number."""
    if isinstance(value, int) and value:
        try:
            from google.cloud.aiplatform_v1.types import AcceleratorType
        except ImportError:
            return ""
        try:
            return AcceleratorType(value).name
        except ValueError:
            return ""
    return str(value or "")


def _field(message: Mapping[str, Any], name: str, default: Any = None) -> Any:
    """A field of a spec in JSON (camelCase) or proto (snake_case) naming."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
    return message.get(name, message.get(snake, default))


def _env_int(env: Mapping[str, str], name: str, default: int) -> int:
    try:
        return int(env.get(name) or default)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {env[name]!r}") from None


def free_port() -> int:
    """A TCP port that was free a moment ago (for a job that runs on this machine only)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Runtime:
    """The initialised process: device, ranks, and collectives that are no-ops in one process."""

    rank: int
    world_size: int
    local_rank: int
    device: torch.device
    cpu_group: Any = None  # a gloo group for host-side objects, also when training on NCCL
    store: Any = None  # the job's store (vtp.trainer.rendezvous), kept past the process group

    @property
    def is_main(self) -> bool:
        """True in the one process that writes checkpoints, metrics and the model."""
        return self.rank == 0

    def all_reduce_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        """Sum `tensor` over all processes, in place."""
        if self.world_size > 1:
            dist.all_reduce(tensor)
        return tensor

    def gather_to_main(self, obj: Any) -> list[Any]:
        """Every process's `obj`, in rank order, on the main process; [] elsewhere."""
        if self.world_size == 1:
            return [obj]
        gathered: list[Any] = [None] * self.world_size if self.is_main else []
        dist.gather_object(obj, gathered or None, dst=0, group=self.cpu_group)
        return gathered

    def broadcast_from_main(self, obj: Any) -> Any:
        """The main process's `obj`, on every process."""
        if self.world_size == 1:
            return obj
        box = [obj]
        dist.broadcast_object_list(box, src=0, group=self.cpu_group)
        return box[0]

    def autocast(self, precision: str) -> contextlib.AbstractContextManager[Any]:
        """bf16 autocast on GPU when `precision` asks for it; nothing on CPU."""
        if self.device.type == "cuda" and precision == "bf16":
            return torch.autocast("cuda", dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def barrier(self) -> None:
        """Wait until every process gets here."""
        if self.world_size > 1:
            dist.barrier(group=self.cpu_group)


def init(placement: Placement, timeout_s: int) -> Runtime:
    """Pick the device, join the process group (NCCL on GPU, gloo on CPU) and set up logging."""
    if visible_gpus():
        device = torch.device("cuda", placement.local_rank)
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    runtime = Runtime(placement.rank, placement.world_size, placement.local_rank, device)
    configure_logging("trainer" if runtime.is_main else f"trainer[rank {runtime.rank}]",
                      verbose=runtime.is_main)  # fmt: skip
    if runtime.world_size > 1:
        nodes, timeout = placement.nodes, datetime.timedelta(seconds=timeout_s)
        log.info("waiting for %d processes %s", runtime.world_size, _meeting_place(nodes))
        # The store waits until `timeout`, so peers may start in any order; the same timeout
        # bounds every collective, so a hung peer fails the job instead of stalling it forever.
        runtime.store = open_store(nodes, runtime.world_size, runtime.is_main, timeout)
        dist.init_process_group(
            backend="nccl" if device.type == "cuda" else "gloo",
            store=runtime.store,
            rank=runtime.rank,
            world_size=runtime.world_size,
            timeout=timeout,
        )
        gloo = device.type == "cuda"
        runtime.cpu_group = dist.new_group(backend="gloo", timeout=timeout) if gloo else None
        log.info("joined %d processes on %d nodes via %s", runtime.world_size, nodes.count, device)
    return runtime


def _meeting_place(nodes: Nodes) -> str:
    """Where the processes meet, for the log: the private folder, or rank 0's TCP store."""
    if nodes.store_dir:
        return f"in {nodes.store_dir} (this machine's only)"
    return f"at {nodes.master_addr}:{nodes.master_port}"


def shutdown(runtime: Runtime) -> None:
    """Leave the process group; the main process, which hosts a TCP store, leaves last.

    Tearing a process group down still talks to the store; a main process that exited first
    would take the store with it while another process is still tearing down, and that
    process aborts ("terminate called without an active exception") after a job that
    succeeded. So every other process says on the store that it is done, and the main process
    waits for all of them (within the job's collective timeout) before it returns."""
    if runtime.world_size <= 1 or not dist.is_initialized():
        return
    dist.destroy_process_group()
    if runtime.store is None:
        return
    if runtime.is_main:
        others = [f"vtp/left/{rank}" for rank in range(1, runtime.world_size)]
        with contextlib.suppress(RuntimeError):  # one died: the launcher reports it
            runtime.store.wait(others)
    else:
        runtime.store.set(f"vtp/left/{runtime.rank}", "1")


def configure_logging(prefix: str, verbose: bool) -> None:
    """Progress lines to stdout (Cloud Logging marks stderr lines as errors), warnings to
    stderr; quiet processes (all but the main one) log warnings only."""
    formatter = logging.Formatter(f"{prefix}: %(message)s")
    progress = logging.StreamHandler(sys.stdout)
    progress.addFilter(lambda record: record.levelno < logging.WARNING)
    problems = logging.StreamHandler(sys.stderr)
    problems.setLevel(logging.WARNING)
    log.handlers.clear()
    for handler in (progress, problems):
        handler.setFormatter(formatter)
        log.addHandler(handler)
    log.propagate = False
    log.setLevel(logging.INFO if verbose else logging.WARNING)


class StopSignal:
    """SIGTERM (Vertex's preemption notice) sets a flag; every process learns of it in step.

    In one process the flag is read directly. With several, each step starts a tiny asynchronous
    all-reduce of the local flags on the CPU group and reads the previous step's result, so all
    ranks stop after the same step without a blocking collective (or a GPU sync) per step.
    """

    def __init__(self, runtime: Runtime) -> None:
        self.requested = False
        self._runtime = runtime
        self._flag = torch.zeros(1)
        self._pending: Any = None
        self._previous = signal.signal(signal.SIGTERM, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.requested = True

    def should_stop(self) -> bool:
        """True once any process got SIGTERM; call it once per step on every rank."""
        if self._runtime.world_size == 1:
            return self.requested
        if self._pending is not None:
            self._pending.wait()
            if self._flag.item() > 0:
                self._pending = None
                return True
        self._flag.fill_(float(self.requested))
        group = self._runtime.cpu_group
        self._pending = dist.all_reduce(self._flag, group=group, async_op=True)
        return False

    def close(self) -> None:
        """Finish the in-flight all-reduce and restore the previous SIGTERM handler."""
        if self._pending is not None:
            self._pending.wait()
            self._pending = None
        signal.signal(signal.SIGTERM, self._previous)


def default_nproc_per_node(env: Mapping[str, str] | None = None, gpus: int | None = None) -> int:
    """One process per GPU (`gpus`, default the visible ones); without GPUs, one per
    accelerator of the pool (CLUSTER_SPEC in `env`), else one."""
    gpus = visible_gpus() if gpus is None else gpus
    if gpus:
        return gpus
    return accelerators_from_env(env or {}) or 1


def visible_gpus() -> int:
    """The CUDA devices this process may use (CUDA_VISIBLE_DEVICES applied); 0 without CUDA.
    The trainer trains on CUDA exactly when this is not 0."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_gpus(nproc_per_node: int, gpus: int) -> None:
    """ValueError, one line naming both numbers and the ways out, when a node on CUDA would
    run more processes than it sees GPUs (each process takes the GPU of its local rank)."""
    if gpus and nproc_per_node > gpus:
        raise ValueError(
            f"--nproc_per_node={nproc_per_node} asks for {nproc_per_node} processes but this "
            f"node sees {gpus} GPU{'s' if gpus > 1 else ''} (one process per GPU): use "
            f"--nproc_per_node={gpus} or fewer, or train on CPU with CUDA_VISIBLE_DEVICES=''"
        )


def cpu_threads_per_process(nproc_per_node: int) -> int:
    """Intra-op threads per process so that the node's processes share its cores."""
    return max(1, (os.cpu_count() or 1) // nproc_per_node)
