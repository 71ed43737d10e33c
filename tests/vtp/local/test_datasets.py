"""Managed datasets through the aiplatform SDK (REST transport) against a real local service."""

import json
import re
from collections.abc import Iterator

import pytest
from google.api_core import exceptions
from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform, aiplatform_v1

from tests.fixtures import LocalService

IMPORT_SCHEMA = "gs://google-cloud-aiplatform/schema/dataset/ioformat/image_classification_single_label_io_format_1.0.0.yaml"
ML_USE = "aiplatform.googleapis.com/ml_use"


@pytest.fixture
def sdk(local_service: LocalService) -> Iterator[object]:
    local_service.init_sdk()
    yield aiplatform
    aiplatform.init(api_endpoint=None, api_transport=None)


@pytest.fixture(scope="module")
def client(local_service: LocalService) -> aiplatform_v1.DatasetServiceClient:
    return aiplatform_v1.DatasetServiceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=local_service.url),
        credentials=local_service.credentials(),
    )


@pytest.fixture(scope="module")
def flowers(local_service: LocalService) -> str:
    """An image classification import file of 10 items (8/1/1 by ml_use) in local storage."""
    folder = local_service.gcs_root / "samples" / "flowers"
    folder.mkdir(parents=True)
    uses = ["training"] * 8 + ["validation", "test"]
    lines = [
        {
            "imageGcsUri": f"gs://samples/flowers/{i}.jpg",
            "classificationAnnotation": {"displayName": "rose" if i % 2 else "tulip"},
            "dataItemResourceLabels": {ML_USE: use},
        }
        for i, use in enumerate(uses)
    ]
    (folder / "import.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return "gs://samples/flowers/import.jsonl"


def test_a_dataset_nobody_created_is_not_found(sdk) -> None:
    with pytest.raises(exceptions.NotFound):
        sdk.ImageDataset(dataset_name="0")


def test_image_dataset_imports_updates_exports_and_deletes(
    sdk, client, flowers, local_service
) -> None:
    dataset = sdk.ImageDataset.create(
        display_name="flowers", gcs_source=flowers, import_schema_uri=IMPORT_SCHEMA
    )
    items = list(client.list_data_items(parent=dataset.resource_name))
    fresh = sdk.ImageDataset(dataset_name=dataset.resource_name).gca_resource
    assert len(items) == 10 and fresh.data_item_count == 10
    assert items[0].payload["imageGcsUri"].startswith("gs://samples/flowers/")
    dataset.import_data(gcs_source=flowers, import_schema_uri=IMPORT_SCHEMA)  # nothing new
    assert len(list(client.list_data_items(parent=dataset.resource_name))) == 10

    dataset.update(display_name="roses", labels={"team": "vision"}, description="d")
    again = sdk.ImageDataset(dataset_name=dataset.resource_name)
    assert (again.display_name, again.labels) == ("roses", {"team": "vision"})
    assert again.gca_resource.description == "d"

    exported = dataset.export_data(output_dir="gs://exports/all")
    path = local_service.gcs_root / exported[0].removeprefix("gs://")
    assert len(path.read_text().splitlines()) == 10
    split = {f"{s}_filter": f"labels.{ML_USE}={s}" for s in ("training", "validation", "test")}
    response = dataset.export_data_for_custom_training(
        output_dir="gs://exports/custom", annotation_schema_uri="", split=split
    )
    assert len(response["exportedFiles"]) == 3
    stats = response["dataStats"]
    assert [int(stats[f"{s}DataItemsCount"]) for s in ("training", "validation", "test")] == [
        8,
        1,
        1,
    ]
    assert int(stats["trainingAnnotationsCount"]) == 8

    dataset.delete()
    with pytest.raises(exceptions.NotFound):
        sdk.ImageDataset(dataset_name=dataset.resource_name)


def test_a_tabular_dataset_points_at_its_source(sdk, client) -> None:
    dataset = sdk.TabularDataset.create(display_name="iris", gcs_source=["gs://samples/iris.csv"])
    metadata = dataset.gca_resource.metadata
    assert metadata["inputConfig"]["gcsSource"]["uri"] == ["gs://samples/iris.csv"]
    with pytest.raises(exceptions.BadRequest, match="takes no import"):
        client.import_data(
            name=dataset.resource_name,
            import_configs=[{"gcs_source": {"uris": ["gs://samples/iris.csv"]}}],
        ).result()


def test_a_missing_import_file_fails_the_import_naming_it(sdk) -> None:
    with pytest.raises(exceptions.GoogleAPICallError, match=re.escape("gs://samples/none.jsonl")):
        sdk.ImageDataset.create(
            display_name="none",
            gcs_source="gs://samples/none.jsonl",
            import_schema_uri=IMPORT_SCHEMA,
        )


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"metadataSchemaUri": "x"}, "dataset.displayName"),
        ({"displayName": "d"}, "dataset.metadataSchemaUri"),
        ({"displayName": "d", "metadataSchemaUri": "gs://x.yaml"}, "dataset.metadataSchemaUri"),
        ({"displayName": "d", "labels": {"Bad Key": "v"}}, "dataset.labels"),
    ],
)
def test_malformed_creates_are_400_naming_the_field(local_service, body, words) -> None:
    if "labels" in body:
        body["metadataSchemaUri"] = (
            "gs://google-cloud-aiplatform/schema/dataset/metadata/image_1.0.0.yaml"
        )
    url = f"{local_service.url}/v1/{local_service.parent}/datasets"
    response = local_service.session().post(url, json=body)
    assert response.status_code == 400, response.text
    assert words in response.json()["error"]["message"]
