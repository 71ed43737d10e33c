"""model-builder's ML Metadata artifact snippets: create (two ways), get by ID and by URI,
list with their default filters, delete."""

import create_artifact_sample
import create_artifact_with_sdk_sample
import delete_artifact_sample
import get_artifact_sample
import get_artifact_with_uri_sample
import list_artifact_sample

where = {"project": "vtp-samples", "location": "us-central1"}
URI = "gs://vtp-samples-model-builder/artifacts/my_model"

artifact = create_artifact_sample.create_artifact_sample(
    schema_title="system.Model",
    uri=URI,
    resource_id="my-model-artifact",
    display_name="my_model_1",
    schema_version="0.0.1",
    description="a model",
    metadata={"framework": "sklearn"},
    **where,
)
print(artifact.resource_name)
other = create_artifact_with_sdk_sample.create_artifact_sample(
    uri="gs://vtp-samples-model-builder/artifacts/other",
    artifact_id="my-system-artifact",
    display_name="my_model_2",
    schema_version="0.0.1",
    description="another",
    metadata={"k": "v"},
    **where,
)
print(other.resource_name)
got = get_artifact_sample.get_artifact_sample(artifact_id="my-model-artifact", **where)
assert got.uri == URI, got.uri
by_uri = get_artifact_with_uri_sample.get_artifact_with_uri_sample(uri=URI, **where)
assert by_uri.resource_name == artifact.resource_name, by_uri.resource_name
listed = list_artifact_sample.list_artifact_sample(**where)
names = sorted(a.display_name for a in listed)
print("listed", names)
assert names == ["my_model_1", "my_model_2"], names
delete_artifact_sample.delete_artifact_sample(artifact_id="my-model-artifact", **where)
