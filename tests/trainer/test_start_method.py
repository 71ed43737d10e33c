"""How a CPU node starts its processes: forked from the node, which has PyTorch and the task
imported already, where no thread but OpenBLAS's pool runs; spawned otherwise. Both train the
same model, bit for bit."""

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


def test_a_cpu_nodes_processes_fork_with_the_task_imported_and_train_as_spawned_ones(tmp_path):
    models, imports = {}, {}
    for method, extra in (("fork", {}), ("spawn", {"VTP_TRAINER_FORK": "0"})):
        out = tmp_path / method
        log = out / "imported"
        out.mkdir()
        args = tiny_args(out, dropout=0, nproc_per_node=2, task=TASK)
        output = run_trainer(args, trainer_env(out, IMPORT_LOG=str(log), **extra))
        assert "joined 2 processes on 1 nodes" in output
        models[method] = load_model(out)
        imports[method] = log.read_text().split()
    assert len(imports["fork"]) == 1, imports  # the node's import, which its ranks share
    assert len(set(imports["spawn"])) == 3, imports  # the node's, then each rank's own
    assert_bitwise_equal(models["fork"], models["spawn"])


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
