"""Google's prebuilt TensorFlow prediction images, served locally by the TF Serving stand-in: a
SavedModel written by real TensorFlow, uploaded and deployed with the real SDK by a user's
program (run under `vtp local exec` on the cached layer's interpreter, the one the stand-in
itself runs on), answering `endpoint.predict` and gRPC and REST `raw_predict` in TF Serving's
row and columnar formats, a signature chosen by name; vertex-ai-samples'
get_started_with_raw_predict run unchanged on its stand-in penguins model; the refusals before
any process starts (no VTP_SERVING_ALLOW_PICKLE=1, no saved_model.pb, a link out of the storage
root) and the one-line failure where pip cannot install TensorFlow.

The layer is this user's cache (`$XDG_CACHE_HOME/vtp/tensorflow`, shared with
test_storage_tensorflow.py): the first run installs TensorFlow into it, a few minutes.
"""

import ast
import json
import math
import os
import re
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fixtures import REPO, LocalService, serving_processes
from tests.vtp.local.conftest import ServiceApi, client_exec, run_client
from vtp.local.runtime import pip_cache, tensorflow_layer

pytestmark = pytest.mark.slow

IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest"
SAMPLES = REPO / "bench" / "third_party" / "public_samples"

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
seen = {"endpoint": endpoint.name,
        "served": list(endpoint.predict(instances=[[1.0, 2.0], [3.0, 4.5]]).predictions)}

client = aiplatform_v1.PredictionServiceClient(
    client_options={"api_endpoint": "us-central1-aiplatform.googleapis.com"})
def raw(body):
    request = aiplatform_v1.RawPredictRequest(
        endpoint=endpoint.resource_name,
        http_body=httpbody_pb2.HttpBody(data=json.dumps(body).encode(),
                                        content_type="application/json"))
    answer = client.raw_predict(request)
    return json.loads(answer.data)

seen["raw"] = raw({"signature_name": "predict",
                   "instances": [{"x": 1.5, "kind": "a"}, {"x": 2, "kind": "b"}]})
seen["columnar"] = raw({"signature_name": "predict", "inputs": {"x": [0.5], "kind": ["c"]}})
seen["default"] = raw({"inputs": [[1, 1], [2, 2], [3, 3]]})
try:
    raw({"signature_name": "nope", "instances": [[1, 2]]})
except exceptions.GoogleAPICallError as exc:
    seen["refused"] = [type(exc).__name__, exc.message]
