"""The device, seen from the CPU: a node on CUDA refuses more processes than it has GPUs (one
line, exit 2, before anything trains), and what the trainer writes for others is device-free.

What a GPU changes is tested on a GPU (test_gpu.py); these are the CPU-side halves, which run
on any machine: the launcher is told how many GPUs to assume (`main(argv, gpus=N)`), and the
model writer is given tensors that say they live on a GPU.
"""

import io
from pathlib import Path

import pytest
import torch

from vtp.trainer.__main__ import main
from vtp.trainer.config import Config, parse_args
from vtp.trainer.export import device_free, write_model_dir
from vtp.trainer.launch import plan


def _flags(out: Path, *flags: str) -> list[str]:
    dirs = {"checkpoint": out / "c", "model": out / "m", "tensorboard": out / "l"}
    return [*flags, *(f"--{name}_dir={path}" for name, path in dirs.items())]


@pytest.mark.parametrize(("nproc", "gpus"), [(2, 1), (8, 4)])
def test_more_processes_than_gpus_is_one_line_and_exit_2(tmp_path, capsys, nproc, gpus):
    status = main(_flags(tmp_path, f"--nproc_per_node={nproc}", "--batch_size=64"), gpus=gpus)
    out, err = capsys.readouterr()
    assert status == 2
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith("python -m vtp.trainer: error: ")
    assert f"--nproc_per_node={nproc}" in err and f"sees {gpus} GPU" in err
    assert f"--nproc_per_node={gpus} or fewer" in err and "CUDA_VISIBLE_DEVICES=''" in err
    assert not any(tmp_path.iterdir()), "nothing was trained or written"


def test_up_to_one_process_per_gpu_and_any_number_on_cpu_are_planned():
    config = Config(batch_size=24)
    assert plan(config, {}, gpus=3)[1] == 3  # one per GPU by default
    assert plan(Config(batch_size=24, nproc_per_node=2), {}, gpus=3)[1] == 2
    assert plan(Config(batch_size=24, nproc_per_node=3), {}, gpus=0)[1] == 3  # CPU processes
    assert plan(config, {}, gpus=0)[1] == 1


class _OnGpu(torch.Tensor):
    """A CPU tensor that says it is on a GPU, as a trained model's are there (and a tensor
    subclass, as FSDP's DTensors are): torch.save keeps both, weights_only loading refuses them."""

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return torch.device("cuda", 0)


def _gpu_state() -> dict[str, torch.Tensor]:
    model = torch.nn.Linear(3, 2)
    return {name: value.detach().as_subclass(_OnGpu) for name, value in model.state_dict().items()}


def test_the_model_writer_saves_plain_cpu_tensors_whatever_it_is_given(tmp_path):
    state = _gpu_state()
    assert all(value.device.type == "cuda" for value in state.values())
    as_is = io.BytesIO()
    torch.save(state, as_is)
    with pytest.raises(Exception, match="Weights only load failed"):  # what a consumer would get
        torch.load(io.BytesIO(as_is.getvalue()), weights_only=True)

    directory = write_model_dir(tmp_path / "model", state, parse_args([]), {"step": 1})
    loaded = torch.load(directory / "model.pt", weights_only=True)
    assert loaded.keys() == state.keys()
    for name, value in loaded.items():
        assert type(value) is torch.Tensor and value.device == torch.device("cpu"), name
        assert torch.equal(value, state[name].as_subclass(torch.Tensor)), name


def test_device_free_keeps_a_state_dicts_layout_and_module_versions():
    state = torch.nn.BatchNorm1d(4).state_dict()
    free = device_free({"model": state, "step": 3, "moments": [torch.ones(2)]})
    assert free["step"] == 3 and torch.equal(free["moments"][0], torch.ones(2))
    assert list(free["model"]) == list(state)
    assert free["model"]._metadata == state._metadata  # load_state_dict reads module versions
    torch.nn.BatchNorm1d(4).load_state_dict(free["model"])
