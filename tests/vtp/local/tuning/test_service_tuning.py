"""hyperparameterTuningJobs in the local service, driven by the real aiplatform client.

Trials run `objective_task.py` as real processes: it reports `score` through cloudml-hypertune
and records the arguments and environment it was given.
"""

import json
from pathlib import Path

import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1 import HyperparameterTuningJob, JobState, Trial

from tests.fixtures import LocalService, wait_until
from vtp.vertex.states import JOB_ENDED

TASK = Path(__file__).with_name("objective_task.py")
X = {"parameterId": "x", "doubleValueSpec": {"minValue": 0.0, "maxValue": 1.0}}


def tuning_job(
    record: Path,
    parameters: list[dict],
    *task_args: str,
    max_trials: int,
    parallel: int = 1,
    algorithm: str = "RANDOM_SEARCH",
    **fields,
) -> HyperparameterTuningJob:
    study = {"metrics": [{"metricId": "score", "goal": "MAXIMIZE"}], "parameters": parameters}
    study.update(fields.pop("study", {}))
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {
            "imageUri": "python:3.11-slim",
            "command": ["python", str(TASK), "--record", str(record), *task_args],
        },
    }
    body = {
        "displayName": fields.pop("display_name", "tune"),
        "studySpec": {**study, "algorithm": algorithm},
        "maxTrialCount": max_trials,
        "parallelTrialCount": parallel,
        "trialJobSpec": {
            "workerPoolSpecs": [pool],
            "baseOutputDirectory": {"outputUriPrefix": "gs://bucket/hp"},
        },
        **fields,
    }
    return HyperparameterTuningJob.from_json(json.dumps(body))


def run(service: LocalService, job: HyperparameterTuningJob, timeout: float = 120):
    client = service.client()
    created = client.create_hyperparameter_tuning_job(
        parent=service.parent, hyperparameter_tuning_job=job
    )
    return wait_for(client, created.name, JOB_ENDED, timeout)


def wait_for(client, name: str, states, timeout: float = 120) -> HyperparameterTuningJob:
    def reached():
        job = client.get_hyperparameter_tuning_job(name=name)
        return job if job.state in states else None

    return wait_until(reached, timeout, f"{name} to reach {states}")


def params(trial: Trial) -> dict:
    return {p.parameter_id: p.value for p in trial.parameters}


def score(x: float, y: float = 0.0) -> float:
    return 1 - (x - 0.3) ** 2 - y**2


def created_with_trials(client, parent: str, job, trials: int):
    """Create the tuning `job` under `parent`; return it once it has `trials` trials."""
    created = client.create_hyperparameter_tuning_job(parent=parent, hyperparameter_tuning_job=job)
    wait_until(
        lambda: len(client.get_hyperparameter_tuning_job(name=created.name).trials) == trials,
        60,
        f"{trials} trials",
    )
    return created


def test_grid_search_runs_exactly_the_grid(local_service, tmp_path):
    grid = [
        {"parameterId": "x", "discreteValueSpec": {"values": [0.1, 0.3, 0.5]}},
        {"parameterId": "y", "integerValueSpec": {"minValue": 0, "maxValue": 1}},
    ]
    job = run(
        local_service,
        tuning_job(
            tmp_path, grid, max_trials=10, parallel=2, algorithm="GRID_SEARCH", display_name="grid"
        ),
    )
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    assert [params(t) for t in job.trials] == [
        {"x": x, "y": y} for x in (0.1, 0.3, 0.5) for y in (0.0, 1.0)
    ]
    for trial in job.trials:
        assert trial.state == Trial.State.SUCCEEDED
        [metric] = trial.final_measurement.metrics
        assert metric.metric_id == "score"
        assert metric.value == pytest.approx(score(**params(trial)))
        seen = json.loads((tmp_path / f"{trial.id}.json").read_text())
        p = params(trial)
        assert seen["argv"][-2:] == [f"--x={p['x']}", f"--y={int(p['y'])}"]
        assert seen["env"]["CLOUD_ML_TRIAL_ID"] == trial.id
        assert seen["env"]["AIP_MODEL_DIR"] == f"gs://bucket/hp/{trial.id}/model/"
    files = {
        json.loads(p.read_text())["env"]["CLOUD_ML_HP_METRIC_FILE"] for p in tmp_path.glob("*.json")
    }
    assert len(files) == 6  # one hypertune file per trial
    listed = local_service.client().list_custom_jobs(parent=local_service.parent)
    assert not [
        j for j in listed if j.display_name.startswith("grid-trial-")
    ]  # hidden, as on Vertex


def test_parallel_trials_never_exceed_the_limit(local_service, tmp_path):
    job = run(
        local_service,
        tuning_job(tmp_path, [X], "--steps=2", "--sleep=0.2", max_trials=5, parallel=2),
    )
    assert job.state == JobState.JOB_STATE_SUCCEEDED and len(job.trials) == 5
    spans = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    events = sorted([(s["start"], 1) for s in spans] + [(s["end"], -1) for s in spans])
    running, most = 0, 0
    for _, change in events:
        running += change
        most = max(most, running)
    assert most <= 2
    xs = [params(t)["x"] for t in job.trials]
    assert len(set(xs)) == 5 and all(0 <= x <= 1 for x in xs)


