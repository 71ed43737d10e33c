"""Vertex AI Vizier through the aiplatform SDK's own VizierServiceClient, on gRPC (the SDK's
default transport, over the service's TLS endpoint) and on REST, against a real local service.

(The SDK's `aiplatform.vizier.Study` wraps this client but needs `google-vizier`, which this
project does not install; bench/aiplatform_system.py runs the SDK's own test_vizier.py with it.)
"""

import math
import secrets

import grpc
import pytest
from google.api_core import exceptions
from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1 import Measurement, Study, StudySpec, Trial
from google.cloud.aiplatform_v1.services.vizier_service.transports import (
    VizierServiceGrpcTransport,
)

from tests.fixtures import LocalService

Client = aiplatform_v1.VizierServiceClient
MAXIMIZE = StudySpec.MetricSpec.GoalType.MAXIMIZE
MINIMIZE = StudySpec.MetricSpec.GoalType.MINIMIZE


@pytest.fixture(scope="module")
def rest(local_service: LocalService) -> Client:
    """The SDK's VizierServiceClient on REST, with the service's token."""
    return rest_client(local_service)


def rest_client(service: LocalService) -> Client:
    """A VizierServiceClient on REST for `service`, with its token."""
    return Client(
        transport="rest",
        client_options=ClientOptions(api_endpoint=service.url),
        credentials=service.credentials(),
    )


@pytest.fixture(scope="module")
def grpc_client(local_service: LocalService) -> Client:
    """The SDK's VizierServiceClient on gRPC over TLS (the SDK's default), trusting the
    service's CA and sending its token."""
    roots = (local_service.state_dir / "tls" / "ca.pem").read_bytes()
    endpoint = local_service.shell_env()["VTP_LOCAL_API_ENDPOINT"]
    credentials = grpc.composite_channel_credentials(
        grpc.ssl_channel_credentials(root_certificates=roots),
        grpc.access_token_call_credentials(local_service.token),
    )
    channel = grpc.secure_channel(endpoint, credentials)
    return Client(transport=VizierServiceGrpcTransport(channel=channel))


def spec(algorithm: int = StudySpec.Algorithm.RANDOM_SEARCH, **extra: object) -> StudySpec:
    """The SDK system test's study: a float and a categorical parameter, pr-auc maximized."""
    return StudySpec(
        algorithm=algorithm,
        metrics=[{"metric_id": "pr-auc", "goal": MAXIMIZE}],
        parameters=[
            {
                "parameter_id": "learning_rate",
                "double_value_spec": {"min_value": 1e-5, "max_value": 1.0},
                "scale_type": StudySpec.ParameterSpec.ScaleType.UNIT_LINEAR_SCALE,
            },
            {
                "parameter_id": "optimizer",
                "categorical_value_spec": {"values": ["adagrad", "adam", "experimental"]},
            },
        ],
        **extra,
    )


def create(client: Client, parent: str, name: str, study_spec: StudySpec | None = None) -> Study:
    return client.create_study(
        parent=parent, study=Study(display_name=name, study_spec=study_spec or spec())
    )


def measurement(value: float, step: int = 0, metric: str = "pr-auc") -> Measurement:
    return Measurement(step_count=step, metrics=[{"metric_id": metric, "value": value}])


def suggest(client: Client, study: Study, count: int, worker: str = "w") -> list[Trial]:
    operation = client.suggest_trials(
        request={"parent": study.name, "suggestion_count": count, "client_id": worker}
    )
    return list(operation.result(timeout=30).trials)


