"""What differs on a GPU, tested on one: NCCL DDP, bf16 autocast, --compile, FSDP2 with sharded
DCP checkpoints, a preempted run resuming bit for bit, the refusal of more processes than GPUs,
model.pt holding CPU tensors only, and the local service handing a replica its GPUs through
CUDA_VISIBLE_DEVICES. Each test says how many GPUs it needs (`gpu(count=N)`, conftest) and is
skipped, with the reason, on a machine with fewer.

Each run names its GPUs (CUDA_VISIBLE_DEVICES, over `trainer_env`'s CPU default).
"""

import json
import os
import signal
import subprocess
import sys

import pytest
import torch
from google.cloud import aiplatform_v1

from tests.fixtures import REPO, LocalService, State, wait_for_state
from tests.trainer.conftest import (
    GPUS,
    TINY,
    assert_bitwise_equal,
    start_gated,
    start_trainer,
    tiny_args,
    trainer_env,
    wait_for,
)
from vtp.trainer.checkpoint import Checkpointer, checkpoint_path, list_checkpoints, load_checkpoint
from vtp.trainer.distributed import Runtime

pytestmark = pytest.mark.slow

ONE_GPU = {"CUDA_VISIBLE_DEVICES": "0"}
TWO_GPUS = {"CUDA_VISIBLE_DEVICES": "0,1"}
DIGITS = {"task": "vtp.trainer.tasks.digits", "max_steps": 0, "epochs": 20, "batch_size": 64}
DIGITS.update(eval_interval=0, checkpoint_interval=0, hidden_size=128)


def gpu_run(out, gpus: dict[str, str], **flags: object) -> str:
    """`python -m vtp.trainer` of the tiny run (with `flags`) on `gpus`; its output (exit 0)."""
    process = start_trainer(tiny_args(out, **flags), trainer_env(out, **gpus))
    output, _ = process.communicate(timeout=600)
    assert process.returncode == 0, output
    return output


def cpu_only_model(path) -> dict[str, torch.Tensor]:
    """model.pt as a consumer without a GPU loads it: plain torch.load, weights_only, in a
    process that sees no GPU. Returns it as loaded here, after checking every tensor is on
    the CPU."""
    check = (
        "import sys, torch; state = torch.load(sys.argv[1], weights_only=True); "
        "print(sorted({str(v.device) for v in state.values()}))"
    )
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    seen = subprocess.run(
        [sys.executable, "-c", check, str(path)], env=env, capture_output=True, text=True
    )
    assert seen.returncode == 0, seen.stderr
    assert seen.stdout.strip() == "['cpu']"
    state = torch.load(path, weights_only=True)  # no map_location: where the file says
    assert {value.device.type for value in state.values()} == {"cpu"}
    return state


def accuracy(out) -> float:
    return json.loads((out / "model" / "metrics.json").read_text())["accuracy"]


@pytest.mark.gpu(count=1)
def test_a_gpu_run_writes_a_model_of_cpu_tensors_only(tmp_path):
    output = gpu_run(tmp_path, ONE_GPU)
    model = cpu_only_model(tmp_path / "model" / "model.pt")
    saved = load_checkpoint(list_checkpoints(tmp_path / "checkpoints")[0].path)
    assert_bitwise_equal(model, saved["model"])
    assert "wrote model" in output


