"""model-builder's ML Metadata execution snippets: create one with the SDK's schema and one
with start_execution, assign artifacts, read its inputs and outputs, get, list, delete."""

import assign_artifact_as_execution_input_sample
import assign_artifact_as_execution_output_sample
import create_execution_with_sdk_sample
import delete_execution_sample
import get_execution_input_artifacts_sample
import get_execution_output_artifacts_sample
import get_execution_sample
import list_execution_sample
import start_execution_sample
from google.cloud import aiplatform

where = {"project": "vtp-samples", "location": "us-central1"}
aiplatform.init(**where)
data = aiplatform.Artifact.create(
    schema_title="system.Dataset", uri="gs://vtp-samples-model-builder/data", **where
)
model = aiplatform.Artifact.create(
    schema_title="system.Model", uri="gs://vtp-samples-model-builder/model", **where
)
execution = create_execution_with_sdk_sample.create_execution_sample(
    display_name="my_execution_1",
    input_artifacts=[data],
    output_artifacts=[model],
    execution_id="my-execution",
    metadata={"step": "train"},
    schema_version="0.0.1",
    description="training",
    **where,
)
print(execution.resource_name)
started = start_execution_sample.start_execution_sample(
    schema_title="system.ContainerExecution",
    display_name="my_execution_2",
    input_artifacts=[model],
    output_artifacts=[],
    resource_id="my-started-execution",
    metadata={"step": "eval"},
    schema_version="0.0.1",
    **where,
)
extra = aiplatform.Artifact.create(
    schema_title="system.Metrics", uri="gs://vtp-samples-model-builder/metrics", **where
)
assign_artifact_as_execution_input_sample.assign_artifact_as_execution_input_sample(
    execution=started, artifact=data
)
assign_artifact_as_execution_output_sample.assign_artifact_as_execution_output_sample(
    execution=started, artifact=extra
)
inputs = get_execution_input_artifacts_sample.get_execution_input_artifacts_sample(execution)
outputs = get_execution_output_artifacts_sample.get_execution_output_artifacts_sample(execution)
print("inputs", [a.uri for a in inputs], "outputs", [a.uri for a in outputs])
assert [a.uri for a in inputs] == [data.uri] and [a.uri for a in outputs] == [model.uri]
got = get_execution_sample.get_execution_sample(execution_id="my-execution", **where)
assert got.display_name == "my_execution_1", got.display_name
listed = list_execution_sample.list_execution_sample(**where)
print("listed", sorted(e.display_name for e in listed))
assert sorted(e.display_name for e in listed) == ["my_execution_1", "my_execution_2"]
delete_execution_sample.delete_execution_sample(execution_id="my-execution", **where)
