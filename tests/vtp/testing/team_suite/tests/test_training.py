import json
import subprocess

import team_jobs


def test_training_job_writes_its_model(local_vertex):
    output = f"{local_vertex.staging_bucket}/runs/1"
    job = team_jobs.training_job(epochs=20, output_dir=output)
    job.run()
    assert local_vertex.job_states() == ["JOB_STATE_SUCCEEDED"]
    assert "epoch 19 loss" in local_vertex.logs(job)
    model = json.loads(local_vertex.read(f"{output}/model/model.json"))
    assert abs(model["w"] - 3) < 0.1
    copied = subprocess.run(
        ["gsutil", "cat", f"{output}/model/model.json"], capture_output=True, text=True, check=True
    )
    assert json.loads(copied.stdout) == model
    listed = subprocess.run(
        ["gcloud", "ai", "custom-jobs", "list", "--format=value(displayName,state)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert listed.stdout.split() == ["team-train", "JOB_STATE_SUCCEEDED"]


def test_a_failed_attempt_is_retried(local_vertex):
    local_vertex.fail_next_job()
    job = team_jobs.train_with_retry(epochs=2, output_dir=f"{local_vertex.staging_bucket}/retry")
    assert local_vertex.job_states() == ["JOB_STATE_FAILED", "JOB_STATE_SUCCEEDED"]
    assert job.resource_name == local_vertex.jobs()[-1].name