def test_failure_budget_fails_the_job(local_service, tmp_path):
    job = run(
        local_service,
        tuning_job(tmp_path, [X], "--fail-above=-1", max_trials=6, maxFailedTrialCount=2),
    )
    assert job.state == JobState.JOB_STATE_FAILED
    assert [t.state for t in job.trials] == [Trial.State.INFEASIBLE] * 2
    assert "exited with a non-zero status of 3" in job.trials[0].infeasible_reason
    assert "2 trials failed" in job.error.message and "maxFailedTrialCount" in job.error.message


def test_trial_that_reports_nothing_is_infeasible(local_service, tmp_path):
    job = run(local_service, tuning_job(tmp_path, [X], "--silent", max_trials=1))
    assert job.state == JobState.JOB_STATE_FAILED
    [trial] = job.trials
    assert trial.state == Trial.State.INFEASIBLE
    assert "reported no value of score" in trial.infeasible_reason


def test_median_rule_stops_the_trial_that_lags(local_service, tmp_path):
    xs = {"parameterId": "x", "discreteValueSpec": {"values": [0.25, 0.3, 0.35, 1.9]}}
    study = {"medianAutomatedStoppingSpec": {}}
    job = run(
        local_service,
        tuning_job(
            tmp_path,
            [xs],
            "--steps=20",
            "--sleep=0.5",
            "--slow-above=1",
            max_trials=4,
            algorithm="GRID_SEARCH",
            study=study,
        ),
    )
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    *good, lagging = job.trials
    assert all(len(t.measurements) == 20 for t in good)
    assert params(lagging) == {"x": 1.9}
    assert lagging.state == Trial.State.SUCCEEDED  # stopped early, with a final measurement
    assert 1 <= len(lagging.measurements) < 20
    assert lagging.final_measurement.metrics[0].value < 0
    custom = local_service.client().get_custom_job(name=lagging.custom_job)
    assert custom.state == JobState.JOB_STATE_CANCELLED


def test_cancel_stops_running_trials(local_service, tmp_path):
    client = local_service.client()
    job = tuning_job(tmp_path, [X], "--steps=100", "--sleep=0.2", max_trials=4, parallel=2)
    created = created_with_trials(client, local_service.parent, job, 2)
    client.cancel_hyperparameter_tuning_job(name=created.name)
    job = wait_for(client, created.name, JOB_ENDED)
    assert job.state == JobState.JOB_STATE_CANCELLED and job.error.code == 1
    assert [t.state for t in job.trials] == [Trial.State.INFEASIBLE] * 2
    for trial in job.trials:
        assert client.get_custom_job(name=trial.custom_job).state == JobState.JOB_STATE_CANCELLED
    with pytest.raises(exceptions.BadRequest):
        client.cancel_hyperparameter_tuning_job(name=created.name)


def test_delete_removes_the_job_and_its_trial_jobs(local_service, tmp_path):
    client = local_service.client()
    job = run(local_service, tuning_job(tmp_path, [X], max_trials=1, display_name="gone"))
    client.delete_hyperparameter_tuning_job(name=job.name).result(timeout=30)
    with pytest.raises(exceptions.NotFound):
        client.get_hyperparameter_tuning_job(name=job.name)
    with pytest.raises(exceptions.NotFound):
        client.get_custom_job(name=job.trials[0].custom_job)


def test_list_filters_by_display_name(local_service, tmp_path):
    client = local_service.client()
    run(local_service, tuning_job(tmp_path, [X], max_trials=1, display_name="listed-one"))
    request = {"parent": local_service.parent, "filter": 'display_name="listed-one"'}
    found = client.list_hyperparameter_tuning_jobs(request=request)
    assert [j.display_name for j in found] == ["listed-one"]


def test_create_rejects_an_invalid_job(local_service, tmp_path):
    client = local_service.client()
    job = tuning_job(tmp_path, [X], max_trials=2, parallel=3)
    with pytest.raises(exceptions.BadRequest, match="parallelTrialCount: 3 is above"):
        client.create_hyperparameter_tuning_job(
            parent=local_service.parent, hyperparameter_tuning_job=job
        )


@pytest.mark.slow
def test_a_restarted_service_finishes_the_job(tmp_path):
    service = LocalService(tmp_path / "state").start()
    try:
        client = service.client()
        job = tuning_job(tmp_path, [X], "--steps=5", "--sleep=0.2", max_trials=3)
        created = created_with_trials(client, service.parent, job, 2)
        before = client.get_hyperparameter_tuning_job(name=created.name)
        service.stop()
        service = LocalService(tmp_path / "state").start()
        job = wait_for(service.client(), created.name, JOB_ENDED)
    finally:
        service.stop()
    assert job.state == JobState.JOB_STATE_SUCCEEDED
    assert [t.id for t in job.trials] == ["1", "2", "3"]
    assert [params(t) for t in list(job.trials)[:2]] == [params(t) for t in before.trials]
    assert all(t.state == Trial.State.SUCCEEDED for t in job.trials)
