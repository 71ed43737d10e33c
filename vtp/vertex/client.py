"""The one way this project makes a JobServiceClient: Vertex for a location, or the local service.

Both use the REST transport, so the local service only has to speak the REST API. Against Vertex
the client finds Application Default Credentials as usual; the local service takes anonymous
requests.
"""

from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import aiplatform_v1

from vtp.vertex.endpoint import api_endpoint, local_endpoint


def job_client(location: str, *, local: bool = False) -> aiplatform_v1.JobServiceClient:
    """A JobServiceClient for `location` on Vertex, or for the local service when `local`."""
    if local:
        return aiplatform_v1.JobServiceClient(
            transport="rest",
            credentials=AnonymousCredentials(),
            client_options=ClientOptions(api_endpoint=local_endpoint()),
        )
    return aiplatform_v1.JobServiceClient(
        transport="rest", client_options=ClientOptions(api_endpoint=api_endpoint(location))
    )
