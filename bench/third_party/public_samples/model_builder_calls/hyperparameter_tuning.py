"""model-builder's tuning snippets as a user strings them: create the study (128 trials, 8 at
a time, as the snippet has it) on this project's trainer image, get it while it runs, cancel
it, delete it. The create snippet waits for the job, so it runs in a thread and ends when the
job is cancelled."""

import threading
import time

import cancel_hyperparameter_tuning_job_sample
import create_hyperparameter_tuning_job_sample
import delete_hyperparameter_tuning_job_sample
import get_hyperparameter_tuning_job_sample
from google.cloud import aiplatform

PROJECT = "vtp-samples"
outcome = {}


def create() -> None:
    try:
        create_hyperparameter_tuning_job_sample.create_hyperparameter_tuning_job_sample(
            project=PROJECT,
            location="us-central1",
            staging_bucket="gs://vtp-samples-model-builder",
            display_name="mb-tuning",
            container_uri="us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0",
        )
    except Exception as error:  # run() raises once the job ends CANCELLED
        outcome["error"] = error


thread = threading.Thread(target=create)
thread.start()
aiplatform.init(project=PROJECT, location="us-central1")
for _ in range(120):
    jobs = aiplatform.HyperparameterTuningJob.list(filter='display_name="mb-tuning"')
    if jobs:
        break
    time.sleep(1)
job_id = jobs[0].name
job = get_hyperparameter_tuning_job_sample.get_hyperparameter_tuning_job_sample(
    project=PROJECT, hyperparameter_tuning_job_id=job_id
)
print(job.resource_name, job.state.name, job.labels)
assert job.labels == {"my_key": "my_value"}, job.labels
cancel_hyperparameter_tuning_job_sample.cancel_hyperparameter_tuning_job_sample(
    project=PROJECT, hyperparameter_tuning_job_id=job_id
)
thread.join(timeout=300)
assert not thread.is_alive(), "the create snippet still waits after the cancel"
print("create snippet ended with", repr(outcome.get("error")))
state = aiplatform.HyperparameterTuningJob.get(job_id).state.name
assert state == "JOB_STATE_CANCELLED", state
delete_hyperparameter_tuning_job_sample.delete_hyperparameter_tuning_job_sample(
    project=PROJECT, hyperparameter_tuning_job_id=job_id
)
