"""`python -m vtp.trainer.serve`: Vertex's prediction container contract on an exported model."""

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import torch

from tests.trainer.serving import Client, free_port, serve_env, start, stop, wait_healthy
from vtp.trainer import serve, train
from vtp.trainer.checkpoint import list_checkpoints
from vtp.trainer.config import Config, parse_args
from vtp.trainer.distributed import Runtime
from vtp.trainer.export import export_checkpoint, load_program
from vtp.trainer.predict import ModelError, Predictor
from vtp.trainer.tasks import digits, servable_task

MODEL_URI = "gs://models/digits"
# Vertex's own routes when containerSpec names none: the server must serve whatever it is told.
HEALTH = "/v1/endpoints/123/deployedModels/456"
PREDICT = "/v1/endpoints/123/deployedModels/456:predict"


@pytest.fixture(scope="module")
def gcs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local Cloud Storage root holding gs://models/digits: a short digits run, exported."""
    out, root = tmp_path_factory.mktemp("run"), tmp_path_factory.mktemp("gcs")
    flags = {"hidden_size": 32, "max_steps": 90, "checkpoint_interval": 90, "eval_interval": 90}
    dirs = {f"{name}_dir": out / name for name in ("checkpoint", "model", "tensorboard")}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLOUD_ML_HP_METRIC_FILE", str(out / "hypertune.metrics"))
        argv = [f"--{key}={value}" for key, value in {**flags, **dirs}.items()]
        train.run(parse_args(argv), Runtime(0, 1, 0, torch.device("cpu")))
    torch.set_num_threads(threads)
    export_checkpoint(list_checkpoints(out / "checkpoint")[0].path, root / "models" / "digits")
    return root


@pytest.fixture(scope="module")
def client(gcs_root: Path) -> Iterator[Client]:
    """A client of `python -m vtp.trainer.serve` serving gs://models/digits, healthy."""
    port = free_port()
    env = serve_env(
        AIP_HTTP_PORT=str(port),
        AIP_HEALTH_ROUTE=HEALTH,
        AIP_PREDICT_ROUTE=PREDICT,
        AIP_STORAGE_URI=MODEL_URI,
        VTP_GCS_ROOT=str(gcs_root),
    )
    process = start(env)
    try:
        wait_healthy(process, port, HEALTH)
        yield Client(port)
    finally:
        stop(process)


def eval_inputs() -> torch.Tensor:
    """The digits evaluation set's images, one row of 64 pixels each."""
    return digits.build_datasets(Config())[1].tensors[0]


def expected(gcs_root: Path, inputs: torch.Tensor) -> torch.Tensor:
    """The exported program's class probabilities for `inputs`."""
    with torch.no_grad():
        return torch.softmax(load_program(gcs_root / "models" / "digits")(inputs), dim=1)


@pytest.mark.parametrize("count", [1, 360])
def test_predictions_are_the_exported_programs(client: Client, gcs_root: Path, count: int) -> None:
    inputs = eval_inputs()[:count]
    status, answer = client.post(PREDICT, {"instances": inputs.tolist()})

    assert status == 200
    predictions = answer["predictions"]
    probabilities = expected(gcs_root, inputs)
    indices = probabilities.argmax(dim=1).tolist()
    assert [p["index"] for p in predictions] == indices
    assert [p["label"] for p in predictions] == [str(index) for index in indices]
    assert torch.tensor([p["probabilities"] for p in predictions]) == pytest.approx(probabilities)
    if count > 1:  # a trained model, far better than chance (10%): agreement is no accident
        targets = digits.build_datasets(Config())[1].tensors[1]
        assert (torch.tensor(indices) == targets).float().mean() > 0.5


INSTANCE = [0.0] * 64
BAD_REQUESTS = [
    (b"{not json", "the body is not JSON: Expecting property name"),
    (b"[[0.0]]", 'the body must be a JSON object: {"instances": [...]}'),
    (json.dumps({"instance": [INSTANCE]}), "unknown fields ['instance']"),
    (json.dumps({"instances": []}), "instances must be a non-empty array"),
    (json.dumps({"instances": [[0.0] * 63]}), "instances[0] has shape [63]; each instance must"),
    (json.dumps({"instances": [INSTANCE, [[0.0] * 64]]}), "instances[1] has shape [1, 64]"),
    (json.dumps({"instances": [INSTANCE, "seven"]}), "instances[1] is not an array of numbers"),
    (json.dumps({"instances": [[float("nan")] * 64]}), "instances hold NaN or infinite values"),
    (json.dumps({"instances": [INSTANCE], "parameters": {"k": 3}}), "this model takes none"),
]


@pytest.mark.parametrize(("body", "problem"), BAD_REQUESTS)
def test_bad_requests_get_400_naming_the_problem(
    client: Client, body: str | bytes, problem: str
) -> None:
    data = body.encode() if isinstance(body, str) else body
    status, answer = client.request("POST", PREDICT, data)
    assert status == 400
    assert problem in answer["error"]


