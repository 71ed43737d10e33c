"""Issue #51: code inside a job finds its project, as on Vertex.

A replica's `aiplatform.init(experiment=...)` sets no project or location: the SDK takes them
from `CLOUD_ML_PROJECT_ID` and `CLOUD_ML_REGION`, which Vertex sets (here from the job's resource
name, `vtp/local/runtime/cluster.py`), and its credentials from `google.auth.default()`, which the
start-up hook answers with the replica's token and the job's project (Vertex's metadata server
does there). The experiment run it logs is then read back from the test, in the job's project
and region.
"""

import os
import subprocess
import sys

import pytest
from google.cloud import aiplatform

from tests.fixtures import wait_for_state
from tests.vtp.local.conftest import custom_job
from vtp.vertex import local_auth

PROJECT = "team-project"
REGION = "europe-west4"
"""Not the service's defaults (`local`, us-central1): what the replica finds came from the job."""

IN_JOB = """
import os
import google.auth
from google.cloud import aiplatform

credentials, project = google.auth.default()
print("ADC PROJECT", project, type(credentials).__name__, flush=True)
aiplatform.init(experiment="exp-in-job")
print("SDK", aiplatform.initializer.global_config.project,
      aiplatform.initializer.global_config.location, flush=True)
aiplatform.start_run("run-1")
aiplatform.log_params({"lr": 0.1})
aiplatform.log_metrics({"acc": 0.9})
aiplatform.end_run()
print("LOGGED", flush=True)
"""


@pytest.mark.slow
def test_an_experiment_run_logged_inside_a_job_with_no_configuration(local_service):
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "python:3.11", "command": ["python", "-c", IN_JOB]},
    }
    client = local_service.client()
    parent = f"projects/{PROJECT}/locations/{REGION}"
    created = client.create_custom_job(parent=parent, custom_job=custom_job(pool))
    ended = wait_for_state(client, created.name, timeout=300)
    job_id = created.name.rsplit("/", 1)[-1]
    log = (local_service.state_dir / "jobs" / job_id / "logs" / "workerpool0-0.log").read_text()
    assert ended.state.name == "JOB_STATE_SUCCEEDED", ended.error.message + "\n" + log[-3000:]
    assert f"ADC PROJECT {PROJECT} Credentials" in log
    assert f"SDK {PROJECT} {REGION}" in log and "LOGGED" in log

    local_service.init_sdk(project=PROJECT, location=REGION)
    frame = aiplatform.get_experiment_df("exp-in-job")
    rows = frame[frame["run_name"] == "run-1"].to_dict("records")
    assert len(rows) == 1 and rows[0]["metric.acc"] == 0.9 and rows[0]["param.lr"] == 0.1


LOGS_TO_ITS_RUN = """
from google.cloud import aiplatform

aiplatform.log_params({"depth": 3})  # no init(experiment=...): the job's own run, as on Vertex
aiplatform.log_metrics({"loss": 0.25})
print("LOGGED", flush=True)
"""


@pytest.mark.slow
def test_a_job_created_with_an_experiment_run_logs_to_it(local_service):
    local_service.init_sdk(project=PROJECT, location=REGION)
    aiplatform.init(experiment="exp-of-job")
    run = aiplatform.start_run("run-of-job")
    aiplatform.end_run(state=aiplatform.gapic.Execution.State.RUNNING)
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "python:3.11", "command": ["python", "-c", LOGS_TO_ITS_RUN]},
    }
    job = custom_job(pool)
    job.job_spec.experiment = aiplatform.Experiment("exp-of-job").resource_name
    job.job_spec.experiment_run = run.resource_name
    client = local_service.client()
    created = client.create_custom_job(
        parent=f"projects/{PROJECT}/locations/{REGION}", custom_job=job
    )
    ended = wait_for_state(client, created.name, timeout=300)
    job_id = created.name.rsplit("/", 1)[-1]
    log = (local_service.state_dir / "jobs" / job_id / "logs" / "workerpool0-0.log").read_text()
    assert ended.state.name == "JOB_STATE_SUCCEEDED", ended.error.message + "\n" + log[-3000:]
    frame = aiplatform.get_experiment_df("exp-of-job")
    rows = frame[frame["run_name"] == "run-of-job"].to_dict("records")
    assert len(rows) == 1 and rows[0]["metric.loss"] == 0.25 and rows[0]["param.depth"] == 3


@pytest.mark.parametrize(
    ("variables", "project"),
    [
        ({"CLOUD_ML_PROJECT_ID": "job-project"}, "job-project"),
        ({"CLOUD_ML_PROJECT_ID": "job-project", "CLOUDSDK_CORE_PROJECT": "gcloud"}, "job-project"),
        ({"CLOUD_ML_PROJECT_ID": "job-project", "GOOGLE_CLOUD_PROJECT": "chosen"}, "chosen"),
        ({"CLOUDSDK_CORE_PROJECT": "gcloud"}, "gcloud"),
        ({}, "None"),
    ],
)
def test_the_hooks_default_credentials_carry_the_jobs_project(variables, project):
    """`google.auth.default()` under the start-up hook: the token, and the project a user
    chose ($GOOGLE_CLOUD_PROJECT), else the job's, else gcloud's."""
    names = ("CLOUD_ML_PROJECT_ID", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT")
    env = {k: v for k, v in os.environ.items() if k not in names and k != "PYTHONPATH"}
    env.update(
        PYTHONPATH=str(local_auth.STARTUP_HOOK_DIR),
        VTP_LOCAL_API_ENDPOINT="localhost:1",
        VTP_LOCAL_TOKEN="replica-token",
        **variables,
    )
    code = "import google.auth; c, p = google.auth.default(); print(c.token, p)"
    said = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert said.stdout.split() == ["replica-token", project], said.stderr
