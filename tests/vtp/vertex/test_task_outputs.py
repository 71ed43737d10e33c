"""What every launcher shares: cancel on SIGTERM, the `gcp_resources` record, trial flags."""

import os
import signal

import pytest
from google.cloud import aiplatform_v1

from vtp.vertex import gcp_resources
from vtp.vertex.cancel import CancelOnSigterm
from vtp.vertex.trial_args import append_args, flag_value, trial_args


def test_a_sigterm_before_attach_cancels_once_attached_and_exits_143() -> None:
    cancelled: list[str] = []
    with CancelOnSigterm().installed() as guard:
        os.kill(os.getpid(), signal.SIGTERM)  # while the create request would be in flight
        assert guard.pending == signal.SIGTERM and not cancelled
        with pytest.raises(SystemExit) as exited:
            guard.attach("job 1", lambda: cancelled.append("job 1"))
    assert exited.value.code == 128 + signal.SIGTERM and cancelled == ["job 1"]


def test_a_sigterm_after_attach_cancels_at_once_and_the_handler_is_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    cancelled: list[str] = []
    with pytest.raises(SystemExit), CancelOnSigterm().installed() as guard:
        guard.attach("job 2", lambda: cancelled.append("job 2"))
        os.kill(os.getpid(), signal.SIGTERM)
    assert cancelled == ["job 2"] and signal.getsignal(signal.SIGTERM) == before


def test_the_record_names_the_resource_a_retry_finds(tmp_path) -> None:
    path = str(tmp_path / "out" / "gcp_resources")
    name = "projects/p/locations/l/customJobs/7"
    assert gcp_resources.recorded_name(path, "customJobs") is None
    gcp_resources.write(path, "CustomJob", f"https://host/v1/{name}")
    assert gcp_resources.recorded_name(path, "customJobs") == name
    assert gcp_resources.recorded_name(path, "hyperparameterTuningJobs") is None


@pytest.mark.parametrize(
    ("value", "flag"),
    [(32.0, "32"), (0.1, "0.1"), (7, "7"), (10**20, str(10**20)), ("adam", "adam"), (True, "True")],
)
def test_whole_numbers_are_written_as_integers(value, flag: str) -> None:
    assert flag_value(value) == flag


def test_trial_args_go_to_every_pool_that_runs_something() -> None:
    spec = aiplatform_v1.CustomJobSpec(
        worker_pool_specs=[
            {"container_spec": {"image_uri": "i", "args": ["--a=1"]}},
            {},
            {"python_package_spec": {"python_module": "m"}},
        ]
    )
    append_args(spec, trial_args({"lr": 0.5, "batch": 64.0}))
    pools = spec.worker_pool_specs
    assert list(pools[0].container_spec.args) == ["--a=1", "--lr=0.5", "--batch=64"]
    assert "container_spec" not in pools[1] and "python_package_spec" not in pools[1]
    assert list(pools[2].python_package_spec.args) == ["--lr=0.5", "--batch=64"]


def test_numbers_in_a_pipelines_args_and_job_spec_reach_argv_as_integers() -> None:
    """A pipeline's lists and dicts carry every number as a double (protobuf Struct): the
    custom_job launcher writes 16.0 as 16 wherever it becomes a replica's argv or env."""
    from vtp.launchers.custom_job import build_job

    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": 1.0,
        "containerSpec": {
            "imageUri": "python:3.11",
            "command": ["python3", "train.py"],
            "args": ["--batch_size", 16.0, "--lr", 0.5],
            "env": [{"name": "EPOCHS", "value": 2.0}],
        },
    }
    job = build_job("d", [], {"workerPoolSpecs": [pool]}, ["--steps", 100.0], {"epochs": 2.0})
    container = job.job_spec.worker_pool_specs[0].container_spec
    given = ["--batch_size", "16", "--lr", "0.5"]
    assert list(container.args) == [*given, "--steps", "100", "--epochs=2"]
    assert [(e.name, e.value) for e in container.env] == [("EPOCHS", "2")]