print("SEEN", json.dumps(seen))
"""


@pytest.fixture(scope="module")
def tensorflow_python() -> Path:
    """An interpreter with real TensorFlow: the cached layer (built once per user)."""
    cache = pip_cache.user_cache_path(os.environ, "tensorflow")
    return tensorflow_layer.tensorflow_python(cache, os.environ)


@pytest.fixture(scope="module")
def code_service(tmp_path_factory: pytest.TempPathFactory):
    """A service whose operator allows model files that run code (a SavedModel's graph)."""
    service = LocalService(
        tmp_path_factory.mktemp("tf-serving"), env={"VTP_SERVING_ALLOW_PICKLE": "1"}
    ).start()
    yield service
    service.stop()


def test_a_users_saved_model_serves_tf_servings_formats(
    code_service, tensorflow_python, tmp_path
) -> None:
    (tmp_path / "serve.py").write_text(textwrap.dedent(PROGRAM))
    command = client_exec(code_service.url, str(tensorflow_python), "serve.py", IMAGE)
    result = run_client(command, dict(os.environ), tmp_path)
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("SEEN ")]
    seen = json.loads(line.removeprefix("SEEN "))
    assert seen["served"] == [3.0, 7.5]  # serving_default: one output, a value per instance
    rows = [{"kind": "a", "score": 3.0}, {"kind": "b", "score": 4.0}]
    assert seen["raw"] == {"predictions": rows}  # several outputs: an object per instance
    assert seen["columnar"] == {"outputs": {"kind": ["c"], "score": [1.0]}}
    assert seen["default"] == {"outputs": [2.0, 4.0, 6.0]}
    kind, message = seen["refused"]
    assert kind == "InvalidArgument"
    known = "(it has predict, serving_default)"
    assert f"signature_name: the model has no signature 'nope' {known}" in message

    # REST: rawPredict passes the body through; a bad one is a 400 naming the field, no traceback.
    endpoint = f"{code_service.url}/v1/projects/-/locations/-/endpoints/{seen['endpoint']}"
    session = code_service.session()
    bad = session.post(
        f"{endpoint}:rawPredict",
        json={"signature_name": "predict", "instances": [{"x": "one", "kind": "a"}]},
        timeout=60,
    )
    assert bad.status_code == 400, bad.text
    error = bad.json()["error"]["message"]
    assert "instances[0].x: the string 'one' where a number (float32) is expected" in error
    assert "Traceback" not in error
    nested = session.post(f"{endpoint}:predict", json={"instances": [[1, 2], [3]]}, timeout=60)
    assert nested.status_code == 400, nested.text
    assert "instances[1]: shape [1] where instances[0] has [2]" in nested.json()["error"]["message"]
    good = session.post(f"{endpoint}:rawPredict", json={"instances": [[0.25, 0.5]]}, timeout=60)
    assert good.status_code == 200 and good.json() == {"predictions": [0.75]}

    log = next((code_service.state_dir / "endpoints" / seen["endpoint"]).glob("*.log")).read_text()
    assert "tf_serving_server: TensorFlow from " in log
    assert "signatures: predict, serving_default" in log
    copy = Path(re.search(r"its private copy: (\S+)\)", log)[1])
    assert (copy / "saved_model.pb").is_file() and (copy.stat().st_mode & 0o777) == 0o700
    (deployed,) = session.get(endpoint, timeout=30).json()["deployedModels"]
    undeployed = session.post(
        f"{endpoint}:undeployModel", json={"deployedModelId": deployed["id"]}, timeout=60
    )
    assert undeployed.status_code == 200, undeployed.text
    assert not serving_processes(seen["endpoint"])
    assert not copy.exists()  # removed as the server stopped


def test_the_raw_predict_sample_runs_unchanged(code_service, tensorflow_python, tmp_path) -> None:
    # Its model, gs://cloud-samples-data/.../penguins/estimator/, written by the stand-in with
    # TensorFlow (as bench/public_samples.py seeds it), then the sample itself on the service's
    # interpreter: gcloud storage cp, Model.upload, Endpoint.create, deploy, raw_predict.
    shutil.copy(SAMPLES / "stand_ins.py", tmp_path)
    stand_in = client_exec(
        code_service.url, str(tensorflow_python), "stand_ins.py", "penguins_estimator"
    )
    run_client(stand_in, dict(os.environ), tmp_path)
    script = "vertex-ai-samples/get_started_with_raw_predict.py"
    shutil.copy(SAMPLES / script, tmp_path / "sample.py")
    command = client_exec(code_service.url, sys.executable, "sample.py")
    result = run_client(command, dict(os.environ), tmp_path)
    # `print(response)` of the HttpBody: `data: "<the body TF Serving answered, escaped>"`.
    data = re.search(r'^data: (".*")$', result.stdout, re.MULTILINE)
    assert data, result.stdout[-3000:]
    answer = json.loads(ast.literal_eval(data[1]))
    score = 36.6 / 50 + 184.0 / 200 - 18.4 / 20
    first = 1 / (1 + math.exp(-score))
    assert answer["predictions"] == [[pytest.approx(first, abs=1e-6), pytest.approx(1 - first)]]


def test_a_saved_model_is_refused_without_the_operators_leave(local_service) -> None:
    folder = local_service.gcs_root / "tf-refused" / "model"
    folder.mkdir(parents=True)
    (folder / "saved_model.pb").write_bytes(b"not loaded")
    (local_service.gcs_root / "tf-refused" / "empty" / "variables").mkdir(parents=True)
    api = ServiceApi(local_service)

    message = refusal(api, "gs://tf-refused/model")
    assert "gs://tf-refused/model/saved_model.pb is a TensorFlow SavedModel" in message
    assert "serving one runs its graph" in message and "VTP_SERVING_ALLOW_PICKLE=1" in message
    message = refusal(api, "gs://tf-refused/empty")
    assert "loads saved_model.pb from artifactUri gs://tf-refused/empty, which does not" in message
    assert "tf.saved_model.save(model, folder)" in message


