"""Shared helpers for trainer tests: the tiny debug config, real `python -m vtp.trainer` runs, and
the device each test means.

Every test names its device. CPU tests run on the CPU on any machine: in-process runs get a CPU
`Runtime`, and the processes they start see no GPU (`CPU_ONLY`, in `trainer_env`). GPU tests
(marked `gpu`, below) are about what differs on a GPU and are skipped, with the reason, where
there is none.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from vtp.trainer import train
from vtp.trainer.config import parse_args
from vtp.trainer.distributed import Runtime

REPO = Path(__file__).resolve().parents[2]

CPU_ONLY = {"CUDA_VISIBLE_DEVICES": ""}
"""The environment of a process that must train on the CPU whatever the machine has."""
GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
"""The GPUs this test run sees."""


def pytest_configure(config: pytest.Config) -> None:
    """The `gpu` marker: `@pytest.mark.gpu(count=N)` skips unless N GPUs are visible."""
    config.addinivalue_line("markers", "gpu(count=1): needs that many visible CUDA GPUs")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip `gpu` tests that this machine cannot run, saying why."""
    for item in items:
        marker = item.get_closest_marker("gpu")
        if marker is None:
            continue
        count = marker.kwargs.get("count", 1)
        if count > GPUS:
            cuda = torch.version.cuda or "none (a CPU build)"
            reason = (
                f"needs {count} CUDA GPU{'s' if count > 1 else ''}; this machine has {GPUS} "
                f"(torch {torch.__version__}, CUDA {cuda})"
            )
            item.add_marker(pytest.mark.skip(reason=reason))


TINY = {
    "task": "tests.trainer.gated_task",
    "hidden_size": 32,
    "dropout": 0.1,
    "batch_size": 16,
    "max_steps": 24,
    "eval_interval": 10,
    "checkpoint_interval": 4,
    "keep_checkpoints": 2,
    "log_interval": 5,
}
"""A debug config: 24 steps of batch 16 with dropout (random state matters), checkpoints every 4."""


@pytest.fixture(autouse=True)
def one_thread():
    """Train with one intra-op thread, like the subprocesses (CI has two shared cores)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def metrics_file(tmp_path, monkeypatch) -> Path:
    """Where hypertune reports of runs in this process go (not the shared /tmp default)."""
    path = tmp_path / "hypertune" / "output.metrics"
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(path))
    return path


def tiny_args(out: Path, **overrides: object) -> list[str]:
    """Flags for a tiny run writing everything under `out`."""
    values = {
        **TINY,
        "checkpoint_dir": out / "checkpoints",
        "model_dir": out / "model",
        "tensorboard_dir": out / "logs",
        **overrides,
    }
    return [f"--{name}={value}" for name, value in values.items()]


def train_here(args: list[str], device: str = "cpu") -> "train.Result":
    """Run the trainer as one process inside this one (no process group) on `device`."""
    runtime = Runtime(rank=0, world_size=1, local_rank=0, device=torch.device(device))
    if runtime.device.type == "cuda":
        torch.cuda.set_device(runtime.device)
    return train.run(parse_args(args), runtime)


def trainer_env(out: Path, **extra: str) -> dict[str, str]:
    """The environment of a trainer subprocess on the CPU (`CPU_ONLY`): one thread, metrics
    file under `out`. `extra` adds to it (a GPU test sets CUDA_VISIBLE_DEVICES)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MASTER_ADDR", "CLUSTER_SPEC")}
    env.update(OMP_NUM_THREADS="1", CLOUD_ML_HP_METRIC_FILE=str(out / "hypertune.metrics"))
    env.update(CPU_ONLY)
    env.update(extra)
    return env


def start_trainer(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    """Start `python -m vtp.trainer ARGS` in the repository root (so tests.* tasks import)."""
    return subprocess.Popen(
        [sys.executable, "-m", "vtp.trainer", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def gate_env(
    out: Path, steps: int, batch_per_process: int = TINY["batch_size"], **extra: str
) -> dict[str, str]:
    """Environment that holds a run of the gated task (tests/trainer/gated_task.py) at a known
    step, so that a kill lands after a known checkpoint without timing guesses: once a process
    has fetched the examples of `steps` steps (`batch_per_process` each), it writes
    `out/gate/waiting.<rank>` and waits for `out/gate/open`. `extra` adds to it
    (`GATE_FAIL_RANK`)."""
    gate = out / "gate"
    gate.mkdir()
    return {"GATE_DIR": str(gate), "GATE_AFTER": str(steps * batch_per_process), **extra}


def start_gated(
    out: Path,
    args: list[str],
    steps: int,
    batch_per_process: int = TINY["batch_size"],
    **extra: str,
) -> subprocess.Popen[str]:
    """Start the trainer writing under `out`, held by the gate after `steps` (see `gate_env`)."""
    return start_trainer(args, trainer_env(out, **gate_env(out, steps, batch_per_process, **extra)))


def run_trainer(args: list[str], env: dict[str, str], timeout: float = 300) -> str:
    """Run the trainer to completion, assert it exits 0, and return its output."""
    process = start_trainer(args, env)
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output
    return output


def wait_for(path: Path, process: subprocess.Popen[str], timeout: float = 300) -> None:
    """Poll until `path` exists; fail early if the process has exited. The limit is generous:
    on a shared, busy machine starting processes that import torch takes a while."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            pytest.fail(
                f"trainer exited with {process.returncode} before {path} appeared:\n"
                f"{process.stdout.read()}"
            )
        assert time.monotonic() < deadline, f"timed out waiting for {path}"
        time.sleep(0.02)


def load_model(out: Path) -> dict[str, torch.Tensor]:
    """The final model a run wrote under `out`."""
    return torch.load(out / "model" / "model.pt", weights_only=True)


def assert_bitwise_equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    """Same keys, and every tensor equal bit for bit."""
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name
