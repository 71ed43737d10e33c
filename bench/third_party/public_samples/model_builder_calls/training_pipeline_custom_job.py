"""model-builder's create_training_pipeline_custom_job_sample: a script on Vertex's prebuilt
scikit-learn training image, without a managed dataset."""

import shutil

import create_training_pipeline_custom_job_sample

shutil.copy("iris_task.py", "task.py")
model = create_training_pipeline_custom_job_sample.create_training_pipeline_custom_job_sample(
    project="vtp-samples",
    location="us-central1",
    staging_bucket="gs://vtp-samples-model-builder",
    display_name="mb-training-pipeline-script",
    script_path="task.py",
    container_uri="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
    model_serving_container_image_uri="us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-0:latest",
    model_display_name="mb-script-model",
    replica_count=1,
)
assert model.uri, model
