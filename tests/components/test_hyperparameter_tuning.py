"""The `hyperparameter_tuning` component body against the local service, and best-trial picking."""

import json
import re
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1
from kfp.dsl import Artifact, Model

from tests.fixtures import PROJECT, REGION, LocalService
from vtp.components.hyperparameter_tuning import hyperparameter_tuning
from vtp.images import COMPONENT_IMAGE
from vtp.launchers import custom_job as custom_job_task
from vtp.launchers.tuning import best_trial, build_tuning_job
from vtp.vertex.protodict import SpecError

OBJECTIVE = str(Path(__file__).parents[1] / "vtp" / "local" / "tuning" / "objective_task.py")
"""A trial that reports `score` = 1 - (x - 0.3)^2 through cloudml-hypertune."""
INT_FLAGS_REPLICA = Path(__file__).with_name("int_flags_replica.py")
"""A replica whose argparse says `type=int` for --hidden_size and `type=float` for --x."""
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


def test_best_parameters_take_their_types_from_the_study_spec() -> None:
    """Vertex returns every number as a double: 64.0 of an INTEGER is 64, 1.0 of a DOUBLE stays."""
    params = {"hidden_size": 64.0, "batch": 32.0, "dropout": 0.5, "lr": 1.0, "opt": "adam"}
    job = aiplatform_v1.HyperparameterTuningJob.from_json(
        json.dumps(
            {
                "studySpec": {
                    "metrics": [{"metricId": "score", "goal": "MAXIMIZE"}],
                    "parameters": [
                        {"parameterId": "hidden_size", "integerValueSpec": {"minValue": 8}},
                        {"parameterId": "batch", "discreteValueSpec": {"values": [32, 64]}},
                        {"parameterId": "dropout", "discreteValueSpec": {"values": [0, 0.5]}},
                        {"parameterId": "lr", "doubleValueSpec": {"maxValue": 2}},
                        {"parameterId": "opt", "categoricalValueSpec": {"values": ["adam"]}},
                    ],
                },
                "trials": [
                    {
                        "id": "1",
                        "state": "SUCCEEDED",
                        "parameters": [{"parameterId": k, "value": v} for k, v in params.items()],
                        "finalMeasurement": {"metrics": [{"metricId": "score", "value": 1}]},
                    }
                ],
            }
        )
    )
    best = best_trial(job).parameters
    assert best == {"hidden_size": 64, "batch": 32, "dropout": 0.5, "lr": 1.0, "opt": "adam"}
    assert {k: type(v) for k, v in best.items()} == {
        "hidden_size": int, "batch": int, "dropout": float, "lr": float, "opt": str,
    }  # fmt: skip


def run_study(
    service: LocalService, tmp_path: Path, study_spec: dict, script: str, **inputs: object
) -> tuple[object, Artifact, Model]:
    """The component body, in this process with the service's environment, on a study whose
    one-replica trials run `script --record <tmp_path>/record`; its outputs, trials artifact
    and best model."""
    command = ["python", script, "--record", str(tmp_path / "record")]
    (tmp_path / "record").mkdir()
    trials, best_model = Artifact(uri=str(tmp_path / "trials.json")), Model(uri="")
    pool = {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 1}
    pool["containerSpec"] = {"imageUri": "python:3.11-slim", "command": command}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in service.env().items():
            patch.setenv(key, value)
        outputs = hyperparameter_tuning.python_func(
            project=PROJECT,
            location=REGION,
            study_spec=study_spec,
            job_spec={"workerPoolSpecs": [pool]},
            parallel_trial_count=2,
            poll_interval_seconds=0.1,
            task_name="tune",
            trials=trials,
            best_model=best_model,
            gcp_resources=str(tmp_path / "gcp_resources"),
            **inputs,
        )
    return outputs, trials, best_model


