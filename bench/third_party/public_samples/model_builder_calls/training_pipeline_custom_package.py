"""model-builder's create_training_pipeline_custom_package_job_sample: a source distribution
of the training script (built and uploaded first, as a user does) on Vertex's prebuilt
scikit-learn training image."""

import os
import subprocess
import sys

import create_training_pipeline_custom_package_job_sample as sample
from google.cloud import storage

os.makedirs("package/trainer", exist_ok=True)
open("package/trainer/__init__.py", "w").close()
with open("iris_task.py") as source, open("package/trainer/task.py", "w") as task:
    task.write(source.read())
with open("package/setup.py", "w") as setup:
    setup.write(
        "from setuptools import setup\nsetup(name='trainer', version='0.1', "
        "packages=['trainer'], install_requires=['joblib'])\n"
    )
subprocess.run(
    [sys.executable, "setup.py", "-q", "sdist", "--formats=gztar"], cwd="package", check=True
)
client = storage.Client(project="vtp-samples")
bucket = client.bucket("vtp-samples-model-builder")
if not bucket.exists():
    bucket.create()
bucket.blob("packages/trainer-0.1.tar.gz").upload_from_filename("package/dist/trainer-0.1.tar.gz")
model = sample.create_training_pipeline_custom_package_job_sample(
    project="vtp-samples",
    location="us-central1",
    staging_bucket="gs://vtp-samples-model-builder",
    display_name="mb-training-pipeline-package",
    python_package_gcs_uri="gs://vtp-samples-model-builder/packages/trainer-0.1.tar.gz",
    python_module_name="trainer.task",
    container_uri="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-0:latest",
    model_serving_container_image_uri="us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-0:latest",
    model_display_name="mb-package-model",
)
assert model.uri, model
