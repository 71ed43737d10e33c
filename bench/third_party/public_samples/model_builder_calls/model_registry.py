"""model-builder's Model Registry snippets on a model with two versions: the default and an
aliased version, the registry object, aliases added and removed, version info, the version
list, a version deleted, then the model."""

import assign_aliases_model_version_sample
import create_aliased_model_sample
import create_default_model_sample
import create_model_registry_sample
import delete_aliases_model_version_sample
import delete_model_sample
import delete_model_version_sample
import get_model_version_info_sample
import get_registered_model_version_sample
import list_model_versions_with_model_registry_sample
import upload_model_sample
from google.cloud import aiplatform

where = {"project": "vtp-samples", "location": "us-central1"}
IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.1-7:latest"
ARTIFACTS = (
    "gs://cloud-samples-data-us-central1/vertex-ai/google-cloud-aiplatform-ci-artifacts/"
    "models/iris_xgboost"
)
first = upload_model_sample.upload_model_sample(
    display_name="mb-registry-model",
    serving_container_image_uri=IMAGE,
    artifact_uri=ARTIFACTS,
    **where,
)
second = aiplatform.Model.upload(  # a second version (the calls' set-up, not a snippet)
    parent_model=first.resource_name,
    artifact_uri=ARTIFACTS,
    serving_container_image_uri=IMAGE,
    is_default_version=False,
    version_aliases=["candidate"],
)
model_id = first.name
default = create_default_model_sample.create_default_model_sample(model_id=model_id, **where)
assert default.version_id == "1", default.version_id
aliased = create_aliased_model_sample.create_aliased_model_sample(
    model_id=model_id, version_id="candidate", **where
)
assert aliased.version_id == "2", aliased.version_id
registry = create_model_registry_sample.create_model_registry_sample(model_id=model_id, **where)
print(registry)
assign_aliases_model_version_sample.assign_aliases_model_version_sample(
    model_id=model_id, version_aliases=["staging", "v2"], version_id="2", **where
)
delete_aliases_model_version_sample.delete_aliases_model_version_sample(
    model_id=model_id, version_aliases=["staging"], version_id="2", **where
)
info = get_model_version_info_sample.get_model_version_info_sample(
    model_id=model_id, version_id="2", **where
)
print("info", info)
assert sorted(info.version_aliases) == ["candidate", "v2"], info.version_aliases
version = get_registered_model_version_sample.get_registered_model_version_sample(
    model_id=model_id, version_id="v2", **where
)
assert version.version_id == "2", version.version_id
versions = list_model_versions_with_model_registry_sample.list_model_versions_sample(
    model_id=model_id, **where
)
print("versions", [v.version_id for v in versions])
assert sorted(v.version_id for v in versions) == ["1", "2"], versions
delete_model_version_sample.delete_model_version_sample(model_id=model_id, version_id="2", **where)
delete_model_sample.delete_model_sample(model_id=model_id, **where)
