"""model-builder's ML Metadata context snippets: create, get, list, delete."""

import create_context_with_sdk_sample
import delete_context_sample
import get_context_sample
import list_context_sample

where = {"project": "vtp-samples", "location": "us-central1"}
context = create_context_with_sdk_sample.create_context_sample(
    display_name="my-context",
    context_id="my-context-id",
    metadata={"k": "v"},
    schema_version="0.0.1",
    description="a context",
    **where,
)
print(context.resource_name)
got = get_context_sample.get_context_sample(context_id="my-context-id", **where)
assert got.display_name == "my-context", got.display_name
listed = list_context_sample.list_context_sample(context_id="my-context-id", **where)
print("listed", [c.resource_name for c in listed])
delete_context_sample.delete_context_sample(context_id="my-context-id", **where)
