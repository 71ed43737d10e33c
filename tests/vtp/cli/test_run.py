"""`vtp run`: the train and tune pipelines end to end on this machine (the README's main job)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from google.cloud import aiplatform_v1

from tests.fixtures import LocalService
from vtp.trainer.export import load_model
from vtp.trainer.tasks import load_task

REPO = Path(__file__).resolve().parents[3]
State = aiplatform_v1.JobState


def vtp_run(*args: str) -> subprocess.CompletedProcess[str]:
    """`vtp run ARGS` as a user types it."""
    return subprocess.run(
        [sys.executable, "-m", "vtp", "run", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )


def summary_value(stdout: str, pattern: str) -> str:
    """A value from the run's closing summary (after the task logs, which name outputs too)."""
    match = re.search(pattern, stdout[stdout.rindex("\nPipeline ") :])
    assert match, f"{pattern!r} not in the summary:\n{stdout}"
    return match.group(1)


@pytest.mark.slow
def test_train_pipeline_runs_ddp_job_evaluates_and_exports(tmp_path: Path) -> None:
    result = vtp_run("train", "--state-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert float(summary_value(result.stdout, r"metric_value (\d\.\d+), passed True")) >= 0.95
    exported = Path(summary_value(result.stdout, r"export-model:\n    model: \S+ \((\S+)\)"))
    model, config = load_model(exported)
    inputs, targets = load_task(config.task).build_datasets(config)[1].tensors
    with torch.no_grad():
        accuracy = (model.eval()(inputs).argmax(dim=1) == targets).float().mean().item()
    assert accuracy >= 0.95  # the exported model itself, not only the reported figure
    registered = summary_value(result.stdout, r"vertex_model: (\S+)")
    summary = result.stdout[result.stdout.index("Pipeline train SUCCEEDED") :]
    named = re.findall(r"gs://\S+ \((/\S+)\)", summary)
    assert len(named) >= 7 and all(Path(path).exists() for path in named), named
    assert f"gs://BUCKET/PATH is {tmp_path / 'gcs'}/BUCKET/PATH" in summary
    assert "tensorboard --logdir " in summary and "\x1b[" not in result.stdout
    service = LocalService(tmp_path).start()  # the run's state, served again for inspection
    try:
        (job,) = service.client().list_custom_jobs(parent=service.parent)
        models = aiplatform_v1.ModelServiceClient(
            transport="rest",
            client_options={"api_endpoint": service.url},
            credentials=service.credentials(),
        )
        model = models.get_model(name=registered)
    finally:
        service.stop()
    assert model.artifact_uri.startswith("gs://vtp-local/pipeline-root/")
    assert job.state == State.JOB_STATE_SUCCEEDED
    assert [pool.replica_count for pool in job.job_spec.worker_pool_specs] == [1, 1]


@pytest.mark.slow
def test_tune_pipeline_runs_trials_two_at_a_time(tmp_path: Path) -> None:
    result = vtp_run("tune", "--state-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "best_parameters {" in result.stdout
    assert re.search(
        r"trial 1 (SUCCEEDED|INFEASIBLE): \w+=\S+, \w+=\S+ -> accuracy \d", result.stdout
    )
    service = LocalService(tmp_path).start()
    try:
        (tuning,) = service.client().list_hyperparameter_tuning_jobs(parent=service.parent)
    finally:
        service.stop()
    trials = list(tuning.trials)
    assert len(trials) >= 4 and tuning.parallel_trial_count == 2
    spans = [(t.start_time.timestamp(), t.end_time.timestamp()) for t in trials]
    overlap = max(sum(start <= at < end for start, end in spans) for at, _ in spans)
    assert overlap == 2, spans


def test_failed_run_exits_nonzero_with_summary(tmp_path: Path) -> None:
    result = vtp_run(
        "train", "--state-dir", str(tmp_path), "--param", 'trainer_args=["--no_such_flag=1"]'
    )
    assert result.returncode == 1
    assert "Pipeline train FAILED" in result.stdout
    # The replica's own words, streamed just before the summary, which does not repeat them.
    streamed, summary = result.stdout.split("Pipeline train FAILED")
    assert "unrecognized arguments: --no_such_flag=1" in streamed[-2000:], streamed[-2000:]
    assert "unrecognized arguments" not in summary
    assert summary.splitlines()[-1].startswith("  error: task custom-job failed: ")
    assert "\x1b[" not in result.stdout
    assert "Traceback" not in result.stdout + result.stderr  # frames only with --debug


@pytest.mark.slow
def test_a_new_threshold_reruns_only_the_evaluation_and_what_follows(tmp_path: Path) -> None:
    def run(threshold: str) -> str:
        result = vtp_run(
            "train", "--state-dir", str(tmp_path), "--param", "threshold=" + threshold,
            "--param", 'trainer_args=["--epochs=2"]',
        )  # fmt: skip
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        return result.stdout[result.stdout.rindex("\nPipeline train SUCCEEDED") :]

    run("0.0")
    summary = run("0.01")
    tasks = dict(re.findall(r"^  ([\w-]+):(.*)$", summary, re.MULTILINE))
    assert {name for name, status in tasks.items() if status.strip() == "cached"} == {
        "with-task",
        "custom-job",
    }, summary
    assert {"evaluate-checkpoints", "export-model", "upload-model"} <= tasks.keys(), summary
    service = LocalService(tmp_path).start()
    try:
        jobs = service.client().list_custom_jobs(parent=service.parent)
        models = aiplatform_v1.ModelServiceClient(
            transport="rest",
            client_options={"api_endpoint": service.url},
            credentials=service.credentials(),
        ).list_models(parent=service.parent)
    finally:
        service.stop()
    assert len(list(jobs)) == 1  # the second run trained nothing
    assert len(list(models)) == 2  # and registered the model it exported again