def test_a_link_out_of_the_storage_root_is_refused_naming_it(code_service, tmp_path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not the model's")
    folder = code_service.gcs_root / "tf-linked" / "model"
    (folder / "variables").mkdir(parents=True)
    (folder / "saved_model.pb").write_bytes(b"a graph")
    (folder / "variables" / "variables.index").symlink_to(outside)
    api = ServiceApi(code_service)
    message = refusal(api, "gs://tf-linked/model")
    assert "gs://tf-linked/model/variables/variables.index" in message
    assert "storage root" in message
    (folder / "variables" / "variables.index").unlink()
    (folder / "assets").symlink_to(tmp_path, target_is_directory=True)
    assert "gs://tf-linked/model/assets is a link to a folder" in refusal(
        api, "gs://tf-linked/model"
    )


def test_where_pip_cannot_install_tensorflow_the_deploy_fails_saying_how(tmp_path) -> None:
    offline = {
        "VTP_SERVING_ALLOW_PICKLE": "1", "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path),
        # no config files, no index, links to a folder without wheels: pip is offline
    }  # fmt: skip
    with LocalService(tmp_path / "state", env=offline) as service:
        folder = service.gcs_root / "tf-offline" / "model"
        folder.mkdir(parents=True)
        (folder / "saved_model.pb").write_bytes(b"never loaded")
        api = ServiceApi(service)
        endpoint = api.endpoint()
        deployed = api.deploy(endpoint, api.upload("gs://tf-offline/model", IMAGE))
        assert deployed.status_code == 200, deployed.text
        failed = api.finish(deployed.json())
        message = failed["error"]["message"]
        assert "pip could not install tensorflow-cpu==2.21.*" in message, message
        assert "pip install 'tensorflow-cpu==2.21.*') and try again" in message
        log = next((service.state_dir / "endpoints").glob("*/*.log")).read_text()
        assert "tensorflow: installing tensorflow-cpu==2.21.* into " in log
        assert not serving_processes(endpoint.rsplit("/", 1)[1])
    assert not list((tmp_path / "cache" / "vtp" / "tensorflow").glob("*/bin"))  # nothing half-built


def refusal(api: ServiceApi, uri: str) -> str:
    """The one-line message of the 400 that deploying a tf2 model at `uri` gets."""
    deployed = api.deploy(api.endpoint(), api.upload(uri, IMAGE))
    assert deployed.status_code == 400, deployed.text
    message = deployed.json()["error"]["message"]
    assert "\n" not in message, message
    return message


def test_every_prebuilt_tensorflow_2_image_name_plans_the_stand_in(tmp_path) -> None:
    from vtp.local.endpoints.prebuilt import plan_prebuilt

    (tmp_path / "b" / "m" / "variables").mkdir(parents=True)
    (tmp_path / "b" / "m" / "saved_model.pb").write_bytes(b"a graph")
    environ = {"PATH": os.environ["PATH"], "HOME": "/home/u", "PIP_INDEX_URL": "https://x/simple"}
    for image, gpu in (
        (IMAGE, False),
        ("europe-docker.pkg.dev/vertex-ai/prediction/tf2-gpu.2-12:latest", True),
        ("asia-docker.pkg.dev/vertex-ai-restricted/prediction/tf2-cpu.2-8:latest", False),
        ("gcr.io/cloud-aiplatform/prediction/tf2-gpu.2-1", True),
    ):
        argv, env = plan_prebuilt("M", image, "gs://b/m", tmp_path, True, environ)
        assert argv == ("python", "-m", "vtp.local.endpoints.tf_serving_server"), image
        no_gpu = {} if gpu else {"CUDA_VISIBLE_DEVICES": ""}  # a -cpu image's machine has none
        assert dict(env) == {
            "PIP_INDEX_URL": "https://x/simple",
            "VTP_SERVING_ALLOW_PICKLE": "1",
            "VTP_TENSORFLOW_CACHE": "/home/u/.cache/vtp/tensorflow",
            **no_gpu,
        }, image
