"""model-builder's custom_training_job_sample: a script trained on Vertex's prebuilt
scikit-learn image, its model registered with the prebuilt scikit-learn serving image."""

import shutil

import custom_training_job_sample

shutil.copy("iris_task.py", "task.py")  # the sample's tests name the script task.py
model = custom_training_job_sample.custom_training_job_sample(
    project="vtp-samples",
    location="us-central1",
    bucket="gs://vtp-samples-model-builder",
    display_name="mb-custom-training",
    script_path="task.py",
    script_args=[],
    container_uri="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
    model_serving_container_image_uri="us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-0:latest",
    requirements=["joblib"],
    replica_count=1,
)
print(model.resource_name, model.uri)