def test_the_sdk_system_test_lifecycle_over_grpc(grpc_client, local_service) -> None:
    client, parent = grpc_client, local_service.parent
    study = create(client, parent, "lifecycle", spec(decay_curve_stopping_spec={}))
    assert study.state == Study.State.ACTIVE and study.name.startswith(f"{parent}/studies/")
    with pytest.raises(exceptions.AlreadyExists):
        create(client, parent, "lifecycle")
    assert client.lookup_study(request={"parent": parent, "display_name": "lifecycle"}) == study

    trials = suggest(client, study, 3, "halio_test_worker")
    assert [t.id for t in trials] == ["1", "2", "3"]
    for trial in trials:
        assert trial.state == Trial.State.ACTIVE and trial.client_id == "halio_test_worker"
        params = {p.parameter_id: p.value for p in trial.parameters}
        assert 1e-5 <= params["learning_rate"] <= 1.0
        assert params["optimizer"] in ("adagrad", "adam", "experimental")
    # The same worker gets its pending trials back before any new one.
    assert [t.name for t in suggest(client, study, 3, "halio_test_worker")] == [
        t.name for t in trials
    ]

    for trial in trials:
        stopping = client.check_trial_early_stopping_state(request={"trial_name": trial.name})
        assert stopping.result(timeout=30).should_stop is False
        client.add_trial_measurement(
            request={"trial_name": trial.name, "measurement": measurement(0.4)}
        )
        done = client.complete_trial(
            request={"name": trial.name, "final_measurement": measurement(0.4)}
        )
        assert done.state == Trial.State.SUCCEEDED and len(done.measurements) == 1

    listed = client.list_trials(parent=study.name).trials
    assert [t.state for t in listed] == [Trial.State.SUCCEEDED] * 3
    optimal = client.list_optimal_trials(request={"parent": study.name}).optimal_trials
    assert sorted(t.id for t in optimal) == ["1", "2", "3"]  # a three-way tie

    client.delete_trial(name=trials[0].name)
    with pytest.raises(exceptions.NotFound):
        client.get_trial(name=trials[0].name)
    client.delete_study(name=study.name)
    with pytest.raises(exceptions.NotFound):
        client.get_study(name=study.name)
    with pytest.raises(exceptions.NotFound):
        client.get_trial(name=trials[1].name)


def test_a_grid_runs_out_and_completes_the_study(rest, local_service) -> None:
    grid = StudySpec(
        algorithm=StudySpec.Algorithm.GRID_SEARCH,
        metrics=[{"metric_id": "loss", "goal": MINIMIZE}],
        parameters=[
            {"parameter_id": "layers", "integer_value_spec": {"min_value": 1, "max_value": 3}}
        ],
    )
    study = create(rest, local_service.parent, "grid", grid)
    first = suggest(rest, study, 2, "a")
    rest_of_grid = suggest(rest, study, 5, "b")
    values = sorted(p.value for t in first + rest_of_grid for p in t.parameters)
    assert values == [1, 2, 3]
    assert rest.get_study(name=study.name).state == Study.State.COMPLETED
    assert suggest(rest, study, 1, "c") == []


def test_optimal_trials_are_the_best_one_or_the_pareto_front(rest, local_service) -> None:
    study = create(rest, local_service.parent, "optimal")
    for value in (0.2, 0.9, 0.5):
        trial = Trial(
            parameters=[
                {"parameter_id": "learning_rate", "value": 0.1},
                {"parameter_id": "optimizer", "value": "adam"},
            ],
            final_measurement=measurement(value),
        )
        created = rest.create_trial(parent=study.name, trial=trial)
        assert created.state == Trial.State.SUCCEEDED
    optimal = rest.list_optimal_trials(request={"parent": study.name}).optimal_trials
    assert [t.id for t in optimal] == ["2"]

    two = StudySpec(spec())
    two.metrics.append(StudySpec.MetricSpec(metric_id="latency", goal=MINIMIZE))
    pareto = create(rest, local_service.parent, "pareto", two)
    for accuracy, latency in ((0.9, 30.0), (0.8, 10.0), (0.7, 20.0)):  # the third is dominated
        trial = suggest(rest, pareto, 1, f"w{accuracy}")[0]
        final = Measurement(
            metrics=[
                {"metric_id": "pr-auc", "value": accuracy},
                {"metric_id": "latency", "value": latency},
            ]
        )
        rest.complete_trial(request={"name": trial.name, "final_measurement": final})
    front = rest.list_optimal_trials(request={"parent": pareto.name}).optimal_trials
    assert sorted(t.id for t in front) == ["1", "2"]


