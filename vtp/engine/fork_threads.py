"""Native thread pools in the fork server (`fork_server.py`) and in the tasks it forks.

A process with more than one thread is never forked from, and numpy's OpenBLAS starts its pool
of threads as numpy is imported, unless `$OPENBLAS_NUM_THREADS` is 1; torch imports numpy. So
the server imports under `SERVER_ENV` (one BLAS thread, hence no pool), which lets a stage keep
torch and numpy loaded and still fork. torch itself starts no thread at import: its OpenMP and
MKL pools start at the first parallel operation, in whichever process runs it.

Each task then gets the pools that a fresh interpreter with the task's environment would have
(`as_fresh`, in the task, after the fork, where threads are safe):

- OpenBLAS (numpy's): `$OPENBLAS_NUM_THREADS`, else `$GOTO_NUM_THREADS`, else
  `$OMP_NUM_THREADS` (the order OpenBLAS reads them), else one thread per CPU the task may run
  on; set through threadpoolctl, which finds the library numpy loaded.
- torch's intra-op threads: the OpenMP runtime read `$OMP_NUM_THREADS` when the server loaded
  torch, so a task whose `$OMP_NUM_THREADS` or `$MKL_NUM_THREADS` differs from the server's gets
  `torch.set_num_threads` with its own (else one per CPU), as torch would have started with.
"""

import os
import sys
from collections.abc import Mapping

SERVER_ENV = {"OPENBLAS_NUM_THREADS": "1"}
"""What the server's environment adds: OpenBLAS loads without a pool of threads."""
OPENBLAS_ORDER = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
TORCH_ORDER = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def as_fresh(server_env: Mapping[str, str], task_env: Mapping[str, str]) -> None:
    """Give this process (a task just forked from a server that imported under `server_env`)
    the thread pools a fresh interpreter under `task_env` would start with."""
    if "numpy" in sys.modules and any(
        server_env.get(name) != task_env.get(name) for name in OPENBLAS_ORDER
    ):
        from threadpoolctl import ThreadpoolController

        openblas = ThreadpoolController().select(internal_api="openblas")
        openblas.limit(limits=threads(task_env, OPENBLAS_ORDER))
    torch = sys.modules.get("torch")
    if torch is not None and any(
        server_env.get(name) != task_env.get(name) for name in TORCH_ORDER
    ):
        torch.set_num_threads(threads(task_env, TORCH_ORDER))


def threads(env: Mapping[str, str], names: tuple[str, ...]) -> int:
    """The first of `names` set in `env` to a positive whole number, else the CPUs this process
    may run on (what OpenBLAS and OpenMP count when nothing is set)."""
    for name in names:
        value = env.get(name, "").split(",")[0].strip()  # OpenMP's "4,2": 4 at the top level
        if value.isdigit() and int(value) > 0:
            return int(value)
    return len(os.sched_getaffinity(0))