@pytest.mark.gpu(count=1)
def test_a_gpu_checkpoint_holds_its_step_while_the_copy_overlaps_training(tmp_path):
    # As test_checkpoint's CPU test: weights (deferred) are copied on a side stream until
    # before_update(); the buffer is copied on the training stream before save() returns.
    weights = torch.arange(4_000_000.0, device="cuda")
    buffer = torch.zeros(3, device="cuda")
    checkpointer = Checkpointer(tmp_path, keep=3, enabled=True)
    for step in (1, 2):
        state = {"model": {"weight": weights, "running_mean": buffer}, "step": step}
        checkpointer.save(state, step, 0, deferred=lambda t, w=weights: t is w)
        buffer += 1  # the next forward pass, queued behind the copy
        checkpointer.before_update()  # the training stream waits for the weights' copy
        weights += 1  # the next optimizer step
    checkpointer.close()
    for step in (1, 2):
        saved = load_checkpoint(checkpoint_path(tmp_path, step))
        assert saved["model"]["weight"].device.type == "cpu"
        assert saved["model"]["weight"][:3].tolist() == [step - 1, step, step + 1]
        assert saved["model"]["weight"][-1].item() == 4_000_000.0 - 2 + step
        assert saved["model"]["running_mean"].tolist() == [step - 1] * 3


@pytest.mark.gpu(count=1)
@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_digits_learns_on_a_gpu_in_each_precision(tmp_path, precision):
    gpu_run(tmp_path, ONE_GPU, **DIGITS, precision=precision)
    assert accuracy(tmp_path) >= 0.9


@pytest.mark.gpu(count=1)
def test_bf16_autocast_computes_in_bf16_on_a_gpu_only():
    layer, inputs = torch.nn.Linear(4, 4), torch.ones(2, 4)
    gpu = Runtime(0, 1, 0, torch.device("cuda", 0))
    with gpu.autocast("bf16"):
        assert layer.cuda()(inputs.cuda()).dtype == torch.bfloat16
    with gpu.autocast("fp32"):
        assert layer(inputs.cuda()).dtype == torch.float32
    cpu = Runtime(0, 1, 0, torch.device("cpu"))
    with cpu.autocast("bf16"):
        assert layer.cpu()(inputs).dtype == torch.float32


@pytest.mark.gpu(count=1)
def test_compile_on_a_gpu_trains_and_saves_the_plain_module(tmp_path):
    gpu_run(tmp_path, ONE_GPU, **DIGITS, compile=True)
    assert accuracy(tmp_path) >= 0.9
    model = cpu_only_model(tmp_path / "model" / "model.pt")
    assert not any(name.startswith("_orig_mod") for name in model)


@pytest.mark.gpu(count=1)
def test_sigterm_on_a_gpu_then_rerun_ends_bitwise_equal_to_an_uninterrupted_run(tmp_path):
    gpu_run(tmp_path / "whole", ONE_GPU)
    expected = torch.load(tmp_path / "whole" / "model" / "model.pt", weights_only=True)

    out = tmp_path / "preempted"
    out.mkdir()
    process = start_gated(out, tiny_args(out), steps=10, **ONE_GPU)
    wait_for(out / "gate" / "waiting.0", process)
    process.send_signal(signal.SIGTERM)
    (out / "gate" / "open").touch()
    output, _ = process.communicate(timeout=300)
    assert process.returncode == 143, output
    assert list_checkpoints(out / "checkpoints")[0].step == 10
    output = gpu_run(out, ONE_GPU)
    assert "at step 10\n" in output
    assert_bitwise_equal(cpu_only_model(out / "model" / "model.pt"), expected)


