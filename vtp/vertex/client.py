"""The one way this project makes Vertex clients: Vertex for a location, or the local service.

Both use the REST transport. Against Vertex the client finds Application Default Credentials as
usual; against the local service it carries the service's token (`local_auth`).
"""

from typing import Protocol, TypeVar

from google.api_core.client_options import ClientOptions
from google.auth.credentials import Credentials
from google.cloud import aiplatform_v1

from vtp.vertex.endpoint import api_endpoint, local_endpoint
from vtp.vertex.local_auth import local_credentials

C = TypeVar("C", covariant=True)


class ServiceClientClass(Protocol[C]):
    """An aiplatform_v1 service client class, called the way this project makes its clients:
    the transport by name, the host in the options, credentials where not the default ones."""

    def __call__(
        self,
        *,
        transport: str,
        client_options: ClientOptions,
        credentials: Credentials | None = None,
    ) -> C: ...


def vertex_client(client_class: ServiceClientClass[C], location: str, *, local: bool = False) -> C:
    """An aiplatform_v1 client (`ModelServiceClient`, `EndpointServiceClient`, ...) for
    `location` on Vertex, or for the local service when `local`."""
    if local:
        url = local_endpoint()
        return client_class(
            transport="rest",
            credentials=local_credentials(url),
            client_options=ClientOptions(api_endpoint=url),
        )
    return client_class(
        transport="rest", client_options=ClientOptions(api_endpoint=api_endpoint(location))
    )


def job_client(location: str, *, local: bool = False) -> aiplatform_v1.JobServiceClient:
    """A JobServiceClient for `location` on Vertex, or for the local service when `local`."""
    return vertex_client(aiplatform_v1.JobServiceClient, location, local=local)
