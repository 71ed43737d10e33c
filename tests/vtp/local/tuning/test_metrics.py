"""Measurements from the file the real cloudml-hypertune package writes."""

import hypertune
import pytest
from google.cloud.aiplatform_v1 import StudySpec

from vtp.local.tuning.metrics import (
    Measurement,
    final_measurement,
    merge,
    read_metric_file,
)


@pytest.fixture
def metric_file(tmp_path, monkeypatch):
    path = tmp_path / "hypertune" / "output.metrics"
    monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(path))
    monkeypatch.setenv("CLOUD_ML_TRIAL_ID", "3")
    return path


def test_reads_reports_at_their_steps(metric_file):
    tuner = hypertune.HyperTune()
    for step, value in ((1, 0.5), (2, 0.7), (3, 0.8)):
        tuner.report_hyperparameter_tuning_metric("accuracy", value, global_step=step)
    tuner.report_hyperparameter_tuning_metric("other", 9.0, global_step=3)
    measurements = read_metric_file(metric_file, ["accuracy"], start_time=0.0)
    assert [(m.step, m.metrics) for m in measurements] == [
        (1, {"accuracy": 0.5}),
        (2, {"accuracy": 0.7}),
        (3, {"accuracy": 0.8}),
    ]
    assert all(m.elapsed_seconds > 0 for m in measurements)


def test_metrics_reported_at_one_step_form_one_measurement(metric_file):
    tuner = hypertune.HyperTune()
    for step in (10, 20):
        tuner.report_hyperparameter_tuning_metric("accuracy", step / 100, global_step=step)
        tuner.report_hyperparameter_tuning_metric("loss", 1 - step / 100, global_step=step)
    measurements = read_metric_file(metric_file, ["accuracy", "loss"], start_time=0.0)
    assert [(m.step, m.metrics) for m in measurements] == [
        (10, {"accuracy": 0.1, "loss": 0.9}),
        (20, {"accuracy": 0.2, "loss": 0.8}),
    ]


def test_reports_without_a_step_stay_separate_measurements(metric_file):
    tuner = hypertune.HyperTune()
    for value in (0.1, 0.2, 0.3):
        tuner.report_hyperparameter_tuning_metric("accuracy", value)
    measurements = read_metric_file(metric_file, ["accuracy"], start_time=0.0)
    assert [(m.step, m.metrics["accuracy"]) for m in measurements] == [(0, 0.1), (0, 0.2), (0, 0.3)]


def test_missing_file_and_half_written_line(tmp_path):
    path = tmp_path / "output.metrics"
    assert read_metric_file(path, ["accuracy"], 0.0) == []
    path.write_text(
        '{"accuracy": "0.5", "global_step": "1", "timestamp": 12.5, "trial": "1"}\n'
        '{"accuracy": "0.6", "glob'
    )
    [only] = read_metric_file(path, ["accuracy"], start_time=10.0)
    assert (only.step, only.elapsed_seconds, only.metrics) == (1, 2.5, {"accuracy": 0.5})


def test_merge_keeps_measurements_that_scrolled_out():
    old = [Measurement(1, 1.0, {"a": 1.0}), Measurement(2, 2.0, {"a": 2.0})]
    new = [Measurement(2, 2.0, {"a": 2.0}), Measurement(3, 3.0, {"a": 3.0})]
    assert [m.step for m in merge(old, new)] == [1, 2, 3]


def spec(goal: str, selection: str) -> StudySpec:
    return StudySpec(
        metrics=[{"metric_id": "a", "goal": goal}], measurement_selection_type=selection
    )


def test_final_measurement_last_or_best():
    curve = [
        Measurement(1, 1.0, {"a": 3.0}),
        Measurement(2, 2.0, {"a": 5.0}),
        Measurement(3, 3.0, {"a": 4.0}),
        Measurement(4, 4.0, {"b": 0.0}),
    ]
    assert final_measurement(curve, spec("MAXIMIZE", "LAST_MEASUREMENT")).step == 3
    assert (
        final_measurement(curve, spec("MAXIMIZE", "MEASUREMENT_SELECTION_TYPE_UNSPECIFIED")).step
        == 3
    )
    assert final_measurement(curve, spec("MAXIMIZE", "BEST_MEASUREMENT")).step == 2
    assert final_measurement(curve, spec("MINIMIZE", "BEST_MEASUREMENT")).step == 1
    assert final_measurement(curve[3:], spec("MINIMIZE", "LAST_MEASUREMENT")) is None


def test_proto_round_trip():
    m = Measurement(7, 12.25, {"accuracy": 0.875})
    proto = m.to_proto()
    assert proto.step_count == 7 and proto.metrics[0].metric_id == "accuracy"
    assert Measurement.from_proto(proto) == m