def test_complete_without_a_measurement_picks_one_or_marks_infeasible(rest, local_service) -> None:
    study = create(rest, local_service.parent, "complete", spec(measurement_selection_type=2))
    best, infeasible, empty = suggest(rest, study, 3)
    for step, value in enumerate((0.3, 0.7, 0.5)):
        rest.add_trial_measurement(
            request={"trial_name": best.name, "measurement": measurement(value, step)}
        )
    done = rest.complete_trial(request={"name": best.name})  # BEST_MEASUREMENT: step 1
    assert done.final_measurement.step_count == 1
    assert done.final_measurement.metrics[0].value == 0.7

    gave_up = rest.complete_trial(
        request={"name": infeasible.name, "trial_infeasible": True, "infeasible_reason": "OOM"}
    )
    assert gave_up.state == Trial.State.INFEASIBLE and gave_up.infeasible_reason == "OOM"
    with pytest.raises(exceptions.BadRequest, match="finalMeasurement"):
        rest.complete_trial(request={"name": empty.name})
    with pytest.raises(exceptions.BadRequest, match="completed"):
        rest.add_trial_measurement(request={"trial_name": best.name, "measurement": measurement(1)})


def test_the_median_rule_stops_a_trial_behind_the_completed_ones(grpc_client, local_service):
    client = grpc_client
    study = create(client, local_service.parent, "median", spec(median_automated_stopping_spec={}))
    for value in (0.8, 0.85, 0.9):
        trial = suggest(client, study, 1, f"done{value}")[0]
        for step in (1, 2):
            client.add_trial_measurement(
                request={"trial_name": trial.name, "measurement": measurement(value, step)}
            )
        client.complete_trial(request={"name": trial.name})
    behind, ahead = suggest(client, study, 1, "behind")[0], suggest(client, study, 1, "ahead")[0]
    for trial, value in ((behind, 0.1), (ahead, 0.95)):
        client.add_trial_measurement(
            request={"trial_name": trial.name, "measurement": measurement(value, 1)}
        )
    check = client.check_trial_early_stopping_state
    assert check(request={"trial_name": behind.name}).result(timeout=30).should_stop is True
    assert check(request={"trial_name": ahead.name}).result(timeout=30).should_stop is False
    assert client.get_trial(name=behind.name).state == Trial.State.STOPPING
    stopped = client.stop_trial(request={"name": ahead.name})
    assert stopped.state == Trial.State.STOPPING
    assert check(request={"trial_name": ahead.name}).result(timeout=30).should_stop is True


def test_a_requested_trial_is_handed_to_the_next_worker(rest, local_service) -> None:
    study = create(rest, local_service.parent, "requested")
    wanted = Trial(
        state=Trial.State.REQUESTED,
        parameters=[
            {"parameter_id": "learning_rate", "value": 0.5},
            {"parameter_id": "optimizer", "value": "adagrad"},
        ],
    )
    created = rest.create_trial(parent=study.name, trial=wanted)
    assert created.state == Trial.State.REQUESTED
    handed = suggest(rest, study, 2, "worker")
    assert handed[0].name == created.name and handed[0].state == Trial.State.ACTIVE
    assert handed[0].client_id == "worker" and handed[1].id == "2"


