"""Every resource type is read by `projects/-/locations/-/<collection>/<id>`, as on Vertex.

One rule (`vtp/local/base/names.py`) serves every resource type: top-level collections look up
through `find` (most by way of `base/services.py`'s `CollectionService`), resources inside another
(artifacts, tensorboard experiments, trials) through `base/named_store.py` or their parent's row.
These requests go through the HTTP front end, so each type's route, service and store are covered
together. An ID nobody created is NOT_FOUND naming the resource kind, whichever project and
location are asked for.
"""

import json

import pytest

from tests.fixtures import REGION, batch_prediction_job
from tests.pipelines.tiny_pipeline import tiny_job
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from tests.vtp.local.conftest import scripted_pool

CUSTOM_TASK = "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml"
TABULAR = "gs://google-cloud-aiplatform/schema/dataset/metadata/tabular_1.0.0.yaml"
_STUDY_SPEC = {
    "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": [{"parameterId": "x", "doubleValueSpec": {"minValue": 0, "maxValue": 1}}],
}


@pytest.fixture(scope="module")
def post(local_service):
    session = local_service.session()

    def call(collection: str, body: dict) -> dict:
        url = f"{local_service.url}/v1/{local_service.parent}/{collection}"
        response = session.post(url, json=body, timeout=30)
        assert response.status_code == 200, response.text
        return response.json()

    return call


def _pipeline_job(template) -> dict:
    job = tiny_job(template, marker_uri="gs://vtp-test/any-location/marker")
    return json.loads(type(job).to_json(job))


def _created(collection: str, post, local_service, tmp_path, tiny_yaml) -> str:
    """The name of a new resource of `collection`."""
    pool = scripted_pool(tmp_path)
    if collection == "customJobs":
        return post(collection, {"displayName": "any", "jobSpec": {"workerPoolSpecs": [pool]}})[
            "name"
        ]
    if collection == "hyperparameterTuningJobs":
        study = {
            "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": [{"parameterId": "x", "doubleValueSpec": {"minValue": 0, "maxValue": 1}}],
        }
        body = {
            "displayName": "any",
            "studySpec": study,
            "maxTrialCount": 1,
            "parallelTrialCount": 1,
            "trialJobSpec": {"workerPoolSpecs": [pool]},
        }
        return post(collection, body)["name"]
    if collection == "models":
        (local_service.gcs_root / "any-models" / "m").mkdir(parents=True, exist_ok=True)
        body = {"model": {"displayName": "any", "artifactUri": "gs://any-models/m"}}
        body["model"]["containerSpec"] = {"imageUri": "us-docker.pkg.dev/p/r/serve:1"}
        return post("models:upload", body)["response"]["model"]
    if collection == "endpoints":
        return post(collection, {"displayName": "any"})["response"]["name"]
    if collection == "trainingPipelines":
        body = {
            "displayName": "any",
            "trainingTaskDefinition": CUSTOM_TASK,
            "trainingTaskInputs": {"workerPoolSpecs": [pool]},
        }
        return post(collection, body)["name"]
    if collection == "pipelineJobs":
        return post(collection, _pipeline_job(tiny_yaml))["name"]
    if collection == "batchPredictionJobs":
        return post(collection, _batch_prediction_job(post, local_service))["name"]
    if collection == "datasets":
        body = {"displayName": "any", "metadataSchemaUri": TABULAR}
        return post(collection, body)["response"]["name"]
    if collection == "studies":
        study = {"displayName": f"any-{tmp_path.name}", "studySpec": _STUDY_SPEC}
        return post(collection, study)["name"]
    if collection == "metadataStores":
        store_id = "any-" + tmp_path.name[-40:].replace("_", "-").lower()
        return post(f"{collection}?metadataStoreId={store_id}", {})["response"]["name"]
    if collection == "tensorboards":
        return post(collection, {"displayName": "any"})["response"]["name"]
    assert collection == "schedules"
    request = {"parent": local_service.parent, "pipelineJob": _pipeline_job(tiny_yaml)}
    body = {
        "displayName": "any",
        "cron": "TZ=UTC 0 3 * * *",
        "maxConcurrentRunCount": 1,
        "createPipelineJobRequest": request,
    }
    return post(collection, body)["name"]


