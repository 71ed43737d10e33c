"""The API clients `vtp submit` and `vtp schedule` send with.

Vertex clients use the REST transport, for a region's host or for the local service at
`$VTP_LOCAL_ENDPOINT` (with its token), like `vtp.vertex.client` does for jobs. Cloud
Scheduler has no local counterpart; its client finds Application Default Credentials as usual.
Errors are the caller's to report (`vtp.cli.failures`).
"""

from collections.abc import Callable
from typing import Any, TypeVar

from vtp.vertex.endpoint import api_endpoint, local_endpoint

T = TypeVar("T")


def vertex_client(client_class: Callable[..., T], location: str, local: bool = False) -> T:
    """An aiplatform_v1 service client for `location` on Vertex, or for the local service.

    `client_class` is any such class (the CLI picks one at run time), called with keyword
    arguments `transport`, `client_options` and, locally, `credentials`."""
    from google.api_core.client_options import ClientOptions

    from vtp.vertex.local_auth import local_credentials

    if local:
        url = local_endpoint()
        options = ClientOptions(api_endpoint=url)
        return client_class(
            transport="rest", client_options=options, credentials=local_credentials(url)
        )
    options = ClientOptions(api_endpoint=api_endpoint(location))
    return client_class(transport="rest", client_options=options)


def scheduler_client() -> Any:
    """A Cloud Scheduler client (Application Default Credentials)."""
    from google.cloud import scheduler_v1

    return scheduler_v1.CloudSchedulerClient(transport="rest")


def default_credentials() -> Any:
    """Application Default Credentials for Vertex AI."""
    import google.auth

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    return credentials
