"""The train and tune pipelines' `task` parameter, from a team's folder outside this repository:
the trials and the final training of `vtp run tune --param task=my_task` both train the team's
task, and a task that cannot be imported there, or a `--task` in the args that names another
module, is refused in one line before any job exists."""

import json
import re
import subprocess
from pathlib import Path

import pytest
from google.cloud.aiplatform_v1 import CustomJob, HyperparameterTuningJob

from tests.fixtures import REPO, LocalService, team_folder
from tests.trainer.test_own_task import MY_TASK as OWN_TASK
from tests.vtp.cli.run_helpers import vtp
from vtp.vertex.task_flags import named_tasks, task_args

MY_TASK = '''
"""The team's task: the digits data with a smaller model and labels of its own."""
from torch import nn

from vtp.trainer.tasks.digits import build_datasets  # the task's data sets

MARKER = "team-digits"


def labels(config):
    return [f"{MARKER}-{digit}" for digit in range(10)]


def build_model(config):
    width = config.hidden_size
    return nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, 10))
'''


def vtp_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`vtp run ARGS` typed in `folder`."""
    return vtp(folder, "run", *args, timeout=900)


def tune(
    team: Path, state: Path, *params: str
) -> tuple[dict, HyperparameterTuningJob, list[CustomJob]]:
    """`vtp run tune --param task=my_task PARAMS` in `team`, which must succeed: the exported
    model's config.json, and the tuning job and custom jobs the run's state (served again)
    holds."""
    result = vtp_run(team, "tune", "--state-dir", str(state), "--param", "task=my_task", *params)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = result.stdout[result.stdout.rindex("\nPipeline tune SUCCEEDED") :]
    exported = re.search(r"export-model:\n    model: \S+ \((\S+)\)", summary)
    assert exported, summary
    config = json.loads((Path(exported.group(1)) / "config.json").read_text())
    service = LocalService(state).start()
    try:
        (tuning,) = service.client().list_hyperparameter_tuning_jobs(parent=service.parent)
        jobs = list(service.client().list_custom_jobs(parent=service.parent))
    finally:
        service.stop()
    return config, tuning, jobs


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """The team's folder, outside the repository, with its task module."""
    return team_folder(tmp_path, MY_TASK)


def refused(result: subprocess.CompletedProcess[str], folder: Path) -> str:
    """The one line a run refused before it started: exit 2, and no state directory made."""
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("vtp: error: "), result.stderr
    assert not (folder / ".vtp").exists()  # no service, no job
    return lines[0]


def test_task_args_put_the_task_first_and_refuse_another() -> None:
    assert task_args("my_task", ["--epochs=1"]) == ["--task=my_task", "--epochs=1"]
    assert task_args("my_task", ["--task=my_task"]) == ["--task=my_task", "--task=my_task"]
    assert named_tasks(["--task", "a", "--epochs=1", "--task=b"]) == ["a", "b"]
    with pytest.raises(ValueError, match="--task=other in the trainer's args contradicts"):
        task_args("my_task", ["--task=other"])


def test_the_task_step_runs_in_a_fresh_interpreter_too(tmp_path: Path) -> None:
    """With forking off, the step runs under kfp's runtime alone (`_KFP_RUNTIME`), where no
    module with `@dsl.component` decorators imports: the step must not need one."""
    result = vtp(
        REPO, "run", "pipelines/stages.py:with_task", "--param", "task=vtp.trainer.tasks.digits",
        "--param", 'args=["--epochs=1"]', "--state-dir", str(tmp_path), VTP_TASK_FORK="0",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "with-task:\n    Output [--task=vtp.trainer.tasks.digits, --epochs=1]" in result.stdout


def test_a_task_that_cannot_be_imported_is_refused_before_any_job(team: Path) -> None:
    line = refused(vtp_run(team, "train", "--param", "task=no_such_module"), team)
    assert "--param task=no_such_module" in line
    line = refused(vtp_run(team, "tune", "--param", "task=vtp.trainer.tasks.no_such_task"), team)
    assert "--param task=vtp.trainer.tasks.no_such_task" in line


def test_a_contradicting_task_in_the_args_is_refused(team: Path) -> None:
    args = 'trainer_args=["--epochs=1", "--task=vtp.trainer.tasks.digits"]'
    line = refused(vtp_run(team, "train", "--param", "task=my_task", "--param", args), team)
    contradiction = "--task=vtp.trainer.tasks.digits contradicts --param task=my_task"
    assert f"--param trainer_args: {contradiction}" in line
    # Left at its default, the task parameter is the built-in task: the args cannot override it.
    line = refused(vtp_run(team, "tune", "--param", 'trial_args=["--task=my_task"]'), team)
    assert "--param trial_args: --task=my_task contradicts --param task=vtp.trainer.tasks." in line
    assert "--param task=my_task" in line


@pytest.mark.slow
def test_tune_trains_the_teams_task_in_the_trials_and_the_final_job(
    team: Path, tmp_path: Path
) -> None:
    config, tuning, jobs = tune(
        team, tmp_path / "state",
        "--param", "max_trial_count=2", "--param", "parallel_trial_count=1",
        "--param", 'trial_args=["--epochs=1"]', "--param", 'trainer_args=["--epochs=1"]',
        "--param", "threshold=0.0",
    )  # fmt: skip
    assert config["task"] == "my_task"
    (trial_pool,) = tuning.trial_job_spec.worker_pool_specs
    assert list(trial_pool.container_spec.args)[:2] == ["--task=my_task", "--epochs=1"]
    (final,) = [job for job in jobs if job.display_name == "vtp-tune-final"]
    for pool in final.job_spec.worker_pool_specs:
        assert list(pool.container_spec.args)[:2] == ["--task=my_task", "--epochs=1"]


@pytest.mark.slow
def test_tune_over_the_tasks_own_flag_minimizes_its_own_metric(tmp_path: Path) -> None:
    """A regression task of the team's (tests/trainer/test_own_task.py): the study tunes its
    `num_filters` on its `rmse`, MINIMIZE; the final job trains that task with the best integer,
    and the evaluation picks and passes checkpoints by rmse."""
    team = team_folder(tmp_path, OWN_TASK)
    study = {
        "metrics": [{"metricId": "rmse", "goal": "MINIMIZE"}],
        "parameters": [
            {"parameterId": "num_filters", "integerValueSpec": {"minValue": 2, "maxValue": 8}}
        ],
    }
    config, tuning, jobs = tune(
        team, tmp_path / "state",
        "--param", f"study_spec={json.dumps(study)}", "--param", "max_trial_count=2",
        "--param", "parallel_trial_count=1", "--param", 'trial_args=["--epochs=1"]',
        "--param", 'trainer_args=["--epochs=1"]', "--param", "metric=rmse",
        "--param", "threshold=100",
    )  # fmt: skip
    assert config["task"] == "my_task" and config["hypertune_metric"] == "rmse"
    (trial_pool,) = tuning.trial_job_spec.worker_pool_specs
    assert "--hypertune_metric=rmse" in trial_pool.container_spec.args
    values = [int(p.value) for trial in tuning.trials for p in trial.parameters]
    assert len(values) == 2 and all(2 <= value <= 8 for value in values)
    best = min(tuning.trials, key=lambda t: t.final_measurement.metrics[0].value)
    (final,) = [job for job in jobs if job.display_name == "vtp-tune-final"]
    args = list(final.job_spec.worker_pool_specs[0].container_spec.args)
    assert f"--num_filters={int(best.parameters[0].value)}" in args  # an integer, not 4.0
    assert config["num_filters"] == int(best.parameters[0].value)
