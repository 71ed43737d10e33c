"""The installed gcloud runs its documented tuning example (adapted to digits) locally."""

import re
import time

import pytest
import yaml

CONFIG = """
studySpec:
  metrics:
  - metricId: accuracy
    goal: MAXIMIZE
  parameters:
  - parameterId: learning_rate
    doubleValueSpec:
      minValue: 0.0001
      maxValue: 0.1
    scaleType: UNIT_LOG_SCALE
  - parameterId: batch_size
    discreteValueSpec:
      values: [32, 64, 128, 256]
  algorithm: ALGORITHM_UNSPECIFIED  # Bayesian optimization
maxTrialCount: 4
parallelTrialCount: 2
trialJobSpec:
  workerPoolSpecs:
  - machineSpec:
      machineType: n1-standard-8
    replicaCount: 1
    containerSpec:
      imageUri: us-docker.pkg.dev/my-project/vtp/trainer:latest
      args: [--epochs=1, --max_steps=20, --eval_interval=10, --checkpoint_interval=0]
      env: [{name: OMP_NUM_THREADS, value: "1"}]
  baseOutputDirectory:
    outputUriPrefix: gs://my-bucket/digits-hp
"""
DONE = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")


@pytest.mark.slow
def test_gcloud_tuning_job_runs_the_digits_trainer(local_service, gcloud, tmp_path):
    config = tmp_path / "hp_config.yaml"
    config.write_text(CONFIG)
    created = gcloud(
        "ai", "hp-tuning-jobs", "create", "--display-name=digits-hp", f"--config={config}"
    )
    job_id = re.search(r"Hyperparameter tuning job \[(\d+)\]", created.stderr).group(1)
    deadline = time.monotonic() + 300
    while (job := gcloud.json("ai", "hp-tuning-jobs", "describe", job_id))["state"] not in DONE:
        assert time.monotonic() < deadline, job
        time.sleep(1)
    assert job["state"] == "JOB_STATE_SUCCEEDED", job.get("error")
    trials = job["trials"]
    assert [t["id"] for t in trials] == ["1", "2", "3", "4"]
    for trial in trials:
        assert trial["state"] == "SUCCEEDED"
        values = {p["parameterId"]: p["value"] for p in trial["parameters"]}
        assert 1e-4 <= values["learning_rate"] <= 0.1
        assert values["batch_size"] in (32, 64, 128, 256)
        [metric] = trial["finalMeasurement"]["metrics"]
        assert metric["metricId"] == "accuracy" and 0 < metric["value"] <= 1
        steps = [int(m["stepCount"]) for m in trial["measurements"]]
        assert steps and steps == sorted(set(steps))  # every evaluation, in step order
        assert trial["finalMeasurement"] == trial["measurements"][-1]  # LAST_MEASUREMENT
        model = local_service.gcs_root / "my-bucket" / "digits-hp" / trial["id"] / "model"
        assert any(model.iterdir()), f"trial {trial['id']} wrote no model under {model}"
    listed = yaml.safe_load(gcloud("ai", "hp-tuning-jobs", "list", "--format=yaml").stdout)
    assert listed["name"].endswith(job_id)
