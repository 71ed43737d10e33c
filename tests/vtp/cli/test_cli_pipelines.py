"""`vtp run` / `vtp compile` argument handling: bad input exits 2 before anything runs."""

from pathlib import Path

import pytest
from google.protobuf import json_format

from vtp.cli import main
from vtp.cli.pipelines import run_params
from vtp.pipelines import catalog
from vtp.pipelines.train import train_pipeline


def test_params_take_the_types_the_pipeline_declares() -> None:
    flags = [
        "threshold=1",
        'trainer_args=["--epochs=3"]',
        "model_display_name=3",
        "restart_job_on_worker_restart=false",
        "last_k=2",
    ]
    implied = catalog.entry("train").local_params
    spec = json_format.MessageToDict(train_pipeline.pipeline_spec)
    assert run_params(spec, "train", flags, implied) == {
        **implied,
        "threshold": 1.0,
        "trainer_args": ["--epochs=3"],
        "model_display_name": "3",  # a STRING stays text even where it reads as JSON
        "restart_job_on_worker_restart": False,
        "last_k": 2,
    }


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["run", "nope"], "unknown pipeline 'nope'"),
        (["run", "train", "--param", "threshold"], "--param expects NAME=VALUE"),
        (["run", "train", "--param", "=3"], "--param expects NAME=VALUE"),
        (["run", "train", "--param", "thresh=0.5"], "--param thresh: not a parameter"),
        (
            ["run", "train", "--param", "threshold=abc"],
            "--param threshold: expected a NUMBER_DOUBLE",
        ),
        (["run", "train", "--param", "last_k=2.5"], "--param last_k: expected a NUMBER_INTEGER"),
        (
            ["run", "train", "--param", "trainer_args=--epochs=3"],
            "--param trainer_args: expected a LIST",
        ),
        (
            ["run", "train", "--param", "restart_job_on_worker_restart=maybe"],
            "--param restart_job_on_worker_restart: expected a BOOLEAN",
        ),
        (["run", "tune", "--param", "study_spec=[]"], "--param study_spec: expected a STRUCT"),
        (
            ["run", "train", "--param", "location=1"],
            "--param location: '1' is not a Vertex AI location",
        ),
        (
            ["run", "train", "--param", "output_root=/tmp/x"],
            "--param output_root: '/tmp/x' is not a Cloud Storage URI",
        ),
        (["compile", "nope"], "unknown pipeline 'nope'"),
    ],
)
def test_bad_input_exits_2_naming_it_before_anything_starts(
    argv: list[str], names: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    assert main([*argv, *(["--state-dir", str(state)] if argv[0] == "run" else [])]) == 2
    captured = capsys.readouterr()
    assert names in captured.err and captured.out == ""
    assert not state.exists()  # no local service was started