@pytest.mark.parametrize(
    ("path", "body", "words"),
    [
        ("studies", {"studySpec": {}}, "study.displayName is required"),
        ("studies", {"displayName": "x", "studySpec": {"metrics": []}}, "study.studySpec.metrics"),
        ("studies", {"displayName": "x", "bogus": 1}, "bogus"),
        ("studies:lookup", {}, "displayName is required"),
        ("{study}/trials:suggest", {"suggestionCount": 0}, "suggestionCount"),
        ("{study}/trials:suggest", {"suggestionCount": "many"}, "suggestionCount"),
        (
            "{study}/trials",
            {"parameters": [{"parameterId": "depth", "value": 3}]},
            "trial.parameters[0].parameterId",
        ),
        (
            "{study}/trials",
            {"parameters": [{"parameterId": "learning_rate", "value": 7}]},
            "trial.parameters[0].value",
        ),
        (
            "{study}/trials",
            {"finalMeasurement": {"metrics": [{"metricId": "pr-auc", "value": "NaN"}]}},
            "trial.finalMeasurement.metrics[0].value",
        ),
        ("{trial}:addTrialMeasurement", {}, "measurement is required"),
        (
            "{trial}:addTrialMeasurement",
            {"measurement": {"stepCount": "-1"}},
            "measurement.stepCount",
        ),
        (
            "{trial}:complete",
            {"finalMeasurement": {"metrics": [{"value": 1}]}},
            "finalMeasurement.metrics[0].metricId",
        ),
    ],
)
def test_malformed_requests_are_400_naming_the_field(
    local_service, rest, path, body, words
) -> None:
    study = create(rest, local_service.parent, f"malformed-{secrets.token_hex(4)}")
    trial = suggest(rest, study, 1)[0]
    target = path.format(study=study.name, trial=trial.name)
    if not target.startswith("projects/"):
        target = f"{local_service.parent}/{target}"
    response = local_service.session().post(f"{local_service.url}/v1/{target}", json=body)
    assert response.status_code == 400, response.text
    assert words in response.json()["error"]["message"]


def test_200000_categorical_values_are_a_400_naming_the_field(local_service) -> None:
    """Categorical values are capped as discrete ones are (the check was quadratic, unbounded)."""
    study = Study(display_name="wide", study_spec=spec())
    body = Study.to_dict(study)
    body["study_spec"]["parameters"][1]["categorical_value_spec"]["values"] = [
        f"c{i}" for i in range(200_000)
    ]
    response = local_service.session().post(
        f"{local_service.url}/v1/{local_service.parent}/studies", json=body
    )
    assert response.status_code == 400, response.text
    message = response.json()["error"]["message"]
    assert "studySpec.parameters[1].categoricalValueSpec.values" in message
    assert "at most 1000 values, got 200000" in message


def test_unknown_names_are_404(local_service, rest) -> None:
    parent = local_service.parent
    with pytest.raises(exceptions.NotFound):
        rest.get_study(name=f"{parent}/studies/404")
    with pytest.raises(exceptions.NotFound):
        rest.lookup_study(request={"parent": parent, "display_name": "nobody"})
    study = create(rest, parent, "names")
    for trial in ("404", "x", "1" * 30):
        with pytest.raises(exceptions.NotFound):
            rest.get_trial(name=f"{study.name}/trials/{trial}")


def test_studies_and_trials_survive_a_restart(tmp_path) -> None:
    service = LocalService(tmp_path / "state").start()
    try:
        client = rest_client(service)
        study = create(client, service.parent, "kept")
        first = suggest(client, study, 2)
        client.complete_trial(request={"name": first[0].name, "final_measurement": measurement(1)})
    finally:
        service.stop()
    service = LocalService(tmp_path / "state").start()
    try:
        client = rest_client(service)
        assert client.get_study(name=study.name) == study
        kept = client.list_trials(parent=study.name).trials
        assert [t.state for t in kept] == [Trial.State.SUCCEEDED, Trial.State.ACTIVE]
        assert [t.id for t in suggest(client, study, 2)] == ["2", "3"]  # no ID reused
        assert not math.isnan(kept[0].final_measurement.metrics[0].value)
    finally:
        service.stop()
