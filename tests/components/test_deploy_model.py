"""`deploy_model` on the local service: deploys upload_model's VertexModel, smoke-tests it,
re-attaches on retry; and `vtp run train --param deploy=true` ends with a prediction."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google_cloud_pipeline_components.types.artifact_types import VertexEndpoint

from tests.components.conftest import upload
from tests.fixtures import PROJECT, REGION, REPO
from vtp.components.deploy_model import deploy_model
from vtp.launchers import deploy_model as launcher

pytestmark = pytest.mark.slow


def endpoints_client(service) -> aiplatform_v1.EndpointServiceClient:
    return aiplatform_v1.EndpointServiceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=service.url),
        credentials=service.credentials(),
    )


def deploy(vertex_model, out: Path, run: str, **kwargs) -> tuple[VertexEndpoint, str]:
    endpoint = VertexEndpoint(uri=str(out / "endpoint"))
    outputs = deploy_model.python_func(
        project=PROJECT,
        location=REGION,
        model=vertex_model,
        endpoint=endpoint,
        gcp_resources=str(out / "gcp_resources"),
        pipeline_run=run,
        task_name="deploy-model",
        **kwargs,
    )
    return endpoint, outputs.sample_prediction


def test_deploys_predicts_and_a_retry_reuses_the_deployment(service_env, exported, tmp_path):
    model = upload(exported, tmp_path / "u", "run-d")
    (tmp_path / "a").mkdir()
    endpoint, prediction = deploy(model, tmp_path / "a", "run-d", example_model=exported)
    name = endpoint.metadata["resourceName"]
    predictions = json.loads(prediction)
    assert len(predictions) == 1 and len(predictions[0]["probabilities"]) == 10
    deployed = endpoints_client(service_env).get_endpoint(name=name).deployed_models
    assert [d.model for d in deployed] == [model.metadata["resourceName"].split("@")[0]]

    (tmp_path / "b").mkdir()
    again, none = deploy(model, tmp_path / "b", "run-d")  # the task retried: same endpoint
    assert again.metadata["resourceName"] == name and json.loads(none) == []
    assert len(endpoints_client(service_env).get_endpoint(name=name).deployed_models) == 1
    endpoints_client(service_env).undeploy_model(
        endpoint=name, deployed_model_id=deployed[0].id
    ).result(timeout=60)


def test_bad_inputs_fail_before_anything_is_sent():
    with pytest.raises(ValueError, match="traffic_percentage"):
        launcher.Deployment(model="projects/p/locations/l/models/1@1", traffic_percentage=120)
    with pytest.raises(ValueError, match="not a model resource name"):
        launcher.Deployment(model="gs://bucket/model")


def test_traffic_split_keeps_the_others_proportions():
    endpoint = aiplatform_v1.Endpoint(traffic_split={"a": 75, "b": 25})
    assert launcher._traffic_split(endpoint, 20) == {"a": 60, "b": 20, "0": 20}
    assert launcher._traffic_split(aiplatform_v1.Endpoint(), 30) == {"0": 100}


def test_vtp_run_train_with_deploy_ends_with_a_prediction(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "run", "train", "--param", "deploy=true",
         "--state-dir", str(tmp_path / "state")],
        cwd=tmp_path, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = result.stdout[result.stdout.index("Pipeline train SUCCEEDED") :]
    line = next(x for x in summary.splitlines() if "sample_prediction" in x)
    prediction = json.loads(line.split("sample_prediction", 1)[1])
    assert len(prediction) == 1 and prediction[0]["label"] in [str(i) for i in range(10)]
