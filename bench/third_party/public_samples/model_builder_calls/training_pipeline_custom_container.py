"""model-builder's create_training_pipeline_custom_container_job_sample, the container being
this project's trainer image (its entrypoint trains; no command is given, as in the sample),
its model served by the same image."""

import create_training_pipeline_custom_container_job_sample as sample

IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"
model = sample.create_training_pipeline_custom_container_job_sample(
    project="vtp-samples",
    location="us-central1",
    staging_bucket="gs://vtp-samples-model-builder",
    display_name="mb-training-pipeline-container",
    container_uri=IMAGE,
    model_serving_container_image_uri=IMAGE,
    model_display_name="mb-container-model",
    args=["--epochs=2"],
)
assert model.uri, model