def test_an_integer_parameter_is_an_int_from_the_replicas_argv_to_the_outputs(
    local_service: LocalService, tmp_path: Path
) -> None:
    study = {  # hidden_size: type=int in the replica's argparse
        "metrics": [{"metricId": "score", "goal": "MAXIMIZE"}],
        "parameters": [
            {"parameterId": "hidden_size", "integerValueSpec": {"minValue": 32, "maxValue": 64}},
            {"parameterId": "x", "doubleValueSpec": {"minValue": 0.1, "maxValue": 0.9}},
        ],
        "algorithm": "RANDOM_SEARCH",
    }
    outputs, trials, best_model = run_study(
        local_service, tmp_path, study, str(INT_FLAGS_REPLICA), display_name="int-tuning",
        output_root="gs://bucket/int", pipeline_run="run-int", max_trial_count=2,
    )  # fmt: skip
    best = outputs.best_parameters
    assert type(best["hidden_size"]) is int and 32 <= best["hidden_size"] <= 64
    assert type(best["x"]) is float
    assert best_model.metadata["hidden_size"] == best["hidden_size"]
    # The trial ran with --hidden_size=N (an int flag), and the output is what it ran with.
    seen = json.loads((tmp_path / "record" / f"{trials.metadata['best_trial']}.json").read_text())
    assert seen["parsed"] == {
        "epochs": 0,
        "hidden_size": best["hidden_size"],
        "lr": 0.0,
        "x": best["x"],
    }
    assert json.loads(json.dumps(best)) == best  # what KFP writes out reads back as ints


def test_no_succeeded_trial_is_an_error() -> None:
    job = aiplatform_v1.HyperparameterTuningJob(
        name="projects/p/locations/l/hyperparameterTuningJobs/1",
        study_spec={"metrics": [{"metric_id": "score", "goal": "MAXIMIZE"}]},
    )
    with pytest.raises(RuntimeError, match="no trial succeeded with a final score"):
        best_trial(job)


def test_runs_the_study_and_outputs_the_best_trial(
    local_service: LocalService, tmp_path: Path
) -> None:
    study = {
        "metrics": [{"metricId": "score", "goal": "MAXIMIZE"}],
        "parameters": [{"parameterId": "x", "discreteValueSpec": {"values": [0.1, 0.3, 0.6]}}],
        "algorithm": "GRID_SEARCH",
    }
    outputs, trials, best_model = run_study(
        local_service, tmp_path, study, OBJECTIVE, display_name="component-tuning",
        output_root="gs://bucket/tuning", pipeline_run="run-1", max_trial_count=3,
    )  # fmt: skip
    assert outputs.best_parameters == {"x": 0.3}
    assert outputs.best_metric == pytest.approx(1.0)
    listed = json.loads(Path(trials.path).read_text())
    assert sorted(t["parameters"][0]["value"] for t in listed) == [0.1, 0.3, 0.6]
    best_id = trials.metadata["best_trial"]
    assert re.fullmatch(
        rf"gs://bucket/tuning/run-1/tune-[0-9a-f]{{8}}/{best_id}/model", best_model.uri
    )
    resource = json.loads((tmp_path / "gcp_resources").read_text())["resources"][0]
    assert resource["resourceType"] == "HyperparameterTuningJob"


def test_a_study_on_loss_runs_the_trainer_reporting_loss(
    local_service: LocalService, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in local_service.env().items():
        monkeypatch.setenv(key, value)
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {
            "imageUri": COMPONENT_IMAGE,
            "env": [{"name": "OMP_NUM_THREADS", "value": "1"}],
        },
    }
    outputs = hyperparameter_tuning.python_func(
        project=PROJECT,
        location=REGION,
        display_name="loss-study",
        output_root="gs://bucket/loss",
        study_spec=study_on("loss", "MINIMIZE"),
        job_spec={"workerPoolSpecs": [pool]},
        args=["--epochs=1", "--max_steps=10", "--eval_interval=5", "--checkpoint_interval=0"],
        max_trial_count=1,
        parallel_trial_count=1,
        poll_interval_seconds=0.1,
        pipeline_run="run-loss",
        task_name="tune",
        trials=Artifact(uri=str(tmp_path / "trials.json")),
        best_model=Model(uri=""),
        gcp_resources=str(tmp_path / "gcp_resources"),
    )
    # Before the study told the trainer, it reported accuracy and the trial was INFEASIBLE.
    assert outputs.best_metric > 0
    (trial,) = json.loads((tmp_path / "trials.json").read_text())
    assert trial["state"] == "SUCCEEDED"
    assert trial["finalMeasurement"]["metrics"][0]["metricId"] == "loss"


