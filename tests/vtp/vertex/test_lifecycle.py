"""Where a task's job lives: the re-attach key and output directory, from what the job runs."""

import re

import pytest
from google.cloud import aiplatform_v1

from vtp.launchers import custom_job as custom_job_task
from vtp.launchers import tuning as tuning_task
from vtp.vertex import lifecycle
from vtp.vertex.protodict import SpecError

POOL = "machine-type=n1-standard-4,container-image-uri=python:3.11-slim"
STUDY = {
    "metrics": [{"metricId": "score", "goal": "MAXIMIZE"}],
    "parameters": [{"parameterId": "x", "discreteValueSpec": {"values": [0.1, 0.3]}}],
}


def job(*args: str, **flags: str) -> aiplatform_v1.CustomJob:
    """The CustomJob the custom_job component builds for one pool and `args`."""
    return custom_job_task.build_job("train", [POOL], {}, list(args), {}, **flags)


def test_jobs_that_run_different_args_get_different_places() -> None:
    first = lifecycle.task_job("gs://b/runs", "run-1", "train", job("--lr=0.1"))
    second = lifecycle.task_job("gs://b/runs", "run-1", "train", job("--lr=0.2"))
    assert first.output_dir != second.output_dir and first.key != second.key


def test_a_retry_builds_the_same_job_and_finds_the_same_place() -> None:
    first = lifecycle.task_job("gs://b/runs/", "run-1", "train", job("--lr=0.1"))
    again = lifecycle.task_job("gs://b/runs", "run-1", "train", job("--lr=0.1"))
    assert first == again
    digest = lifecycle.job_digest(job("--lr=0.1"))
    assert re.fullmatch("[0-9a-f]{8}", digest)
    assert first.output_dir == f"gs://b/runs/run-1/train-{digest}"
    assert first.key == lifecycle.task_key("run-1", f"train-{digest}")


def test_the_digest_leaves_out_the_output_directory_and_labels() -> None:
    placed = job("--lr=0.1")
    lifecycle.place(lifecycle.CUSTOM_JOB, placed, "gs://b/runs", "run-1", "train")
    placed.labels[lifecycle.TASK_LABEL] = "abc"
    assert placed.job_spec.base_output_directory.output_uri_prefix.startswith("gs://b/runs/")
    assert lifecycle.job_digest(placed) == lifecycle.job_digest(job("--lr=0.1"))
    assert lifecycle.job_digest(job("--lr=0.1", timeout="1h")) != lifecycle.job_digest(placed)


def test_a_tuning_job_is_placed_by_its_study_and_trials() -> None:
    def tuning(max_trials: int) -> aiplatform_v1.HyperparameterTuningJob:
        return tuning_task.build_tuning_job("tune", STUDY, max_trials, 1, 0, job("--a=1"))

    placed = tuning(2)
    task = lifecycle.place(lifecycle.TUNING_JOB, placed, "gs://b/runs", "run-1", "tune")
    assert placed.trial_job_spec.base_output_directory.output_uri_prefix == task.output_dir
    assert task == lifecycle.task_job("gs://b/runs", "run-1", "tune", tuning(2))
    assert task != lifecycle.task_job("gs://b/runs", "run-1", "tune", tuning(3))


@pytest.mark.parametrize("root", ["/tmp/x", "", "gs://", "bucket/runs", "s3://b/runs"])
def test_an_output_root_outside_cloud_storage_is_named(root: str) -> None:
    with pytest.raises(SpecError, match=r"^output_root: .* is not a Cloud Storage URI") as error:
        lifecycle.task_job(root, "run-1", "train", job())
    assert error.value.path == "output_root"


def test_a_status_check_rides_out_a_blip_but_not_a_real_error() -> None:
    import requests

    from vtp.vertex.lifecycle import _status_check

    failures = [requests.ConnectionError("refused"), requests.ConnectionError("refused")]

    def flaky() -> str:
        if failures:
            raise failures.pop()
        return "RUNNING"

    assert _status_check(flaky) == "RUNNING" and not failures
    gone = requests.Response()
    gone.status_code = 404

    def missing() -> str:
        raise requests.HTTPError("404 Not Found", response=gone)

    with pytest.raises(requests.HTTPError):
        _status_check(missing)