def _batch_prediction_job(post, local_service) -> dict:
    """A job whose input is missing: it fails at once, and stays to be read."""
    serving = {"imageUri": "python:3.11", "command": ["python", "-c", "pass"]}
    model = {"displayName": "any", "containerSpec": serving}
    uploaded = post("models:upload", {"model": model})["response"]["model"]
    return batch_prediction_job(uploaded, "gs://any/no.jsonl", "gs://any/out", name="any")


COLLECTIONS = {
    "customJobs": "CustomJob",
    "hyperparameterTuningJobs": "HyperparameterTuningJob",
    "models": "Model",
    "endpoints": "Endpoint",
    "trainingPipelines": "TrainingPipeline",
    "pipelineJobs": "PipelineJob",
    "schedules": "Schedule",
    "batchPredictionJobs": "BatchPredictionJob",
    "datasets": "Dataset",
    "studies": "Study",
    "metadataStores": "MetadataStore",
    "tensorboards": "Tensorboard",
}
NESTED = {
    ("metadataStores", "artifacts"): "Artifact",
    ("metadataStores", "contexts"): "Context",
    ("metadataStores", "executions"): "Execution",
    ("tensorboards", "experiments"): "TensorboardExperiment",
    ("studies", "trials"): "Trial",
}
"""Resources inside another: (the parent's collection, their own) and the kind NOT_FOUND names."""


@pytest.mark.parametrize("collection", COLLECTIONS)
def test_any_project_and_location_reach_the_resource(
    collection, post, local_service, tmp_path, tiny_yaml
):
    name = _created(collection, post, local_service, tmp_path, tiny_yaml)
    resource_id = name.rsplit("/", 1)[1]
    session = local_service.session()
    for parent in ("projects/-/locations/-", f"projects/-/locations/{REGION}"):
        found = session.get(f"{local_service.url}/v1/{parent}/{collection}/{resource_id}")
        assert found.status_code == 200, found.text
        assert found.json()["name"] == name
    elsewhere = session.get(
        f"{local_service.url}/v1/projects/other/locations/-/{collection}/{resource_id}"
    )
    assert elsewhere.status_code == 404


@pytest.mark.parametrize(("collection", "kind"), COLLECTIONS.items())
def test_an_unknown_id_is_not_found_naming_the_kind(collection, kind, local_service):
    name = f"projects/-/locations/-/{collection}/123"
    missing = local_service.session().get(f"{local_service.url}/v1/{name}", timeout=30)
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == f"{kind} {name} not found."


def _created_inside(parent: str, collection: str, post) -> str:
    """The name of a new resource of `collection` inside the resource `parent`."""
    relative = parent.split("/", 4)[4]  # <collection>/<id>, under the service's own parent
    if collection == "experiments":
        return post(f"{relative}/experiments?tensorboardExperimentId=any", {})["name"]
    if collection == "trials":
        return post(f"{relative}/trials", {"parameters": [{"parameterId": "x", "value": 0.5}]})[
            "name"
        ]
    return post(f"{relative}/{collection}", {"displayName": "any"})["name"]


@pytest.mark.parametrize(("outer", "collection"), NESTED)
def test_any_project_and_location_reach_a_nested_resource(
    outer, collection, post, local_service, tmp_path, tiny_yaml
):
    parent = _created(outer, post, local_service, tmp_path, tiny_yaml)
    name = _created_inside(parent, collection, post)
    inner = name.split("/", 4)[4]
    session = local_service.session()
    found = session.get(f"{local_service.url}/v1/projects/-/locations/-/{inner}", timeout=30)
    assert found.status_code == 200, found.text
    assert found.json()["name"] == name
    elsewhere = session.get(f"{local_service.url}/v1/projects/other/locations/-/{inner}")
    assert elsewhere.status_code == 404


@pytest.mark.parametrize(("outer", "collection"), NESTED)
def test_an_unknown_nested_id_is_not_found_naming_the_kind(outer, collection, post, local_service):
    kind = NESTED[(outer, collection)]
    name = f"projects/-/locations/-/{outer}/123/{collection}/456"
    missing = local_service.session().get(f"{local_service.url}/v1/{name}", timeout=30)
    assert missing.status_code == 404
    assert missing.json()["error"]["message"] == f"{kind} {name} not found."
