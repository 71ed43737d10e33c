"""The one way this project makes a JobServiceClient: Vertex for a location, or the local service.

Both use the REST transport. Against Vertex the client finds Application Default Credentials as
usual; against the local service it carries the service's token (`local_auth`).
"""

from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1

from vtp.vertex.endpoint import api_endpoint, local_endpoint
from vtp.vertex.local_auth import local_credentials


def job_client(location: str, *, local: bool = False) -> aiplatform_v1.JobServiceClient:
    """A JobServiceClient for `location` on Vertex, or for the local service when `local`."""
    if local:
        url = local_endpoint()
        return aiplatform_v1.JobServiceClient(
            transport="rest",
            credentials=local_credentials(url),
            client_options=ClientOptions(api_endpoint=url),
        )
    return aiplatform_v1.JobServiceClient(
        transport="rest", client_options=ClientOptions(api_endpoint=api_endpoint(location))
    )
