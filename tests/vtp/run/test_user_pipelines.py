"""`vtp run` takes a user's own pipeline: a file with a lightweight component of its own next to
ours, the same pipeline compiled to YAML, and a module:function, from a folder of the user's."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import compile_user_pipeline

PIPELINE = """
from kfp import dsl

from vtp.components.custom_job import custom_job
from vtp.components.evaluate_checkpoints import evaluate_checkpoints
from helpers import POOL


@dsl.component(base_image="python:3.11-slim")
def announce(message: str) -> str:
    print(f"announcing: {message}")
    return message.upper()


@dsl.pipeline(name="my-train")
def my_train(project: str, output_root: str, steps: int = 20):
    hello = announce(message="starting")
    job = custom_job(
        project=project,
        location="us-central1",
        display_name=hello.output,
        output_root=output_root,
        worker_pool_specs=[POOL],
        args=["--hidden_size=16", "--checkpoint_interval=10", "--max_steps=20"],
        poll_interval_seconds=0.5,
    )
    evaluate_checkpoints(checkpoints=job.outputs["checkpoints"], threshold=0.0)
"""
HELPERS = 'POOL = "machine-type=n1-standard-4,container-image-uri=us-docker.pkg.dev/x/vtp/vtp:1"\n'


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of the user's: the pipeline file and a module it imports."""
    folder = tmp_path_factory.mktemp("my_project")
    (folder / "my_pipeline.py").write_text(PIPELINE)
    (folder / "helpers.py").write_text(HELPERS)
    return folder


def vtp_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vtp", "run", *args], cwd=folder, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


@pytest.mark.slow
def test_a_pipeline_file_of_the_users_runs(project: Path) -> None:
    result = vtp_run(project, "my_pipeline.py")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "announcing: starting" in result.stdout  # the user's own component ran
    summary = result.stdout[result.stdout.rindex("Pipeline my_pipeline.py SUCCEEDED") :]
    assert "custom-job:" in summary and "evaluate-checkpoints:" in summary
    assert (project / ".vtp" / "run" / "gcs" / "vtp-local").is_dir()


def compile_yaml(project: Path) -> Path:
    """The user's pipeline compiled to my_train.yaml in their folder, as they would."""
    return compile_user_pipeline(project, "my_pipeline", "my_train", "my_train.yaml")


@pytest.mark.slow
def test_the_same_pipeline_compiled_to_yaml_runs(project: Path) -> None:
    compile_yaml(project)
    result = vtp_run(project, "my_train.yaml", "--param", "steps=3")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "Pipeline my_train.yaml SUCCEEDED" in result.stdout


@pytest.mark.slow
def test_the_yaml_submitted_locally_with_wait_shows_the_task_logs(project: Path, local_service):
    compile_yaml(project)
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "submit", "my_train.yaml", "--local", "--wait",
         "--param", "output_root=gs://vtp-local/runs"],
        cwd=project, capture_output=True, text=True, timeout=600,
        env={**os.environ, "VTP_LOCAL_ENDPOINT": local_service.url},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "announcing: starting" in result.stdout  # the task's own log line
    assert "Got executor_input" not in result.stdout and "\x1b[" not in result.stdout
    assert "PIPELINE_STATE_SUCCEEDED" in result.stderr


def test_bad_references_exit_2_naming_what_is_wrong(project: Path) -> None:
    cases = {
        "my_pipeline.py:nope": "'nope' is not a @dsl.pipeline function",
        "missing.py": "no such file 'missing.py'",
        "my_pipeline:my_train_typo": "is not a @dsl.pipeline function",
        "no_such_module:f": "cannot import 'no_such_module'",
        "just-a-name": "unknown pipeline 'just-a-name'; use train, tune, export",
    }
    for ref, message in cases.items():
        result = vtp_run(project, ref)
        assert result.returncode == 2 and message in result.stderr, (ref, result.stderr)


BLOBS_TASK = '''
"""Two Gaussian blobs: a task of the user's own, in their folder, not installed."""
import torch
from torch import nn
from torch.utils.data import TensorDataset


def labels(config):
    return ["left", "right"]


def build_model(config):
    width = config.hidden_size
    return nn.Sequential(nn.Linear(2, width), nn.ReLU(), nn.Linear(width, 2))


def build_datasets(config):
    generator = torch.Generator().manual_seed(0)
    left, right = (torch.randn(64, 2, generator=generator) for _ in range(2))
    x = torch.cat([left - 2, right + 2])
    y = torch.cat([torch.zeros(64, dtype=torch.long), torch.ones(64, dtype=torch.long)])
    return TensorDataset(x, y), TensorDataset(x[::4], y[::4])
'''


@pytest.mark.slow
def test_a_task_module_in_the_users_folder_trains_under_vtp_run(tmp_path: Path) -> None:
    (tmp_path / "blobs.py").write_text(BLOBS_TASK)
    args = '["--hidden_size=8", "--batch_size=16", "--epochs=2"]'
    result = vtp_run(
        tmp_path, "train", "--param", "task=blobs", "--param", f"trainer_args={args}",
        "--param", "threshold=0.5",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    summary = result.stdout[result.stdout.rindex("Pipeline train SUCCEEDED") :]
    assert "passed True" in summary
    registered = summary.split("vertex_model: ", 1)[1].split()[0]
    assert "projects/local/locations/us-central1/models/" in registered
    assert "vtp-blobs" in result.stdout  # the job and the model are named after the task


NO_BASE_IMAGE = """
from kfp import dsl


@dsl.component
def first(x: int) -> int:
    return x + 1


@dsl.component
def second(x: int) -> int:
    return x * 2


@dsl.component
def third(x: int) -> int:
    return x - 3


@dsl.pipeline(name="no-base-image")
def no_base_image(x: int = 1):
    third(x=second(x=first(x=x).output).output)
"""


@pytest.mark.slow
def test_kfps_default_base_image_warning_is_shown_once_per_run(tmp_path: Path) -> None:
    (tmp_path / "steps.py").write_text(NO_BASE_IMAGE)
    result = vtp_run(tmp_path, "steps.py", "--state-dir", str(tmp_path / "state"))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    said = result.stdout + result.stderr
    assert said.count("The default base_image used by the @dsl.component decorator") == 1, said
    assert "Output 1" in said  # ((1 + 1) * 2) - 3
