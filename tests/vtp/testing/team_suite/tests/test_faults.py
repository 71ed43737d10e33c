"""Faults where Vertex has them, as the team's suite arms them: a job that fails once its
replica has logged, a tuning trial that fails (and counts), an OOM, a stockout, the second job,
and the job a pipeline's task creates."""

import pytest
import team_jobs
import team_pipeline
from google.cloud import aiplatform
from google.cloud.aiplatform import hyperparameter_tuning as hpt

STOCKOUT = (
    "Resources are insufficient in region: us-central1. Please try a different region. "
    "If you use K80, please consider using P100 or V100 instead."
)
# A trial reports its score; it sleeps a moment so that a fault meets it still running.
TRIAL = (
    "import time, hypertune; print('trial', 'up', flush=True); time.sleep(0.5); "
    "hypertune.HyperTune().report_hyperparameter_tuning_metric("
    "hyperparameter_metric_tag='score', metric_value=0.5)"
)


def test_a_job_fails_after_its_replica_logged(local_vertex):
    local_vertex.fail_next_job()
    job = team_jobs.training_job(epochs=5, output_dir=f"{local_vertex.staging_bucket}/fail")
    with pytest.raises(RuntimeError):
        job.run()
    [failed] = local_vertex.jobs()
    assert failed.state.name == "JOB_STATE_FAILED" and failed.start_time
    assert failed.error.message.startswith(
        "The replica workerpool0-0 exited with a non-zero status of 1. Termination reason: Error."
    ), failed.error.message
    logs = local_vertex.logs(failed)
    assert "epoch 0 loss" in logs and "[vtp local] fault: workerpool0-0" in logs, logs


def test_the_second_job_fails(local_vertex):
    local_vertex.fail_next_job(nth=2)
    team_jobs.training_job(epochs=2, output_dir=f"{local_vertex.staging_bucket}/one").run()
    with pytest.raises(RuntimeError):
        team_jobs.training_job(epochs=2, output_dir=f"{local_vertex.staging_bucket}/two").run()
    assert local_vertex.job_states() == ["JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"]


def test_a_job_runs_out_of_memory(local_vertex):
    local_vertex.oom_next_job()
    with pytest.raises(RuntimeError):
        team_jobs.training_job(epochs=5, output_dir=f"{local_vertex.staging_bucket}/oom").run()
    [failed] = local_vertex.jobs()
    assert failed.error.message.startswith(
        "The replica workerpool0-0 ran out of memory and exited with a non-zero status of 137."
    ), failed.error.message
    assert "epoch 0 loss" in local_vertex.logs(failed)


def test_a_failed_trial_counts_in_its_study(local_vertex):
    local_vertex.fail_next_trial(nth=2)
    pool = {**team_pipeline.TRAINER_POOL}
    pool["container_spec"] = {"image_uri": team_jobs.IMAGE, "command": ["python", "-c", TRIAL]}
    study = aiplatform.HyperparameterTuningJob(
        display_name="team-study",
        custom_job=aiplatform.CustomJob(display_name="team-trial", worker_pool_specs=[pool]),
        metric_spec={"score": "maximize"},
        parameter_spec={"x": hpt.DoubleParameterSpec(min=0, max=1, scale="linear")},
        max_trial_count=3,
        parallel_trial_count=1,
        max_failed_trial_count=2,
    )
    study.run()
    assert study.state.name == "JOB_STATE_SUCCEEDED"
    assert [t.state.name for t in study.trials] == ["SUCCEEDED", "INFEASIBLE", "SUCCEEDED"]
    assert "workerpool0-0 exited with a non-zero status of 1" in study.trials[1].infeasible_reason


def test_a_stockout_passes_after_two_attempts(local_vertex):
    local_vertex.stockout_next_job(attempts=2)
    job = team_jobs.training_job(epochs=2, output_dir=f"{local_vertex.staging_bucket}/late")
    job.run()
    assert local_vertex.job_states() == ["JOB_STATE_SUCCEEDED"]
    logs = local_vertex.logs(job)
    assert logs.count(STOCKOUT) == 2 and "attempt 3 got the machines" in logs, logs
    assert "epoch 1 loss" in logs


def test_a_lasting_stockout_fails_the_job_as_on_vertex(local_vertex):
    local_vertex.stockout_next_job()
    with pytest.raises(RuntimeError):
        team_jobs.training_job(epochs=2, output_dir=f"{local_vertex.staging_bucket}/none").run()
    [failed] = local_vertex.jobs()
    assert failed.state.name == "JOB_STATE_FAILED" and not failed.start_time
    assert (failed.error.code, failed.error.message) == (8, STOCKOUT)  # RESOURCE_EXHAUSTED
    assert "epoch" not in local_vertex.logs(failed)


def test_a_pipeline_tasks_job_fails(local_vertex, tmp_path):
    local_vertex.fail_next_job()
    run = aiplatform.PipelineJob(
        display_name="team-training",
        template_path=team_pipeline.compile_training_to(str(tmp_path / "training.yaml")),
        parameter_values={
            "project": local_vertex.project,
            "output_dir": f"{local_vertex.staging_bucket}/pipeline",
        },
    )
    with pytest.raises(RuntimeError):
        run.run()
    assert local_vertex.task_states(run.resource_name) == {"custom-training-job": "FAILED"}
    [failed] = local_vertex.jobs()
    assert failed.error.message.startswith("The replica workerpool0-0 exited with a non-zero")
    assert "epoch 0 loss" in local_vertex.logs(failed)
