"""Google's prebuilt TensorFlow prediction images, served locally by the stand-in: a SavedModel
written by real TensorFlow, uploaded and deployed with the real SDK by a user's program (run
under `vtp local exec` on an interpreter with TensorFlow, the cached layer the stand-in itself
runs on), answering `endpoint.predict` and a gRPC `raw_predict` in TF Serving's row format; the
refusals before any process starts (no VTP_SERVING_ALLOW_PICKLE=1, no saved_model.pb)."""

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.fixtures import LocalService
from tests.vtp.local.conftest import ServiceApi, client_exec, run_client
from vtp.local.runtime import pip_cache, tensorflow_layer

pytestmark = pytest.mark.slow

IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest"

PROGRAM = """
import json, os, sys, tempfile

import tensorflow as tf
from google.api import httpbody_pb2
from google.api_core import exceptions
from google.cloud import aiplatform, aiplatform_v1, storage


class Scorer(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def serve(self, rows):
        return {"sum": tf.reduce_sum(rows, axis=1)}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x"),
                                  tf.TensorSpec([None], tf.string, name="kind")])
    def predict(self, x, kind):
        return {"score": x * 2.0, "kind": kind}


module = Scorer()
folder = tempfile.mkdtemp()
tf.saved_model.save(module, folder, signatures={"serving_default": module.serve,
                                                "predict": module.predict})
bucket = storage.Client(project="team").create_bucket("tf-models")
for top, _, files in os.walk(folder):
    for name in files:
        path = os.path.join(top, name)
        bucket.blob("model/" + os.path.relpath(path, folder)).upload_from_filename(path)

aiplatform.init(project="team", location="us-central1")
model = aiplatform.Model.upload(display_name="scorer", artifact_uri="gs://tf-models/model",
                                serving_container_image_uri=sys.argv[1])
endpoint = model.deploy(machine_type="n1-standard-2")
seen = {"served": list(endpoint.predict(instances=[[1.0, 2.0], [3.0, 4.5]]).predictions)}

client = aiplatform_v1.PredictionServiceClient(
    client_options={"api_endpoint": "us-central1-aiplatform.googleapis.com"})
def raw(body):
    request = aiplatform_v1.RawPredictRequest(
        endpoint=endpoint.resource_name,
        http_body=httpbody_pb2.HttpBody(data=json.dumps(body).encode(),
                                        content_type="application/json"))
    answer = client.raw_predict(request)
    return answer.content_type, json.loads(answer.data)

body = {"signature_name": "predict", "instances": [{"x": 1.5, "kind": "a"}, {"x": 2, "kind": "b"}]}
seen["raw"] = raw(body)
seen["errors"] = {}
for name, bad in {"signature": {"signature_name": "nope", "instances": [[1, 2]]},
                  "field": {"signature_name": "predict", "instances": [{"x": 1}]},
                  "type": {"signature_name": "predict", "instances": [{"x": "one", "kind": "a"}]},
                  "columnar": {"inputs": {"x": [1]}}}.items():
    try:
        raw(bad)
    except exceptions.GoogleAPICallError as exc:
        seen["errors"][name] = [type(exc).__name__, exc.message]
endpoint.undeploy_all()
print("SEEN", json.dumps(seen))
"""


@pytest.fixture(scope="module")
def tensorflow_python() -> Path:
    """An interpreter with real TensorFlow: the cached layer (built once per user)."""
    cache = pip_cache.user_cache_path(os.environ, "tensorflow")
    return tensorflow_layer.tensorflow_python(cache, os.environ)


@pytest.fixture(scope="module")
def code_service(tmp_path_factory: pytest.TempPathFactory):
    """A service whose operator allows model files that run code."""
    service = LocalService(
        tmp_path_factory.mktemp("tf-serving"), env={"VTP_SERVING_ALLOW_PICKLE": "1"}
    ).start()
    yield service
    service.stop()


def test_a_users_saved_model_deploys_predicts_and_answers_raw_predict(
    code_service, tensorflow_python, tmp_path
) -> None:
    (tmp_path / "serve.py").write_text(textwrap.dedent(PROGRAM))
    command = client_exec(code_service.url, str(tensorflow_python), "serve.py", IMAGE)
    result = run_client(command, dict(os.environ), tmp_path)
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("SEEN ")]
    seen = json.loads(line.removeprefix("SEEN "))
    assert seen["served"] == [3.0, 7.5]  # serving_default: one output, a value per instance
    assert seen["raw"] == [
        "application/json",
        {"predictions": [{"score": 3.0, "kind": "a"}, {"score": 4.0, "kind": "b"}]},
    ]
    errors = seen["errors"]
    assert set(errors) == {"signature", "field", "type", "columnar"}
    assert all(kind == "InvalidArgument" for kind, _ in errors.values()), errors
    assert "signature_name: the model has no signature 'nope'" in errors["signature"][1]
    assert "instances[0]: an object with the inputs kind, x is required" in errors["field"][1]
    assert "instances[].x: not a float32 value" in errors["type"][1]
    assert "inputs: TF Serving's columnar format is not served locally" in errors["columnar"][1]


def test_a_saved_model_is_refused_without_the_operators_leave(local_service) -> None:
    folder = local_service.gcs_root / "tf-refused" / "model"
    folder.mkdir(parents=True)
    (folder / "saved_model.pb").write_bytes(b"not loaded")
    (local_service.gcs_root / "tf-refused" / "empty").mkdir()
    api = ServiceApi(local_service)

    def refusal(uri: str) -> str:
        deployed = api.deploy(api.endpoint(), api.upload(uri, IMAGE))
        assert deployed.status_code == 400, deployed.text
        return deployed.json()["error"]["message"]

    message = refusal("gs://tf-refused/model")
    assert "is a TensorFlow SavedModel, and serving one runs its graph" in message
    assert "VTP_SERVING_ALLOW_PICKLE=1" in message
    assert "loads saved_model.pb from artifactUri gs://tf-refused/empty" in refusal(
        "gs://tf-refused/empty"
    )
