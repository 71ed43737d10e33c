"""Google's prebuilt XGBoost and scikit-learn prediction images, served locally by the stand-in:
the SDK's `upload_scikit_learn_model_file` / `upload_xgboost_model_file`, `deploy`, `predict` and
`batch_predict` under `vtp local exec`, answers compared with the library's own `predict`; and
the refusals (a pickle-based file unless the operator allows it, other prebuilt images).

scikit-learn is in the test environment; the XGBoost test is skipped where xgboost is not
installed (bench/aiplatform_system.py runs the SDK's own XGBoost tests with it)."""

import textwrap
from pathlib import Path

import pytest

from tests.fixtures import LocalService, exec_program
from tests.vtp.local.conftest import ServiceApi

pytestmark = pytest.mark.slow

SKLEARN_IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-0:latest"

PROGRAM = """
    import json, sys
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team", location="us-central1", staging_bucket="gs://team-staging")
    bucket = storage.Client(project="team").bucket("team-staging")
    if not bucket.exists():
        bucket.create()
    upload = getattr(aiplatform.Model, sys.argv[1])
    model = upload(model_file_path=sys.argv[2])
    bucket.blob("in.jsonl").upload_from_string("".join(json.dumps(x) + "\\n" for x in INSTANCES))
    job = model.batch_predict(
        job_display_name="batch", gcs_source="gs://team-staging/in.jsonl",
        gcs_destination_prefix="gs://team-staging/out", machine_type="n1-standard-2",
    )
    batch = [json.loads(line)["prediction"] for blob in job.iter_outputs()
             for line in blob.download_as_text().splitlines()]
    endpoint = model.deploy(machine_type="n1-standard-2")
    served = endpoint.predict(instances=INSTANCES).predictions
    endpoint.undeploy_all()
    print(json.dumps({"image": model.container_spec.image_uri, "served": list(served),
                      "batch": batch}))
"""


def iris() -> tuple[list[list[float]], list[int]]:
    """scikit-learn's bundled iris (no download)."""
    from sklearn.datasets import load_iris

    data = load_iris()
    return data.data.tolist(), data.target.tolist()


def run_program(service: LocalService, folder: Path, *args: str) -> dict:
    features, _ = iris()
    instances = features[::30]
    program = f"INSTANCES = {instances!r}\n" + textwrap.dedent(PROGRAM)
    (folder / "program.py").write_text(program)
    return {"instances": instances, **exec_program(service.url, folder, *args)}


@pytest.fixture(scope="module")
def pickle_service(tmp_path_factory: pytest.TempPathFactory):
    """A service whose operator allows pickle-based model files."""
    service = LocalService(
        tmp_path_factory.mktemp("pickle"), env={"VTP_SERVING_ALLOW_PICKLE": "1"}
    ).start()
    yield service
    service.stop()


def test_a_scikit_learn_model_served_when_the_operator_allows_pickle(pickle_service, tmp_path):
    import joblib
    from sklearn.linear_model import LogisticRegression

    features, labels = iris()
    estimator = LogisticRegression(max_iter=500).fit(features, labels)
    joblib.dump(estimator, tmp_path / "iris.joblib")
    out = run_program(pickle_service, tmp_path, "upload_scikit_learn_model_file", "iris.joblib")
    assert "/vertex-ai/prediction/sklearn-cpu." in out["image"]
    expected = estimator.predict(out["instances"]).tolist()
    assert out["served"] == expected
    assert out["batch"] == expected


def test_a_scikit_learn_pipeline_takes_rows_of_numbers_and_strings(pickle_service, tmp_path):
    """As the image does, the estimator gets `numpy.asarray(instances)`: a pipeline that encodes
    its own categories (vertex-ai-samples' census sample) takes rows of numbers and strings,
    which numpy makes strings; a ragged body is a 400 naming the instances."""
    import joblib
    import numpy
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    rows = [[25, "Private", 40], [38, "State-gov", 50], [52, "Private", 45], [19, "Never", 20]]
    columns = ColumnTransformer(
        [("category", OneHotEncoder(handle_unknown="ignore", sparse_output=False), [1])],
        remainder="passthrough",
    )
    classifier = RandomForestClassifier(n_estimators=5, random_state=0)
    pipeline = Pipeline([("columns", columns), ("classifier", classifier)])
    pipeline.fit(numpy.asarray(rows), [0, 1, 1, 0])
    folder = pickle_service.gcs_root / "models" / "census"
    folder.mkdir(parents=True)
    joblib.dump(pipeline, folder / "model.joblib")
    api = ServiceApi(pickle_service)
    endpoint = api.endpoint()
    deployed = api.deploy(endpoint, api.upload("gs://models/census", SKLEARN_IMAGE))
    assert "error" not in api.finish(deployed.json()), deployed.text
    url = f"{pickle_service.url}/v1/{endpoint}:predict"
    answer = api.session.post(url, json={"instances": rows}, timeout=60)
    assert answer.status_code == 200, answer.text
    assert answer.json()["predictions"] == pipeline.predict(numpy.asarray(rows)).tolist()
    ragged = api.session.post(url, json={"instances": [[1, "a"], [2]]}, timeout=60)
    assert ragged.status_code == 400 and "instances" in ragged.json()["error"]["message"]


def test_an_xgboost_booster_served(local_service, tmp_path):

    xgboost = pytest.importorskip("xgboost")
    features, labels = iris()
    booster = xgboost.train(
        {"objective": "multi:softprob", "num_class": 3, "max_depth": 2},
        xgboost.DMatrix(features, label=labels),
        num_boost_round=5,
    )
    booster.save_model(tmp_path / "model.bst")
    out = run_program(local_service, tmp_path, "upload_xgboost_model_file", "model.bst")
    expected = booster.predict(xgboost.DMatrix(out["instances"])).tolist()  # probabilities
    for answers in (out["served"], out["batch"]):
        assert len(answers) == len(expected)
        for got, want in zip(answers, expected, strict=True):
            assert got == pytest.approx(want, abs=1e-6)


def test_pickle_files_and_other_prebuilt_images_are_refused(local_service):
    session, base = local_service.session(), f"{local_service.url}/v1/{local_service.parent}"
    folder = local_service.gcs_root / "models" / "iris"
    folder.mkdir(parents=True)
    (folder / "model.joblib").write_bytes(b"not loaded")

    def refusal(image: str, uri: str = "gs://models/iris") -> str:
        spec = {"displayName": "m", "artifactUri": uri, "containerSpec": {"imageUri": image}}
        uploaded = session.post(f"{base}/models:upload", json={"model": spec}, timeout=30).json()
        endpoint = session.post(f"{base}/endpoints", json={"displayName": "e"}, timeout=30)
        deployed = session.post(
            f"{local_service.url}/v1/{endpoint.json()['response']['name']}:deployModel",
            json={"deployedModel": {"model": uploaded["response"]["model"]}},
            timeout=30,
        )
        assert deployed.status_code == 400, deployed.text
        return deployed.json()["error"]["message"]

    message = refusal(SKLEARN_IMAGE)
    assert "VTP_SERVING_ALLOW_PICKLE=1" in message and "model.joblib" in message
    tf2_image = "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest"
    assert "loads saved_model.pb from artifactUri gs://models/iris" in refusal(tf2_image)
    tf1_image = "us-docker.pkg.dev/vertex-ai/prediction/tf-cpu.1-15:latest"
    assert "custom container" in refusal(tf1_image)
    empty = local_service.gcs_root / "models" / "empty"
    empty.mkdir()
    assert "holds none of them" in refusal(SKLEARN_IMAGE, "gs://models/empty")
