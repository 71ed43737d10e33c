"""The Model Registry through real clients: aiplatform SDK and GAPIC client, gcloud, raw REST."""

import json
import urllib.request
from collections.abc import Iterator
from urllib.error import HTTPError

import pytest
from google.api_core import exceptions
from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform, aiplatform_v1

from tests.fixtures import LocalService
from vtp.vertex.local_auth import local_credentials

IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest"


@pytest.fixture(scope="module")
def artifact(local_service: LocalService) -> str:
    """A model directory in the service's local Cloud Storage."""
    directory = local_service.gcs_root / "models" / "digits"
    directory.mkdir(parents=True)
    (directory / "model.pt2").write_bytes(b"program")
    return "gs://models/digits"


@pytest.fixture
def sdk(local_service: LocalService) -> Iterator[object]:
    """aiplatform initialised for the service: REST transport, anonymous credentials."""
    local_service.init_sdk()
    yield aiplatform
    aiplatform.init(api_endpoint=None, api_transport=None)


def models_client(url: str) -> aiplatform_v1.ModelServiceClient:
    """The GAPIC ModelServiceClient on the REST transport, anonymous, talking to `url`."""
    return aiplatform_v1.ModelServiceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=url),
        credentials=local_credentials(url),
    )


@pytest.fixture(scope="module")
def client(local_service: LocalService) -> aiplatform_v1.ModelServiceClient:
    """The GAPIC ModelServiceClient of the module's service."""
    return models_client(local_service.url)


def test_sdk_upload_returns_a_model_that_get_finds_and_list_shows(sdk, artifact) -> None:
    model = sdk.Model.upload(
        display_name="sdk-digits",
        artifact_uri=artifact,
        serving_container_image_uri=IMAGE,
        labels={"team": "vision"},
    )
    found = sdk.Model(model.resource_name)
    assert found.display_name == "sdk-digits" and found.uri == artifact
    assert found.container_spec.image_uri == IMAGE and found.labels == {"team": "vision"}
    assert (found.version_id, found.version_aliases) == ("1", ["default"])
    listed = sdk.Model.list(filter='display_name="sdk-digits"')
    assert [m.resource_name for m in listed] == [model.resource_name]
    assert sdk.Model.list(filter="labels.team=vision")[0].resource_name == model.resource_name

    model.delete()
    assert not sdk.Model.list(filter='display_name="sdk-digits"')
    with pytest.raises(exceptions.NotFound):
        sdk.Model(model.resource_name)


def test_versions_by_id_and_alias_and_the_default_moves(sdk, artifact) -> None:
    first = sdk.Model.upload(
        display_name="versioned", artifact_uri=artifact, serving_container_image_uri=IMAGE
    )
    second = sdk.Model.upload(
        display_name="versioned",
        artifact_uri=artifact,
        serving_container_image_uri=IMAGE,
        parent_model=first.resource_name,
        is_default_version=False,
        version_aliases=["candidate"],
    )
    assert second.resource_name == first.resource_name and second.version_id == "2"
    assert sdk.Model(first.resource_name).version_id == "1"  # still the default
    assert sdk.Model(first.resource_name, version="candidate").version_id == "2"
    assert sdk.Model(f"{first.resource_name}@2").version_aliases == ["candidate"]
    versions = first.versioning_registry.list_versions()
    assert [(v.version_id, v.version_aliases) for v in versions] == [
        ("1", ["default"]),
        ("2", ["candidate"]),
    ]

    third = sdk.Model.upload(
        display_name="versioned",
        artifact_uri=artifact,
        serving_container_image_uri=IMAGE,
        parent_model=first.name,  # an ID works too, with project and location from init
    )
    assert sdk.Model(first.resource_name).version_id == third.version_id == "3"
    (listed,) = sdk.Model.list(filter='display_name="versioned"')
    assert listed.version_id == "3"
    assert sdk.Model(first.resource_name, version="1").version_aliases == []
    first.delete()


