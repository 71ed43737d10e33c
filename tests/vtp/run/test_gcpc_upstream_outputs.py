"""An upstream task's output inside a GCPC op's constant (its `worker_pool_specs`) reaches the
job as its value, as on Vertex: a team's pipeline file in a folder of its own, under `vtp run`."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures import REPO

pytestmark = pytest.mark.slow

PIPELINE = """
from google_cloud_pipeline_components.v1.custom_job import CustomTrainingJobOp
from kfp import dsl


@dsl.component
def machine() -> str:
    return "n1-standard-8"


@dsl.component
def accelerator() -> str:
    return "NVIDIA_TESLA_T4"


@dsl.component
def count() -> int:
    return 2


@dsl.component
def tag() -> str:
    return "v7"


@dsl.pipeline(name="gcpc-upstream-outputs")
def gcpc_pipeline(project: str = "local", location: str = "us-central1"):
    machine_task, accelerator_task, count_task, tag_task = machine(), accelerator(), count(), tag()
    CustomTrainingJobOp(
        project=project, location=location, display_name="from-upstream",
        worker_pool_specs=[{
            "machine_spec": {"machine_type": machine_task.output,
                             "accelerator_type": accelerator_task.output,
                             "accelerator_count": count_task.output},
            "replica_count": 1,
            "container_spec": {
                "image_uri": "python:3.11",
                "command": ["python", "-c", WRITE_ARGS],
                "args": [tag_task.output, f"--count={count_task.output}"],
            },
        }],
    )
"""
WRITE_ARGS = "import pathlib, sys; pathlib.Path(OUT).write_text(' '.join(sys.argv[1:]))"


def test_upstream_outputs_in_worker_pool_specs_reach_the_custom_job(tmp_path: Path) -> None:
    folder, out = tmp_path / "team", tmp_path / "job-args.txt"
    folder.mkdir()
    write_args = WRITE_ARGS.replace("OUT", repr(str(out)))
    (folder / "pipeline.py").write_text(PIPELINE.replace("WRITE_ARGS", repr(write_args)))
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "run", "pipeline.py", "--state-dir", str(tmp_path / "st")],
        cwd=folder, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    # The int stays an int (the payload's int32 field), the strings are the upstream values.
    assert "asks for 2 x NVIDIA_TESLA_T4" in output, output[-4000:]
    assert "pipelinechannel--" not in output
    # A placeholder among other text takes the value's text; one alone takes the value.
    assert out.read_text() == "v7 --count=2"
