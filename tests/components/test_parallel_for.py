"""`custom_job` in a `dsl.ParallelFor` of a local run: one job and one output dir per iteration.

Every iteration of a ParallelFor has the same task name, so the re-attach key and the output
directory must also depend on what the iteration runs; otherwise iterations 2..N re-attach to
iteration 1's job.
"""

import builtins
import json
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1
from kfp import dsl

from tests.fixtures import PROJECT, REGION, LocalService, run_in_worker
from tests.vtp.local.conftest import SCRIPT
from vtp.components.custom_job import custom_job

State = aiplatform_v1.JobState


def scripted_job_spec() -> dict:
    """A one-replica job running the scripted replica (its --record comes from the args)."""
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "python:3.11-slim", "command": ["python", str(SCRIPT)]},
    }
    return {"workerPoolSpecs": [pool]}


def test_each_iteration_runs_its_own_job_in_its_own_directory(
    local_service: LocalService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in local_service.env().items():
        monkeypatch.setenv(key, value)
    # kfp.local indents task output by swapping builtins.print; its ParallelFor threads can
    # restore each other's swap and leave one installed. Put the real print back afterwards.
    monkeypatch.setattr(builtins, "print", builtins.print)
    records = [tmp_path / f"record-{i}" for i in range(3)]
    for record in records:
        record.mkdir()

    @dsl.pipeline(name="vtp-parallel-jobs")
    def parallel_jobs(output_root: str):
        with dsl.ParallelFor([["--record", str(r)] for r in records]) as args:
            custom_job(
                project=PROJECT,
                location=REGION,
                display_name="iteration",
                output_root=output_root,
                job_spec=scripted_job_spec(),
                args=args,
                poll_interval_seconds=0.1,
            )

    result, _ = run_in_worker(parallel_jobs, tmp_path / "run", output_root="gs://bucket/parallel")
    assert result["succeeded"], result

    request = {"parent": local_service.parent, "filter": 'display_name="iteration"'}
    jobs = list(local_service.client().list_custom_jobs(request=request))
    assert [job.state for job in jobs] == [State.JOB_STATE_SUCCEEDED] * 3
    envs = [json.loads((r / "workerpool0-0.env.json").read_text()) for r in records]
    model_dirs = {env["AIP_MODEL_DIR"] for env in envs}
    assert len(model_dirs) == 3
    assert all(d.startswith("gs://bucket/parallel/") for d in model_dirs)
    prefixes = {job.job_spec.base_output_directory.output_uri_prefix for job in jobs}
    assert {f"{p}/model/" for p in prefixes} == model_dirs
