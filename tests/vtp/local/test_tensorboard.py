"""Vertex TensorBoard through the real aiplatform SDK (REST transport) and raw REST:
tensorboards, experiments, runs, time series, data written and read, and their 4xx."""

from collections.abc import Iterator

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform

from tests.fixtures import LocalService


@pytest.fixture
def sdk(local_service: LocalService) -> Iterator[object]:
    local_service.init_sdk()
    yield aiplatform
    aiplatform.init(api_endpoint=None, api_transport=None)


@pytest.fixture
def run(sdk) -> aiplatform.TensorboardRun:
    board = aiplatform.Tensorboard.create(display_name="board")
    experiment = aiplatform.TensorboardExperiment.create(
        tensorboard_experiment_id="exp", tensorboard_name=board.resource_name
    )
    return aiplatform.TensorboardRun.create(
        tensorboard_run_id="run", tensorboard_experiment_name=experiment.resource_name
    )


def test_scalars_written_are_read_back_by_step(run) -> None:
    run.create_tensorboard_time_series(display_name="loss")
    run.create_tensorboard_time_series(display_name="accuracy")
    for step in range(1, 4):
        run.write_tensorboard_scalar_data({"loss": 1.0 / step, "accuracy": step / 4}, step=step)
    run.write_tensorboard_scalar_data({"loss": 0.25}, step=3)  # a step again replaces it
    data = run.read_time_series_data()
    assert [(p.step, p.scalar.value) for p in data["loss"].values] == [
        (1, 1.0),
        (2, 0.5),
        (3, 0.25),
    ]
    assert [p.scalar.value for p in data["accuracy"].values] == [0.25, 0.5, 0.75]
    series = {s.display_name: s for s in aiplatform.TensorboardTimeSeries.list(run.resource_name)}
    assert series["loss"].gca_resource.metadata.max_step == 3


def test_exported_points_are_ordered_by_number_and_time(run, local_service) -> None:
    run.create_tensorboard_time_series(display_name="loss")
    for step in (9, 10, 2):
        run.write_tensorboard_scalar_data({"loss": float(step)}, step=step)
    (series,) = aiplatform.TensorboardTimeSeries.list(run.resource_name)
    url = f"{local_service.url}/v1/{series.resource_name}:exportTensorboardTimeSeries"
    session = local_service.session()

    def steps(order_by: str) -> list[int]:
        answer = session.post(url, json={"orderBy": order_by}, timeout=30).json()
        return [int(point["step"]) for point in answer["timeSeriesDataPoints"]]

    assert steps("step desc") == [10, 9, 2]  # numbers, not their JSON strings ("9" > "10")
    assert steps("wall_time") == [9, 10, 2]  # the order they were written in


def test_time_series_names_are_unique_within_a_run(run) -> None:
    run.create_tensorboard_time_series(display_name="lr")
    with pytest.raises(exceptions.Conflict):  # ALREADY_EXISTS, as REST reports it
        run.create_tensorboard_time_series(display_name="lr")


def test_one_default_tensorboard_and_deletes_cascade(sdk, run, local_service) -> None:
    first = aiplatform.Tensorboard.create(display_name="first", is_default=True)
    second = aiplatform.Tensorboard.create(display_name="second", is_default=True)
    defaults = aiplatform.Tensorboard.list(filter="is_default=true")
    assert [t.resource_name for t in defaults] == [second.resource_name]
    assert not aiplatform.Tensorboard(first.resource_name).gca_resource.is_default
    board = run.resource_name.split("/experiments/")[0]
    assert aiplatform.Tensorboard(board).gca_resource.run_count == 1
    aiplatform.Tensorboard(board).delete()
    with pytest.raises(exceptions.NotFound):
        aiplatform.TensorboardRun(run.resource_name)


@pytest.mark.parametrize(
    ("method", "suffix", "body", "names"),
    [
        ("POST", "/experiments", {}, "tensorboardExperimentId"),
        ("POST", "/experiments?tensorboardExperimentId=Bad_Id", {}, "tensorboardExperimentId"),
        ("POST", "/experiments/exp/runs/run/timeSeries", {"displayName": "x"}, "valueType"),
        ("POST", "/experiments/exp/runs/run:write", {"timeSeriesData": [{}]}, "tensorboardTime"),
        ("GET", "/experiments/exp/runs/run/timeSeries/nobody:read", None, "not found"),
        ("GET", ":batchRead?timeSeries=x", None, "not found"),
        ("PATCH", "/experiments/exp?updateMask=name", {}, "updateMask"),
        ("GET", "/experiments?filter=(", None, "filter"),
    ],
)
def test_malformed_requests_are_4xx_naming_the_field(
    local_service: LocalService, run, method: str, suffix: str, body: object, names: str
) -> None:
    board = run.resource_name.split("/experiments/")[0]
    answer = local_service.session().request(
        method, f"{local_service.url}/v1/{board}{suffix}", json=body
    )
    assert 400 <= answer.status_code < 500, answer.text
    assert names in answer.json()["error"]["message"]


def test_write_checks_the_value_type(local_service: LocalService, run) -> None:
    series = run.create_tensorboard_time_series(display_name="hist")
    answer = local_service.session().post(
        f"{local_service.url}/v1/{run.resource_name}:write",
        json={
            "timeSeriesData": [
                {
                    "tensorboardTimeSeriesId": series.name,
                    "valueType": "TENSOR",
                    "values": [{"step": "1", "tensor": {"value": "AA=="}}],
                }
            ]
        },
    )
    assert answer.status_code == 400 and "valueType" in answer.json()["error"]["message"]


@pytest.mark.parametrize("depth", [150, 50_000], ids=["past-protobufs-limit", "past-pythons"])
def test_deeply_nested_experiment_writes_are_a_400_naming_the_body(
    local_service: LocalService, run, depth: int
) -> None:
    """An experiment's :write parses its body itself; nesting past the bound is refused first."""
    experiment = run.resource_name.split("/runs/")[0]
    deep = b'{"writeRunDataRequests": [' + b"[" * depth + b"]" * depth + b"]}"
    answer = local_service.session().post(
        f"{local_service.url}/v1/{experiment}:write",
        data=deep,
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 400, answer.text
    assert (
        "request body nests arrays and objects deeper than 100" in answer.json()["error"]["message"]
    )