def test_malformed_uploads_raise_naming_the_field_and_register_nothing(sdk, artifact) -> None:
    with pytest.raises(exceptions.InvalidArgument, match=r"model\.artifactUri: gs://models/none"):
        sdk.Model.upload(
            display_name="bad", artifact_uri="gs://models/none", serving_container_image_uri=IMAGE
        )
    # Synchronous 400s: the REST transport maps every HTTP 400 to BadRequest, the base class of
    # InvalidArgument; the body's status says which.
    with pytest.raises(exceptions.BadRequest, match=r"model\.labels: 'Team'") as raised:
        sdk.Model.upload(
            display_name="bad",
            artifact_uri=artifact,
            serving_container_image_uri=IMAGE,
            labels={"Team": "x"},
        )
    assert raised.value.response.json()["error"]["status"] == "INVALID_ARGUMENT"
    with pytest.raises(exceptions.NotFound, match="models/404 not found"):
        sdk.Model.upload(
            display_name="bad",
            artifact_uri=artifact,
            serving_container_image_uri=IMAGE,
            parent_model="projects/local/locations/us-central1/models/404",
        )
    assert not sdk.Model.list(filter='display_name="bad"')


def test_unknown_field_in_the_request_body_is_invalid_argument(local_service, artifact) -> None:
    body = {"model": {"displayName": "raw", "artifactUri": artifact, "servingImage": IMAGE}}
    request = urllib.request.Request(
        f"{local_service.url}/v1/{local_service.parent}/models:upload",
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {local_service.token}",
        },
    )
    with pytest.raises(HTTPError) as raised:
        urllib.request.urlopen(request)
    error = json.loads(raised.value.read())["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert 'no field named "servingImage"' in error["message"]


def test_gapic_list_pages_orders_and_refuses_duplicate_ids(client, local_service, artifact):
    parent = local_service.parent
    for name in ("paged-b", "paged-a", "paged-c"):
        model = {"display_name": name, "artifact_uri": artifact, "labels": {"set": "paged"}}
        upload = {"parent": parent, "model": model, "model_id": name}
        client.upload_model(request=upload).result()
    request = {"parent": parent, "filter": "labels.set=paged", "page_size": 2}
    pages = list(client.list_models(request=request).pages)
    assert [[m.display_name for m in page.models] for page in pages] == [
        ["paged-b", "paged-a"],
        ["paged-c"],
    ]
    ordered = client.list_models(request={**request, "order_by": "display_name desc"})
    assert [m.display_name for m in ordered] == ["paged-c", "paged-b", "paged-a"]
    assert client.get_model(name=f"{parent}/models/paged-a").display_name == "paged-a"
    with pytest.raises(exceptions.Conflict, match="paged-a already exists"):
        duplicate = {"parent": parent, "model": {"display_name": "x"}, "model_id": "paged-a"}
        client.upload_model(request=duplicate)
    with pytest.raises(exceptions.BadRequest, match="Invalid orderBy"):
        list(client.list_models(request={"parent": parent, "order_by": "labels"}))
    for name in ("paged-a", "paged-b", "paged-c"):
        client.delete_model(name=f"{parent}/models/{name}").result()
    assert not list(client.list_models(request={"parent": parent, "filter": "labels.set=paged"}))


def test_gcloud_uploads_and_describes(gcloud, artifact) -> None:
    gcloud(
        "ai", "models", "upload", "--display-name=gcloud-digits", f"--artifact-uri={artifact}",
        f"--container-image-uri={IMAGE}", "--model-id=gcloud-digits",
    )  # fmt: skip
    described = gcloud.json("ai", "models", "describe", "gcloud-digits")
    assert described["displayName"] == "gcloud-digits" and described["versionId"] == "1"
    assert described["containerSpec"] == {"imageUri": IMAGE}
    failed = gcloud(
        "ai", "models", "upload", "--display-name=gcloud-bad", "--artifact-uri=gs://models/none",
        f"--container-image-uri={IMAGE}", check=False,
    )  # fmt: skip
    assert failed.returncode == 1 and "model.artifactUri: gs://models/none" in failed.stderr


def test_models_and_their_operations_survive_a_restart(tmp_path) -> None:
    service = LocalService(tmp_path / "state").start()
    (service.gcs_root / "b" / "m").mkdir(parents=True)
    try:
        client = models_client(service.url)
        model = {"display_name": "kept", "artifact_uri": "gs://b/m"}
        operation = client.upload_model(parent=service.parent, model=model)
        name = operation.result().model
        service.stop()
        service.start()
        client = models_client(service.url)
        assert client.get_model(name=f"{name}@1").display_name == "kept"
        stored = client.get_operation(request={"name": operation.operation.name})
        assert stored.done and stored.name.startswith(f"{name}/operations/")
    finally:
        service.stop()