def test_a_wrong_shape_names_the_shape_export_json_gives(client: Client) -> None:
    _, answer = client.post(PREDICT, {"instances": [[1, 2, 3]]})
    assert answer["error"] == (
        "instances[0] has shape [3]; each instance must have shape [64] "
        "(export.json input 'input' of shape [null, 64], float32, without the batch dimension)"
    )


def test_other_routes_and_methods_are_refused_naming_no_route(client: Client) -> None:
    assert client.request("GET", PREDICT) == (405, {"error": "method not allowed"})
    assert client.post("/predict", {"instances": [INSTANCE]}) == (404, {"error": "not found"})
    assert client.request("POST", HEALTH, b"{}")[0] == 405
    status, answer = client.request("POST", PREDICT, b"{}", content_type="text/plain")
    assert status == 415 and "application/json" in answer["error"]
    # A refusal closes the connection (its body is never read); the client opens another.
    assert client.post(PREDICT, {"instances": [INSTANCE]})[0] == 200


def test_concurrent_requests_each_get_their_own_predictions(client: Client, gcs_root: Path) -> None:
    inputs = eval_inputs()[:8]

    def predict(row: int) -> int:
        status, answer = Client(client.port).post(PREDICT, {"instances": [inputs[row].tolist()]})
        assert status == 200
        return answer["predictions"][0]["index"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        indices = list(pool.map(predict, range(8)))
    assert indices == expected(gcs_root, inputs).argmax(dim=1).tolist()


def test_health_is_503_until_the_model_is_loaded(gcs_root: Path) -> None:
    config = serve.ServeConfig(MODEL_URI, port=free_port())
    with serve.Server(config) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        loading = Client(config.port)
        assert loading.request("GET", "/health") == (
            503,
            {"error": f"loading the model from {MODEL_URI}"},
        )
        assert loading.post("/predict", {"instances": [INSTANCE]})[0] == 503
        server.predictor = Predictor.load(gcs_root / "models" / "digits")
        assert loading.request("GET", "/health") == (200, {"status": "ready"})
        server.shutdown()
        thread.join()


def test_a_missing_model_directory_stops_the_server_with_a_clear_message(
    tmp_path: Path,
) -> None:
    env = serve_env(
        AIP_HTTP_PORT=str(free_port()),
        AIP_STORAGE_URI="gs://models/missing",
        VTP_GCS_ROOT=str(tmp_path),
    )
    process = start(env)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 1
    missing = tmp_path / "models" / "missing"
    assert (
        f"vtp.trainer.serve: error: the model directory AIP_STORAGE_URI=gs://models/missing "
        f"({missing}) does not exist"
    ) in output


def test_the_environment_is_read_as_vertex_sets_it() -> None:
    assert serve.ServeConfig.from_env({"AIP_STORAGE_URI": MODEL_URI}) == serve.ServeConfig(
        MODEL_URI, 8080, "/health", "/predict"
    )
    vertex = {"AIP_HTTP_PORT": "7080", "AIP_HEALTH_ROUTE": HEALTH, "AIP_PREDICT_ROUTE": PREDICT}
    config = serve.ServeConfig.from_env({"AIP_STORAGE_URI": MODEL_URI, **vertex})
    assert config == serve.ServeConfig(MODEL_URI, 7080, HEALTH, PREDICT)


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({}, "AIP_STORAGE_URI is not set"),
        ({"AIP_HTTP_PORT": "http"}, "AIP_HTTP_PORT='http' is not a port number"),
        ({"AIP_HTTP_PORT": "70000"}, "AIP_HTTP_PORT='70000' is not a port number"),
        ({"AIP_PREDICT_ROUTE": "predict"}, "AIP_PREDICT_ROUTE='predict' is not a path"),
    ],
)
def test_a_bad_environment_exits_2_naming_the_variable(
    env: dict[str, str],
    problem: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in ("AIP_STORAGE_URI", "AIP_HTTP_PORT", "AIP_HEALTH_ROUTE", "AIP_PREDICT_ROUTE"):
        monkeypatch.delenv(name, raising=False)
    if env:
        monkeypatch.setenv("AIP_STORAGE_URI", MODEL_URI)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert serve.main([]) == 2
    assert problem in capsys.readouterr().err


def test_the_task_is_checked_on_the_config_the_model_is_built_from(
    gcs_root: Path, tmp_path: Path
) -> None:
    """A config.json swapped after the first check still names a task the server refuses: the
    check runs on the very file the model is rebuilt from, before its task is imported."""
    model = tmp_path / "model"
    model.mkdir()
    for item in (gcs_root / "models" / "digits").iterdir():
        if item.is_file():
            (model / item.name).write_bytes(item.read_bytes())
    config = json.loads((model / "config.json").read_text())
    allowed = frozenset({config["task"]})
    (model / "config.json").write_text(json.dumps({**config, "task": "os"}))  # the swap
    with pytest.raises(ModelError, match="which serving does not import"):
        Predictor.load(model, lambda task: servable_task(task, allowed))
