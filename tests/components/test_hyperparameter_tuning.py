"""The `hyperparameter_tuning` component body against the local service, and best-trial picking."""

import json
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1
from kfp.dsl import Artifact, Model

from components.hyperparameter_tuning import hyperparameter_tuning
from components.vertex.tuning_task import best_trial
from tests.fixtures import PROJECT, REGION, LocalService

OBJECTIVE = str(Path(__file__).parents[1] / "localvertex" / "tuning" / "objective_task.py")
"""A trial that reports `score` = 1 - (x - 0.3)^2 through cloudml-hypertune."""
Trial = aiplatform_v1.Trial


def trial(trial_id: str, x: float, score: float | None, state: Trial.State) -> dict:
    """A trial as the REST API returns it."""
    final = {"metrics": [{"metricId": "score", "value": score}]} if score is not None else {}
    return {
        "id": trial_id,
        "state": state.name,
        "parameters": [{"parameterId": "x", "value": x}],
        "finalMeasurement": final,
    }


@pytest.mark.parametrize(("goal", "expected"), [("MAXIMIZE", "2"), ("MINIMIZE", "1")])
def test_best_trial_follows_the_goal_and_skips_unfinished(goal: str, expected: str) -> None:
    job = aiplatform_v1.HyperparameterTuningJob.from_json(
        json.dumps(
            {
                "studySpec": {"metrics": [{"metricId": "score", "goal": goal}]},
                "trials": [
                    trial("1", 0.1, 0.2, Trial.State.SUCCEEDED),
                    trial("2", 0.3, 0.9, Trial.State.SUCCEEDED),
                    trial("3", 0.5, 0.95, Trial.State.STOPPING),
                    trial("4", 0.7, 0.01, Trial.State.INFEASIBLE),
                ],
            }
        )
    )
    best = best_trial(job)
    assert best.trial_id == expected
    assert best.parameters == {"x": {"1": 0.1, "2": 0.3}[expected]}


def test_no_succeeded_trial_is_an_error() -> None:
    job = aiplatform_v1.HyperparameterTuningJob(
        name="projects/p/locations/l/hyperparameterTuningJobs/1",
        study_spec={"metrics": [{"metric_id": "score", "goal": "MAXIMIZE"}]},
    )
    with pytest.raises(RuntimeError, match="no trial succeeded with a final score"):
        best_trial(job)


def test_runs_the_study_and_outputs_the_best_trial(
    local_service: LocalService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in local_service.env().items():
        monkeypatch.setenv(key, value)
    record = tmp_path / "record"
    record.mkdir()
    trials, best_model = Artifact(uri=str(tmp_path / "trials.json")), Model(uri="")
    outputs = hyperparameter_tuning.python_func(
        project=PROJECT,
        location=REGION,
        display_name="component-tuning",
        output_root="gs://bucket/tuning",
        study_spec={
            "metrics": [{"metricId": "score", "goal": "MAXIMIZE"}],
            "parameters": [{"parameterId": "x", "discreteValueSpec": {"values": [0.1, 0.3, 0.6]}}],
            "algorithm": "GRID_SEARCH",
        },
        job_spec={
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": 1,
                    "containerSpec": {
                        "imageUri": "python:3.11-slim",
                        "command": ["python", OBJECTIVE, "--record", str(record)],
                    },
                }
            ]
        },
        max_trial_count=3,
        parallel_trial_count=2,
        poll_interval_seconds=0.1,
        pipeline_run="run-1",
        task_name="tune",
        trials=trials,
        best_model=best_model,
        gcp_resources=str(tmp_path / "gcp_resources"),
    )
    assert outputs.best_parameters == {"x": 0.3}
    assert outputs.best_metric == pytest.approx(1.0)
    listed = json.loads(Path(trials.path).read_text())
    assert sorted(t["parameters"][0]["value"] for t in listed) == [0.1, 0.3, 0.6]
    best_id = trials.metadata["best_trial"]
    assert best_model.uri == f"gs://bucket/tuning/run-1/tune/{best_id}/model"
    resource = json.loads((tmp_path / "gcp_resources").read_text())["resources"][0]
    assert resource["resourceType"] == "HyperparameterTuningJob"
