"""Vertex ML Metadata and Experiments through the real aiplatform SDK (REST transport) and raw
REST: stores, contexts, artifacts, executions, events, lineage, filters, and their 4xx."""

from collections.abc import Iterator

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform

from tests.fixtures import LocalService


@pytest.fixture
def sdk(local_service: LocalService) -> Iterator[object]:
    local_service.init_sdk()
    yield aiplatform
    aiplatform.init(api_endpoint=None, api_transport=None, experiment=None)


def test_experiment_run_keeps_params_metrics_and_state(sdk) -> None:
    aiplatform.init(experiment="exp-params", experiment_tensorboard=False)
    run = aiplatform.start_run("run-a")
    aiplatform.log_params({"lr": 0.1, "optimizer": "sgd"})
    aiplatform.log_metrics({"accuracy": 0.9})
    aiplatform.log_metrics({"loss": 0.2})  # merged with what was logged before
    found = aiplatform.ExperimentRun(run_name="run-a", experiment="exp-params")
    assert found.get_params() == {"lr": 0.1, "optimizer": "sgd"}
    assert found.get_metrics() == {"accuracy": 0.9, "loss": 0.2}
    assert found.state == aiplatform.gapic.Execution.State.RUNNING
    aiplatform.end_run()
    assert run.state == aiplatform.gapic.Execution.State.COMPLETE
    names = [e.name for e in aiplatform.Experiment.list()]
    assert "exp-params" in names
    assert [e.name for e in aiplatform.Experiment.list(filter="display_name = exp-params")] == [
        "exp-params"
    ]
    assert aiplatform.Experiment.list(filter="display_name = nothing-like-it") == []
    runs = aiplatform.ExperimentRun.list(experiment="exp-params")
    assert [r.name for r in runs] == ["run-a"]


def test_time_series_metrics_are_written_to_the_backing_tensorboard(sdk) -> None:
    board = aiplatform.Tensorboard.create(display_name="exp-board")
    aiplatform.init(experiment="exp-series", experiment_tensorboard=board)
    aiplatform.start_run("run-s")
    for step in range(3):
        aiplatform.log_time_series_metrics({"loss": 1.0 / (step + 1)})
    run = aiplatform.ExperimentRun(run_name="run-s", experiment="exp-series")
    data = run._backing_tensorboard_run.resource.read_time_series_data()
    values = [(p.step, p.scalar.value) for p in data["loss"].values]
    assert values == [(1, 1.0), (2, 0.5), (3, pytest.approx(1 / 3))]
    experiment = aiplatform.Experiment("exp-series")
    assert experiment.get_backing_tensorboard_resource().resource_name == board.resource_name
    aiplatform.end_run()


def test_execution_events_and_lineage(sdk) -> None:
    aiplatform.init(experiment="exp-lineage", experiment_tensorboard=False)
    aiplatform.start_run("run-l")
    data = aiplatform.Artifact.create(
        schema_title="system.Dataset", resource_id="lineage-data", uri="gs://b/data"
    )
    assert aiplatform.Artifact.get_with_uri("gs://b/data").name == "lineage-data"
    with aiplatform.start_execution(
        schema_title="system.ContainerExecution", resource_id="lineage-step"
    ) as execution:
        execution.assign_input_artifacts([data])
        model = aiplatform.Artifact.create(schema_title="system.Model", uri="gs://b/model")
        execution.assign_output_artifacts([model])
    assert [a.name for a in execution.get_input_artifacts()] == ["lineage-data"]
    assert [a.name for a in execution.get_output_artifacts()] == [model.name]
    run = aiplatform.ExperimentRun(run_name="run-l", experiment="exp-lineage")
    assert [e.name for e in run.get_executions()] == ["lineage-step"]
    assert {a.name for a in run.get_artifacts()} == {"lineage-data", model.name}
    assert execution.state == aiplatform.gapic.Execution.State.COMPLETE
    listed = aiplatform.Artifact.list(filter='schema_title="system.Model"')
    assert model.name in [a.name for a in listed]
    # a date without a time or offset, as the SDK's samples filter by, reads as UTC
    since = aiplatform.Artifact.list(
        filter='schema_title="system.Model" AND create_time>"2022-06-11"'
    )
    assert model.name in [a.name for a in since]
    assert aiplatform.Artifact.list(filter='create_time>"2999-01-01"') == []
    model.delete()
    with pytest.raises(exceptions.NotFound):
        aiplatform.Artifact(model.resource_name)
    assert [a.name for a in execution.get_output_artifacts()] == []
    aiplatform.end_run()


