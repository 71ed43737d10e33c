"""How a CPU node starts its processes: forked from the node, which has PyTorch imported
already, where no thread but OpenBLAS's pool runs; spawned otherwise. Either way each process
imports the task under its own RANK, and both train the same model, bit for bit."""

import json
import subprocess
import sys

import pytest

from tests.trainer.conftest import (
    assert_bitwise_equal,
    load_model,
    run_trainer,
    tiny_args,
    trainer_env,
)

pytestmark = pytest.mark.slow

TASK = "tests.trainer.import_counting_task"


def test_a_cpu_nodes_processes_fork_import_the_task_again_and_train_as_spawned_ones(tmp_path):
    models, imports = {}, {}
    for method, extra in (("fork", {}), ("spawn", {"VTP_TRAINER_FORK": "0"})):
        out = tmp_path / method
        log = out / "imported"
        out.mkdir()
        args = tiny_args(out, nproc_per_node=2, task=TASK)
        # OpenBLAS with a pool of its own (trainer_env's OMP_NUM_THREADS=1 would leave it none)
        env = trainer_env(out, IMPORT_LOG=str(log), OPENBLAS_NUM_THREADS="2", **extra)
        output = run_trainer(args, env)
        assert "joined 2 processes on 1 nodes" in output
        models[method] = load_model(out)
        imports[method] = [json.loads(line) for line in log.read_text().splitlines()]
    for method, spawned in (("fork", False), ("spawn", True)):
        node, *ranks = imports[method]  # the node's import first, then each process's own
        assert node["rank"] is None and not node["spawned"], imports
        assert sorted(rank["rank"] for rank in ranks) == ["0", "1"], imports
        assert all(rank["spawned"] is spawned for rank in ranks), imports
    assert_bitwise_equal(models["fork"], models["spawn"])  # dropout's random state included


def start_method_after(code: str) -> str:
    """What `start_method()` says in a fresh interpreter after `code` ran there."""
    script = (
        f"{code}\nfrom vtp.trainer.launch import start_method\nprint(start_method(), flush=True)"
    )
    script += "\nimport os\nos._exit(0)"  # not waiting for a thread `code` started
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.split()[-1]


def test_a_node_with_a_thread_of_its_own_or_pytorchs_pool_running_spawns():
    assert start_method_after("import torch") == "fork"  # numpy's OpenBLAS pool alone
    thread = "import threading, time\nthreading.Thread(target=time.sleep, args=(60,)).start()"
    assert start_method_after(thread) == "spawn"
    parallel = "import torch\ntorch.set_num_threads(2)\nx = torch.ones(512, 512)\n(x @ x).sum()"
    assert start_method_after(parallel) == "spawn"