@pytest.mark.gpu(count=1)
def test_more_processes_than_gpus_is_refused_in_one_line(tmp_path):
    process = subprocess.run(
        [sys.executable, "-m", "vtp.trainer", f"--nproc_per_node={GPUS + 1}", "--batch_size=64",
         f"--model_dir={tmp_path}/m", f"--checkpoint_dir={tmp_path}/c"],
        cwd=REPO, env=trainer_env(tmp_path, CUDA_VISIBLE_DEVICES=os.environ.get(
            "CUDA_VISIBLE_DEVICES", ",".join(map(str, range(GPUS))))),
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert process.returncode == 2, process.stderr
    assert process.stderr.count("\n") == 1, process.stderr
    assert f"--nproc_per_node={GPUS + 1}" in process.stderr and f"sees {GPUS} GPU" in process.stderr
    assert not (tmp_path / "m").exists() and not (tmp_path / "c").exists()


@pytest.mark.gpu(count=1)
def test_fsdp_on_one_gpu_writes_sharded_checkpoints_and_a_cpu_model(tmp_path):
    gpu_run(tmp_path, ONE_GPU, strategy="fsdp")
    newest = list_checkpoints(tmp_path / "checkpoints")[0]
    assert (newest.step, newest.format) == (24, "dcp")
    model = cpu_only_model(tmp_path / "model" / "model.pt")
    assert_bitwise_equal(model, load_checkpoint(newest.path)["model"])


@pytest.mark.gpu(count=2)
def test_ddp_over_nccl_on_two_gpus(tmp_path):
    output = gpu_run(tmp_path, TWO_GPUS, nproc_per_node=2, **DIGITS)
    assert "joined 2 processes on 1 nodes via cuda:0" in output
    assert accuracy(tmp_path) >= 0.9
    cpu_only_model(tmp_path / "model" / "model.pt")


@pytest.mark.gpu(count=2)
def test_fsdp2_on_two_gpus_shards_resumes_bitwise_and_saves_a_cpu_model(tmp_path):
    fsdp = {"strategy": "fsdp", "nproc_per_node": 2}
    whole = gpu_run(tmp_path / "whole", TWO_GPUS, **fsdp)
    assert "FSDP: 3 blocks sharded across 2 processes" in whole
    expected = cpu_only_model(tmp_path / "whole" / "model" / "model.pt")

    out = tmp_path / "preempted"
    out.mkdir()
    process = start_gated(out, tiny_args(out, **fsdp), 10, TINY["batch_size"] // 2, **TWO_GPUS)
    wait_for(out / "gate" / "waiting.0", process)
    wait_for(out / "checkpoints" / "step_00000008.json", process)
    process.kill()
    process.communicate()
    shards = sorted(p.name for p in (out / "checkpoints" / "step_00000008").glob("*.distcp"))
    assert shards == ["__0_0.distcp", "__1_0.distcp"]
    assert "at step 8\n" in gpu_run(out, TWO_GPUS, **fsdp)
    assert_bitwise_equal(cpu_only_model(out / "model" / "model.pt"), expected)


@pytest.mark.gpu(count=1)
def test_the_local_service_gives_a_replica_the_gpus_its_pool_asks_for(tmp_path):
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    flags = {**TINY, "task": "tests.trainer.fsdp_ranks_task", "max_steps": 4}
    variables = {"OMP_NUM_THREADS": "1", "PYTHONPATH": str(REPO), "RANKS_DIR": str(ranks)}
    variables["CLOUD_ML_HP_METRIC_FILE"] = str(tmp_path / "metrics")
    container = {
        "image_uri": "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
        "args": [f"--{name}={value}" for name, value in flags.items()],
        "env": [{"name": k, "value": v} for k, v in variables.items()],
    }
    machine = {"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4"}
    pool = {"machine_spec": {**machine, "accelerator_count": 1}, "replica_count": 1}
    job = {
        "display_name": "one-gpu",
        "job_spec": {
            "worker_pool_specs": [{**pool, "container_spec": container}],
            "base_output_directory": {"output_uri_prefix": "gs://runs/gpu"},
        },
    }
    flags_of_service = ("--poll-interval", "0.05", "--grace-period", "2", "--gpus", "auto")
    with LocalService(tmp_path / "service", *flags_of_service) as service:
        client = service.client()
        name = client.create_custom_job(
            parent=service.parent, custom_job=aiplatform_v1.CustomJob(job)
        ).name
        assert wait_for_state(client, name, timeout=300).state == State.JOB_STATE_SUCCEEDED
        model = service.gcs_root / "runs" / "gpu" / "model" / "model.pt"
        cpu_only_model(model)
    noted = json.loads((ranks / "0.json").read_text())
    assert noted["gpus"] == 1, noted
    assert noted["cuda_visible_devices"] in {str(i) for i in range(GPUS)}, noted