def test_deleting_a_run_and_an_experiment(sdk) -> None:
    aiplatform.init(experiment="exp-delete", experiment_tensorboard=False)
    aiplatform.start_run("run-d")
    aiplatform.end_run()
    run = aiplatform.ExperimentRun(run_name="run-d", experiment="exp-delete")
    run.delete()
    with pytest.raises(exceptions.NotFound):
        aiplatform.ExperimentRun(run_name="run-d", experiment="exp-delete")
    aiplatform.Experiment("exp-delete").delete()
    with pytest.raises(exceptions.NotFound):
        aiplatform.Experiment("exp-delete")


def test_context_children_and_subgraph_over_rest(local_service: LocalService) -> None:
    session, store = local_service.session(), _store(local_service)
    for context in ("parent-ctx", "child-ctx"):
        answer = session.post(f"{store}/contexts?contextId={context}", json={"schemaTitle": "t"})
        assert answer.status_code == 200, answer.text
    name = f"{local_service.parent}/metadataStores/default/contexts"
    answer = session.post(
        f"{store}/contexts/parent-ctx:addContextChildren",
        json={"childContexts": [f"{name}/child-ctx"]},
    )
    assert answer.status_code == 200, answer.text
    child = session.get(f"{store}/contexts/child-ctx").json()
    assert child["parentContexts"] == [f"{name}/parent-ctx"]
    listed = session.get(
        f"{store}/contexts", params={"filter": f'parent_contexts:"{name}/parent-ctx"'}
    ).json()
    assert [c["name"] for c in listed["contexts"]] == [f"{name}/child-ctx"]
    cycle = session.post(
        f"{store}/contexts/child-ctx:addContextChildren",
        json={"childContexts": [f"{name}/parent-ctx"]},
    )
    assert cycle.status_code == 400 and "cycle" in cycle.json()["error"]["message"]
    subgraph = session.get(f"{store}/contexts/parent-ctx:queryContextLineageSubgraph")
    assert subgraph.status_code == 200 and subgraph.json() == {}


@pytest.mark.parametrize(
    ("method", "path", "body", "names"),
    [
        ("GET", "/contexts?filter=in_context(", None, "filter"),
        ("GET", '/contexts?filter=no_such_call("x")', None, "no_such_call"),
        ("POST", "/contexts?contextId=Bad_Id", {}, "contextId"),
        ("POST", "/artifacts", {"uri": 3, "metadata": "x"}, "Invalid JSON"),
        ("PATCH", "/contexts/nobody", {"displayName": "x"}, "not found"),
        ("PATCH", "/artifacts/nobody?updateMask=name", {}, "updateMask"),
        ("POST", "/artifacts:purge", {}, "filter"),
        ("GET", "/contexts?orderBy=uri", None, "orderBy"),
        ("GET", "/metadataSchemas?orderBy=display_name", None, "orderBy"),
        ("GET", "/artifacts/nobody:queryArtifactLineageSubgraph?maxHops=-1", None, "maxHops"),
        ("POST", "/executions/nobody:addExecutionEvents", {"events": [{}]}, "not found"),
    ],
)
def test_malformed_requests_are_4xx_naming_the_field(
    local_service: LocalService, method: str, path: str, body: object, names: str
) -> None:
    answer = local_service.session().request(method, _store(local_service) + path, json=body)
    assert 400 <= answer.status_code < 500, answer.text
    assert names in answer.json()["error"]["message"]


def _store(local_service: LocalService) -> str:
    return f"{local_service.url}/v1/{local_service.parent}/metadataStores/default"
