"""The plugin's helpers and faults, as this project's own tests use them (the `local_vertex`
fixture comes from the installed entry point), and the context manager in a user's script."""

import subprocess
import sys
from pathlib import Path

import pytest
import requests
from google.cloud import aiplatform


def python_job(command: str) -> aiplatform.CustomJob:
    """A one-replica job running `python -c command` (an image other than ours, as a team's)."""
    return aiplatform.CustomJob(
        display_name="py",
        worker_pool_specs=[
            {
                "machine_spec": {"machine_type": "n1-standard-4"},
                "replica_count": 1,
                "container_spec": {
                    "image_uri": "us-docker.pkg.dev/team/ml/job:1",
                    "command": ["python", "-c", command],
                },
            }
        ],
    )


def test_a_preempted_job_restarts_and_rest_lists_it(local_vertex) -> None:
    local_vertex.preempt_next_job()
    job = python_job("print('started', flush=True); import time; time.sleep(1)")
    job.run()
    logs = local_vertex.logs(job)
    assert "preempting workerpool0-0" in logs
    assert logs.count("starting workerpool0-0") == 2, logs  # the preempted start, the restart
    assert logs.endswith("started\n"), logs
    aiplatform.init(api_transport="rest")
    assert [j.state.name for j in aiplatform.CustomJob.list()] == ["JOB_STATE_SUCCEEDED"]


@pytest.mark.parametrize(
    ("body", "field"),
    [({"fault": "EXPLODE"}, '"fault"'), ({}, '"fault"'), ({"fault": ["FAIL"]}, '"fault"')],
)
def test_a_malformed_fault_is_a_400_naming_the_field(local_vertex, body, field) -> None:
    answer = requests.post(
        f"{local_vertex.url}/v1/{local_vertex.parent}/customJobs:injectFault",
        json=body,
        headers={"Authorization": f"Bearer {local_vertex.info.token}"},
    )
    assert answer.status_code == 400 and field in answer.json()["error"]["message"]


def test_faults_need_the_token_and_one_location(local_vertex) -> None:
    path = f"{local_vertex.url}/v1/{local_vertex.parent}/customJobs:injectFault"
    assert requests.post(path, json={"fault": "FAIL"}).status_code == 401
    any_project = f"{local_vertex.url}/v1/projects/-/locations/-/customJobs:injectFault"
    answer = requests.post(
        any_project,
        json={"fault": "FAIL"},
        headers={"Authorization": f"Bearer {local_vertex.info.token}"},
    )
    assert answer.status_code == 400


SCRIPT = """
import os

from google.cloud import aiplatform, storage
from google.cloud.aiplatform import initializer

from vtp.testing import local_vertex

before = dict(os.environ)


@local_vertex()
def smoke():
    storage.Client().bucket("smoke").blob("x.txt").upload_from_string("1")
    job = aiplatform.CustomJob(
        display_name="smoke",
        worker_pool_specs=[{
            "machine_spec": {"machine_type": "n1-standard-4"},
            "replica_count": 1,
            "container_spec": {"image_uri": "us-docker.pkg.dev/team/ml/job:1",
                               "command": ["python", "-c", "print('hi')"]},
        }],
    )
    job.run()
    print("state", job.state.name)


smoke()
with local_vertex() as vertex:
    print("fresh", vertex.jobs(), vertex.objects("smoke"))
assert dict(os.environ) == before
print("project after", initializer.global_config._project)
"""


def test_the_context_manager_and_decorator_outside_pytest(tmp_path: Path) -> None:
    (tmp_path / "smoke.py").write_text(SCRIPT)
    result = subprocess.run(
        [sys.executable, "smoke.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "state JOB_STATE_SUCCEEDED" in result.stdout
    assert "fresh [] []" in result.stdout  # a new service each time: nothing of the last
    assert "project after None" in result.stdout


QUIET_SUITE = """
import sys


def test_nothing_of_vertex():
    assert "google.cloud.aiplatform_v1" not in sys.modules
"""


def test_a_suite_that_never_asks_starts_nothing(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_quiet.py").write_text(QUIET_SUITE)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"--basetemp={tmp_path / 'basetemp'}"],
        cwd=tmp_path / "suite", capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:]
    assert "local_vertex" in subprocess.run(
        [sys.executable, "-m", "pytest", "--markers"], cwd=tmp_path / "suite",
        capture_output=True, text=True, timeout=300,
    ).stdout  # fmt: skip
    assert not list((tmp_path / "basetemp").glob("local-vertex*"))
