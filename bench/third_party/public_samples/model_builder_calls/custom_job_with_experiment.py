"""model-builder's create_custom_job_with_experiment_sample: a local script run as a custom job
on Vertex's prebuilt scikit-learn image, the job added to an experiment run (which the SDK
requires to exist: it is started first); the script logs to that run from inside the job."""

import create_custom_job_with_experiment_sample
from google.cloud import aiplatform

with open("task.py", "w") as task:
    task.write(
        "from google.cloud import aiplatform\n"
        "aiplatform.init()\n"
        "aiplatform.log_params({'learning_rate': 0.1})\n"
        "aiplatform.log_metrics({'accuracy': 0.8})\n"
        "print('logged to the run')\n"
    )
aiplatform.init(project="vtp-samples", location="us-central1", experiment="mb-job-experiment")
aiplatform.start_run("run-1")
aiplatform.end_run(state=aiplatform.gapic.Execution.State.RUNNING)
create_custom_job_with_experiment_sample.create_custom_job_with_experiment_sample(
    project="vtp-samples",
    location="us-central1",
    staging_bucket="gs://vtp-samples-model-builder",
    display_name="mb-job-with-experiment",
    script_path="task.py",
    container_uri="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
    service_account="vtp-samples-runner@vtp-samples.iam.gserviceaccount.com",
    experiment="mb-job-experiment",
    experiment_run="run-1",
)
run = aiplatform.ExperimentRun("run-1", experiment="mb-job-experiment")
print("params", run.get_params(), "metrics", run.get_metrics())
assert run.get_metrics() == {"accuracy": 0.8}, run.get_metrics()
