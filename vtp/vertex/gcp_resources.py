"""A task's `gcp_resources` output: what it started on Vertex, in GCPC's GcpResources JSON.

The Vertex Pipelines console links a task to the resource named there, cancelling a pipeline run
cancels it, and a restarted task reads it back to re-attach instead of starting again (GCPC's
launchers do the same). Every launcher writes it through `write`, so they all write one form.
"""

from pathlib import Path

from google.protobuf import json_format
from google_cloud_pipeline_components.proto.gcp_resources_pb2 import GcpResources


def to_json(resource_type: str, uri: str) -> str:
    """GCPC's GcpResources proto with one resource, as JSON."""
    resources = GcpResources()
    resource = resources.resources.add()
    resource.resource_type = resource_type
    resource.resource_uri = uri
    return json_format.MessageToJson(resources)


def write(path: str, resource_type: str, uri: str) -> None:
    """Record one resource at `path` (an OutputPath; its directories are made first)."""
    record = Path(path)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(to_json(resource_type, uri))


def recorded_name(path: str, collection: str) -> str | None:
    """The name of the `collection` resource (`customJobs`, ...) recorded at `path`, if any."""
    record = Path(path)
    if not record.is_file() or not record.read_text().strip():
        return None
    resources = json_format.Parse(record.read_text(), GcpResources())
    for resource in resources.resources:
        _, _, name = resource.resource_uri.partition("/v1/")
        if f"/{collection}/" in name:
            return name
    return None
