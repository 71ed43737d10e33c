"""model-builder's batch prediction snippets, on automatic and on dedicated resources (a K80
asked for, as the snippet's default), for an uploaded XGBoost model."""

import create_batch_prediction_job_dedicated_resources_sample
import create_batch_prediction_job_sample
import upload_model_sample
from google.cloud import storage

where = {"project": "vtp-samples", "location": "us-central1"}
BUCKET = "vtp-samples-model-builder"
client = storage.Client(project="vtp-samples")
if not client.bucket(BUCKET).exists():
    client.create_bucket(BUCKET)
client.bucket(BUCKET).blob("batch/instances.jsonl").upload_from_string(
    "[5.1, 3.5, 1.4, 0.2]\n[6.7, 3.0, 5.2, 2.3]\n"
)
model = upload_model_sample.upload_model_sample(
    display_name="mb-batch-xgboost",
    serving_container_image_uri="us-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.1-7:latest",
    artifact_uri=(
        "gs://cloud-samples-data-us-central1/vertex-ai/google-cloud-aiplatform-ci-artifacts/"
        "models/iris_xgboost"
    ),
    **where,
)
job = create_batch_prediction_job_sample.create_batch_prediction_job_sample(
    model_resource_name=model.resource_name,
    job_display_name="mb-batch",
    gcs_source=f"gs://{BUCKET}/batch/instances.jsonl",
    gcs_destination=f"gs://{BUCKET}/out",
    **where,
)
assert job.state.name == "JOB_STATE_SUCCEEDED", job.state
dedicated = create_batch_prediction_job_dedicated_resources_sample.create_batch_prediction_job_dedicated_resources_sample(  # noqa: E501
    model_resource_name=model.resource_name,
    job_display_name="mb-batch-dedicated",
    gcs_source=[f"gs://{BUCKET}/batch/instances.jsonl"],
    gcs_destination=f"gs://{BUCKET}/out-dedicated",
    **where,
)
assert dedicated.state.name == "JOB_STATE_SUCCEEDED", dedicated.state
print([blob.name for blob in dedicated.iter_outputs()])
