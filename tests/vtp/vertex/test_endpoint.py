"""API hosts for Vertex locations and the local service URL."""

import pytest

from vtp.vertex.endpoint import api_endpoint, local_endpoint


@pytest.mark.parametrize(
    ("location", "host"),
    [
        ("us-central1", "us-central1-aiplatform.googleapis.com"),
        ("northamerica-northeast1", "northamerica-northeast1-aiplatform.googleapis.com"),
        ("global", "aiplatform.googleapis.com"),
        ("us", "aiplatform.us.rep.googleapis.com"),
        ("eu", "aiplatform.eu.rep.googleapis.com"),
    ],
)
def test_api_endpoint(location: str, host: str) -> None:
    assert api_endpoint(location) == host


@pytest.mark.parametrize("location", ["", "US-CENTRAL1", "us-central1.evil.com", "moon"])
def test_bad_location_is_refused(location: str) -> None:
    with pytest.raises(ValueError, match="not a Vertex AI location"):
        api_endpoint(location)


def test_local_endpoint_defaults_to_the_serve_port() -> None:
    assert local_endpoint({}) == "http://127.0.0.1:8765"
    assert (
        local_endpoint({"VTP_LOCAL_ENDPOINT": "http://localhost:9000/"}) == "http://localhost:9000"
    )


@pytest.mark.parametrize("url", ["127.0.0.1:8765", "ftp://h:1", "http://h:1/v1"])
def test_local_endpoint_must_be_a_service_url(url: str) -> None:
    with pytest.raises(ValueError, match="VTP_LOCAL_ENDPOINT"):
        local_endpoint({"VTP_LOCAL_ENDPOINT": url})
