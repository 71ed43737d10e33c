"""model-builder's two snippets that upload a new version of a registered model, the default
one and an aliased one, on a model uploaded first."""

import upload_model_sample
import upload_new_aliased_model_version_sample
import upload_new_default_model_version_sample

where = {"project": "vtp-samples", "location": "us-central1"}
IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.1-7:latest"
ARTIFACTS = (
    "gs://cloud-samples-data-us-central1/vertex-ai/google-cloud-aiplatform-ci-artifacts/"
    "models/iris_xgboost"
)
first = upload_model_sample.upload_model_sample(
    display_name="mb-versions-model",
    serving_container_image_uri=IMAGE,
    artifact_uri=ARTIFACTS,
    **where,
)
upload_new_default_model_version_sample.upload_new_default_model_version_sample(
    parent_name=first.resource_name,
    artifact_uri=ARTIFACTS,
    serving_container_image=IMAGE,
    **where,
)
upload_new_aliased_model_version_sample.upload_new_aliased_model_version_sample(
    parent_name=first.resource_name,
    artifact_uri=ARTIFACTS,
    serving_container_image=IMAGE,
    is_default_version=False,
    version_aliases=["candidate"],
    version_description="v2",
    **where,
)
