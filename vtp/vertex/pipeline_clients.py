"""The API clients `vtp submit` and `vtp schedule` send with, and one way to report their errors.

Vertex clients use the REST transport, for a region's host or for the local service at
`$VTP_LOCAL_ENDPOINT` (anonymous, as the local service takes it), like `vtp.vertex.client`
does for jobs. Cloud Scheduler has no local counterpart; its client finds Application Default
Credentials as usual.
"""

import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from vtp.vertex.endpoint import api_endpoint, local_endpoint

T = TypeVar("T")


def vertex_client(client_class: type[T], location: str, local: bool = False) -> T:
    """An aiplatform_v1 service client for `location` on Vertex, or for the local service."""
    from google.api_core.client_options import ClientOptions

    from vtp.vertex.local_auth import local_credentials

    if local:
        url = local_endpoint()
        options = ClientOptions(api_endpoint=url)
        return client_class(
            transport="rest", client_options=options, credentials=local_credentials(url)
        )
    options = ClientOptions(api_endpoint=api_endpoint(location))
    return call(lambda: client_class(transport="rest", client_options=options), "Vertex AI")


def scheduler_client() -> Any:
    """A Cloud Scheduler client (Application Default Credentials)."""
    from google.cloud import scheduler_v1

    return call(lambda: scheduler_v1.CloudSchedulerClient(transport="rest"), "Cloud Scheduler")


def default_credentials() -> Any:
    """Application Default Credentials for Vertex AI, or exit 1 saying how to get them."""
    return call(_adc, "Vertex AI")


def call(request: Callable[[], T], where: str) -> T:
    """Run one API call; report API, credential and connection errors in one line, exit 1."""
    import google.auth.exceptions
    import requests
    from google.api_core import exceptions as api_exceptions

    try:
        return request()
    except api_exceptions.GoogleAPICallError as exc:
        # REST errors read "POST https://...: message"; the URL is noise to the user.
        message = re.sub(r"^[A-Z]+ \S+: ", "", exc.message or "")
        fail(f"{exc.code.name if exc.code else 'error'}: {message}")
    except google.auth.exceptions.DefaultCredentialsError:
        fail("no Google credentials; run `gcloud auth application-default login`")
    except requests.ConnectionError:
        hint = "; start it with `vtp local serve`" if where == local_endpoint() else ""
        fail(f"cannot reach {where}{hint}")


def fail(message: str) -> NoReturn:
    """Print `vtp: error: message` on stderr and exit 1 (the request was fine, the call failed)."""
    print(f"vtp: error: {message}", file=sys.stderr)
    sys.exit(1)


def _adc() -> Any:
    import google.auth

    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    return credentials