def test_an_output_root_outside_cloud_storage_is_named_before_submitting(tmp_path: Path) -> None:
    # No service in the environment: a submission would fail on credentials, not on the root.
    with pytest.raises(SpecError, match=r"^output_root: 'tuning' is not a Cloud Storage URI"):
        hyperparameter_tuning.python_func(
            project=PROJECT,
            location=REGION,
            display_name="bad-root",
            output_root="tuning",
            study_spec=study_on("score"),
            worker_pool_specs=["machine-type=n1-standard-4,container-image-uri=python:3.11-slim"],
            pipeline_run="run-1",
            task_name="tune",
            trials=Artifact(uri=str(tmp_path / "trials.json")),
            best_model=Model(uri=""),
            gcp_resources=str(tmp_path / "gcp_resources"),
        )
    assert not (tmp_path / "gcp_resources").exists()


def study_on(metric: str, goal: str = "MAXIMIZE") -> dict:
    """A one-parameter study on `metric`."""
    return {
        "metrics": [{"metricId": metric, "goal": goal}],
        "parameters": [
            {"parameterId": "learning_rate", "doubleValueSpec": {"minValue": 0.01, "maxValue": 0.1}}
        ],
    }


def trial_args(metric: str, container: dict, *args: str) -> list[str]:
    """The args a trial's container gets in a study on `metric` (after `args`)."""
    pool = {"machineSpec": {"machineType": "n1-standard-4"}, "containerSpec": container}
    trial = custom_job_task.build_job("trial", [], {"workerPoolSpecs": [pool]}, list(args), {})
    job = build_tuning_job("tune", study_on(metric), 2, 1, 0, trial)
    return list(job.trial_job_spec.worker_pool_specs[0].container_spec.args)


TRAINER = {"imageUri": COMPONENT_IMAGE}
"""The project's image without a command: it runs `python -m vtp.trainer`."""


@pytest.mark.parametrize("metric", ["accuracy", "loss"])
def test_the_trainer_is_told_the_study_metric(metric: str) -> None:
    assert trial_args(metric, TRAINER, "--epochs=2") == [
        "--epochs=2",
        f"--hypertune_metric={metric}",
    ]


@pytest.mark.parametrize("args", [["--hypertune_metric=loss"], ["--hypertune_metric", "loss"]])
def test_a_metric_flag_that_agrees_is_left_alone(args: list[str]) -> None:
    assert trial_args("loss", TRAINER, *args) == args


def test_a_metric_flag_that_disagrees_fails_before_submitting() -> None:
    with pytest.raises(SpecError, match=r"^args: --hypertune_metric=accuracy .* is 'loss'"):
        trial_args("loss", TRAINER, "--hypertune_metric=loss", "--hypertune_metric=accuracy")


def test_a_metric_the_trainer_cannot_report_fails_before_submitting() -> None:
    with pytest.raises(SpecError, match=r"^study_spec.metrics\[0\].metricId: 'f1' is not a"):
        trial_args("f1", TRAINER)


@pytest.mark.parametrize(
    "container",
    [
        {"imageUri": "python:3.11-slim", "command": ["python", "objective.py"]},
        {"imageUri": COMPONENT_IMAGE, "command": ["python", "my_trainer.py"]},
    ],
)
def test_other_programs_keep_their_args(container: dict) -> None:
    assert trial_args("f1", container, "--epochs=2") == ["--epochs=2"]
