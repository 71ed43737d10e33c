"""`vtp run --from-job` of jobs as Vertex, gcloud and the SDK describe them (#52): a failed
CustomJob exactly as `gcloud ai custom-jobs describe --format=json` prints one (output-only
fields, an `error`, a numeric ID in its name, a T4 pool) runs again on this machine's CPU; a
HyperparameterTuningJob's describe output (its trials too) runs its study again; a
TrainingPipeline runs its custom task. Each also as `--format=yaml` and as the SDK's snake_case
`to_dict()`, from a team's folder outside the repository, on `vtp run`'s own service. The same
descriptions go to `vtp custom-jobs create --local --config` and `vtp hp-tuning-jobs create
--local --config` (the module's `vtp local serve`). Each says in one line what the file is and
which output-only fields it dropped."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.cloud import aiplatform_v1

from tests.fixtures import LocalService, point_vtp_at, run_vtp, wait_for_state, wait_until
from tests.vtp.cli.run_helpers import vtp_run_unpointed

TASK = Path(__file__).parents[1] / "local" / "tuning" / "objective_task.py"
IMAGE = "us-central1-docker.pkg.dev/team-project/ml/vtp:0.3.1"
"""The project's image, as a team pushes it: its replicas run their command on this machine."""
JOB_NAME = "projects/123456789012/locations/us-central1/customJobs/4567890123456789012"
TUNING_NAME = "projects/123456789012/locations/us-central1/hyperparameterTuningJobs/8812"
FORMATS = ("json", "yaml", "to_dict")
TIMES = {
    "createTime": "2026-11-30T22:14:03.361540Z",
    "startTime": "2026-11-30T22:15:10Z",
    "endTime": "2026-11-30T22:20:41.204567Z",
    "updateTime": "2026-11-30T22:20:41.204567Z",
}
State = aiplatform_v1.JobState


def pool(command: list[str], args: list[str] | None = None) -> dict[str, Any]:
    """A T4 worker pool as Vertex describes one (replicaCount a string, the disk it chose)."""
    container: dict[str, Any] = {"command": command, "imageUri": IMAGE}
    if args is not None:
        container["args"] = args
    return {
        "containerSpec": container,
        "diskSpec": {"bootDiskSizeGb": 100, "bootDiskType": "pd-ssd"},
        "machineSpec": {
            "acceleratorCount": 1,
            "acceleratorType": "NVIDIA_TESLA_T4",
            "machineType": "n1-standard-4",
        },
        "replicaCount": "1",
    }


def failed_custom_job(marker: Path) -> dict[str, Any]:
    """A CustomJob that failed on Vertex, as `gcloud ai custom-jobs describe` prints it."""
    script = f"import sys, pathlib; pathlib.Path({str(marker)!r}).write_text(' '.join(sys.argv[1:])); print('replayed with', sys.argv[1:])"  # noqa: E501
    return {
        **TIMES,
        "displayName": "t4-smoke",
        "error": {
            "code": 3,
            "message": "The replica workerpool0-0 exited with a non-zero status of 1. "
            "Termination reason: Error.",
        },
        "jobSpec": {"workerPoolSpecs": [pool(["python", "-c", script], ["--epochs=3"])]},
        "labels": {"team": "ml"},
        "name": JOB_NAME,
        "state": "JOB_STATE_FAILED",
    }


def tuning_job(record: Path) -> dict[str, Any]:
    """A finished HyperparameterTuningJob as `gcloud ai hp-tuning-jobs describe` prints it."""
    trial = {
        "id": "1",
        "state": "SUCCEEDED",
        "parameters": [{"parameterId": "x", "value": 0.42}],
        "finalMeasurement": {"stepCount": "2", "metrics": [{"metricId": "score", "value": 0.9}]},
        "startTime": TIMES["startTime"],
        "endTime": TIMES["endTime"],
    }
    return {
        **TIMES,
        "displayName": "hp-smoke",
        "maxTrialCount": 2,
        "parallelTrialCount": 2,
        "name": TUNING_NAME,
        "state": "JOB_STATE_SUCCEEDED",
        "studySpec": {
            "algorithm": "RANDOM_SEARCH",
            "metrics": [{"goal": "MAXIMIZE", "metricId": "score"}],
            "parameters": [
                {
                    "doubleValueSpec": {"maxValue": 1.0, "minValue": 0.0},
                    "parameterId": "x",
                    "scaleType": "UNIT_LINEAR_SCALE",
                }
            ],
        },
        "trialJobSpec": {
            "workerPoolSpecs": [pool(["python", str(TASK), "--record", str(record)], ["--steps=2"])]
        },
        "trials": [trial, {**trial, "id": "2", "parameters": [{"parameterId": "x", "value": 0.7}]}],
    }


def written(folder: Path, described: dict[str, Any], form: str, message: type) -> Path:
    """`described` in `folder` as gcloud's `--format=json`, `--format=yaml`, or the SDK's
    proto-plus `to_dict()` (snake_case, every field, enums as numbers)."""
    if form == "yaml":
        path = folder / "job.yaml"
        path.write_text(yaml.safe_dump(described))
        return path
    path = folder / "job.json"
    if form == "to_dict":
        described = message.to_dict(message.from_json(json.dumps(described)))
    path.write_text(json.dumps(described, indent=2, sort_keys=True))
    return path


def team_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "team"
    folder.mkdir()
    return folder


def dropped_line(path: Path, kind: str, name: str, form: str, fields: list[str]) -> str:
    """The line that says what `path` is (a to_dict() spells the fields its way, and has all)."""
    if form == "to_dict":
        snake = {"createTime": "create_time", "startTime": "start_time"}
        snake |= {"endTime": "end_time", "updateTime": "update_time"}
        fields = [snake.get(f, f) for f in fields] + ["satisfies_pzi", "satisfies_pzs"]
        if kind == "CustomJob":
            fields.append("web_access_uris")
    listed = ", ".join(sorted(fields))
    return f"vtp: {path.name} is a {kind} ({name}); dropped output-only fields: {listed}"


@pytest.mark.parametrize("form", FORMATS)
def test_a_failed_t4_custom_job_replays_on_cpu(tmp_path: Path, form: str) -> None:
    folder, marker = team_folder(tmp_path), tmp_path / "ran"
    path = written(folder, failed_custom_job(marker), form, aiplatform_v1.CustomJob)
    result = vtp_run_unpointed(folder, "--from-job", path.name)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    fields = ["createTime", "endTime", "error", "name", "startTime", "state", "updateTime"]
    assert result.stderr.splitlines()[0] == dropped_line(path, "CustomJob", JOB_NAME, form, fields)
    assert "NVIDIA_TESLA_T4 (1 replica), but this machine has no GPU" in result.stdout
    assert "workerpool0-0\treplayed with ['--epochs=3']" in result.stdout
    assert result.stderr.rstrip().endswith("is JOB_STATE_SUCCEEDED.")
    assert marker.read_text() == "--epochs=3"


def test_args_and_command_override_every_pool_as_gcloud_s_do(tmp_path: Path) -> None:
    folder, marker = team_folder(tmp_path), tmp_path / "ran"
    path = written(folder, failed_custom_job(marker), "json", aiplatform_v1.CustomJob)
    result = vtp_run_unpointed(folder, "--from-job", path.name, "--args=--epochs=1,--seed=7")
    assert result.returncode == 0, result.stderr[-2000:]
    assert marker.read_text() == "--epochs=1 --seed=7"

    failing = vtp_run_unpointed(
        folder, "--from-job", path.name, "--command=python,-c,raise SystemExit(3)"
    )
    assert failing.returncode == 1, failing.stderr[-2000:]
    assert "is JOB_STATE_FAILED" in failing.stderr.splitlines()[-1]
    assert "exited with a non-zero status of 3" in failing.stderr.splitlines()[-1]


@pytest.mark.parametrize("form", FORMATS)
def test_a_described_tuning_job_runs_its_study_again(tmp_path: Path, form: str) -> None:
    folder, record = team_folder(tmp_path), tmp_path / "trials"
    record.mkdir()
    described = tuning_job(record)
    path = written(folder, described, form, aiplatform_v1.HyperparameterTuningJob)
    result = vtp_run_unpointed(folder, "--from-job", path.name)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    fields = ["createTime", "endTime", "name", "startTime", "state", "trials", "updateTime"]
    expected = dropped_line(path, "HyperparameterTuningJob", TUNING_NAME, form, fields)
    assert result.stderr.splitlines()[0] == expected
    ended = [line for line in result.stderr.splitlines() if ": SUCCEEDED, score=" in line]
    assert sorted(line.split()[1] for line in ended) == ["1", "2"], result.stderr
    assert result.stderr.rstrip().endswith("is JOB_STATE_SUCCEEDED.")
    runs = [json.loads(p.read_text()) for p in sorted(record.glob("*.json"))]
    assert len(runs) == 2  # the study's two trials, each with the described args and an x
    for run in runs:
        assert run["argv"][:3] == ["--record", str(record), "--steps=2"]
        assert run["argv"][3].startswith("--x=")


def test_a_training_pipeline_runs_its_custom_task(tmp_path: Path) -> None:
    folder, marker = team_folder(tmp_path), tmp_path / "ran"
    spec = failed_custom_job(marker)["jobSpec"]
    pipeline = {
        **TIMES,
        "name": "projects/123456789012/locations/us-central1/trainingPipelines/31",
        "displayName": "custom-training",
        "trainingTaskDefinition": "gs://google-cloud-aiplatform/schema/trainingjob/definition/"
        "custom_task_1.0.0.yaml",
        "trainingTaskInputs": spec,
        "trainingTaskMetadata": {"backingCustomJob": JOB_NAME},
        "modelToUpload": {"displayName": "m", "containerSpec": {"imageUri": IMAGE}},
        "state": "PIPELINE_STATE_FAILED",
    }
    (folder / "tp.json").write_text(json.dumps(pipeline))
    result = vtp_run_unpointed(folder, "--from-job", "tp.json")
    assert result.returncode == 0, result.stderr[-2000:]
    first = result.stderr.splitlines()[0]
    assert first.startswith("vtp: tp.json is a TrainingPipeline (projects/123456789012/")
    assert "createTime, endTime, name, startTime, state, trainingTaskMetadata" in first
    assert "its custom task runs as a CustomJob (its model is not uploaded)" in first
    assert marker.read_text() == "--epochs=3"

    pipeline["trainingTaskDefinition"] = "gs://google-cloud-aiplatform/schema/trainingjob/" + (
        "definition/automl_tabular_1.0.0.yaml"
    )
    (folder / "tp.json").write_text(json.dumps(pipeline))
    (folder / "replay").rename(folder / "first")
    refused = vtp_run_unpointed(folder, "--from-job", "tp.json")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "automl_tabular_1.0.0.yaml' is not supported" in refused.stderr
    assert not (folder / "replay").exists()  # nothing started


@pytest.mark.parametrize(
    ("change", "flags", "says"),
    [
        (
            lambda job: job["jobSpec"]["workerPoolSpecs"][0].update(replicaCount="two"),
            (),
            "jobSpec.workerPoolSpecs[0].replicaCount: expected an integer, got 'two'",
        ),
        (lambda job: None, ("--param", "x=1"), "--param: for a pipeline run"),
        (
            lambda job: job["jobSpec"]["workerPoolSpecs"][0].pop("containerSpec"),
            (),
            "jobSpec.workerPoolSpecs[0]: sets neither containerSpec nor pythonPackageSpec",
        ),
        (
            lambda job: job["jobSpec"]["workerPoolSpecs"][0].update(
                containerSpec=None,
                pythonPackageSpec={
                    "executorImageUri": IMAGE,
                    "packageUris": ["gs://team/trainer-0.1.tar.gz"],
                    "pythonModule": "trainer.task",
                },
            ),
            ("--command=python",),
            "--command: no pool runs a container image",
        ),
    ],
    ids=["wrong-type", "pipeline-flag", "pool-runs-nothing", "command-for-no-container"],
)
def test_a_job_that_cannot_run_is_one_line(tmp_path: Path, change, flags, says) -> None:
    folder = team_folder(tmp_path)
    described = failed_custom_job(tmp_path / "ran")
    change(described)
    (folder / "job.json").write_text(json.dumps(described))
    result = vtp_run_unpointed(folder, "--from-job", "job.json", *flags)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert says in result.stderr
    assert not (folder / "replay").exists()


@pytest.fixture
def local(local_service: LocalService, monkeypatch: pytest.MonkeyPatch) -> LocalService:
    return point_vtp_at(local_service, monkeypatch)


@pytest.mark.parametrize("form", FORMATS)
def test_custom_jobs_create_local_takes_a_describe_output(
    local: LocalService, tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    marker = tmp_path / "ran"
    path = written(tmp_path, failed_custom_job(marker), form, aiplatform_v1.CustomJob)
    code, out, err = run_vtp(capsys, "custom-jobs", "create", "--local", f"--config={path}")
    assert code == 0, err
    fields = ["createTime", "endTime", "error", "name", "startTime", "state", "updateTime"]
    line = dropped_line(path, "CustomJob", JOB_NAME, form, fields).replace(path.name, str(path))
    assert err.splitlines()[0] == line
    job = wait_for_state(local.client(), out.strip())
    assert (job.state, job.display_name, dict(job.labels)) == (
        State.JOB_STATE_SUCCEEDED,
        "t4-smoke",
        {"team": "ml"},
    )
    assert marker.read_text() == "--epochs=3"
    # For Vertex, such a file is refused, as gcloud refuses it.
    code, _, err = run_vtp(capsys, "custom-jobs", "create", "--dry-run", f"--config={path}")
    assert code == 2 and "output-only field" in err


@pytest.mark.parametrize("form", FORMATS)
def test_hp_tuning_jobs_create_local_takes_a_describe_output(
    local: LocalService, tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    record = tmp_path / "trials"
    record.mkdir()
    path = written(tmp_path, tuning_job(record), form, aiplatform_v1.HyperparameterTuningJob)
    args = ("hp-tuning-jobs", "create", "--local", "--region=us-central1", f"--config={path}")
    code, out, err = run_vtp(capsys, *args)
    assert code == 0, err
    fields = ["createTime", "endTime", "name", "startTime", "state", "trials", "updateTime"]
    line = dropped_line(path, "HyperparameterTuningJob", TUNING_NAME, form, fields)
    assert err.splitlines()[0] == line.replace(path.name, str(path))
    name = json.loads(out)["name"]
    client = local.client()

    def ended() -> aiplatform_v1.HyperparameterTuningJob | None:
        job = client.get_hyperparameter_tuning_job(name=name)
        return job if job.state in (State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED) else None

    job = wait_until(ended, 120, "the tuning job to end")
    assert job.state == State.JOB_STATE_SUCCEEDED and job.display_name == "hp-smoke"
    assert len(job.trials) == 2 and len(list(record.glob("*.json"))) == 2
    # Without --local, --display-name is required, and the trials are refused as before.
    for_vertex = (*args[:2], "--region=us-central1", "--dry-run", f"--config={path}")
    code, _, err = run_vtp(capsys, *for_vertex)
    assert code == 2 and "--display-name is required" in err
    code, _, err = run_vtp(capsys, *for_vertex, "--display-name=again")
    assert code == 2 and "output only" in err


def test_a_described_pipeline_job_in_yaml_goes_on_to_the_pipeline_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gcloud ai ... --format=yaml` of a PipelineJob: read as YAML, said in one line, and run
    as `vtp run --from-job` runs a pipeline (here stopped where the run would start)."""
    from kfp import compiler, dsl

    from vtp.run import local_run, target

    @dsl.component(base_image="python:3.11")
    def shout(word: str) -> str:
        return word.upper()

    @dsl.pipeline(name="shouted")
    def shouted(word: str):
        shout(word=word)

    compiler.Compiler().compile(shouted, str(tmp_path / "shouted.yaml"))
    name = "projects/123456789012/locations/us-central1/pipelineJobs/shouted-20261130"
    described = {
        **TIMES,
        "name": name,
        "displayName": "shouted",
        "pipelineSpec": yaml.safe_load((tmp_path / "shouted.yaml").read_text()),
        "runtimeConfig": {"parameterValues": {"word": "hi"}},
        "state": "PIPELINE_STATE_FAILED",
        "jobDetail": {"pipelineRunContext": {"name": "x"}},
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(described))
    started: list[tuple[Any, ...]] = []
    monkeypatch.setattr(target, "prepare", lambda *args: None)
    monkeypatch.setattr(local_run, "run_pipeline", lambda *args, **kwargs: started.append(args))
    monkeypatch.chdir(tmp_path)
    code, _, err = run_vtp(capsys, "run", "--from-job", "job.yaml", "--param", "word=yo")
    assert (code, err.splitlines()[0]) == (
        130,  # the stand-in run_pipeline started nothing
        f"vtp: job.yaml is a PipelineJob ({name}); dropped output-only fields: createTime, "
        "endTime, jobDetail, name, startTime, state, updateTime",
    )
    ((_, spec, values, _),) = started
    assert spec["pipelineInfo"]["name"] == "shouted" and values == {"word": "yo"}


def test_ctrl_c_cancels_the_job_on_the_serving_service(local: LocalService, tmp_path: Path) -> None:
    """With the state directory of a `vtp local serve`, the job is that service's; SIGINT
    cancels it, and `vtp run` exits 130."""
    folder = team_folder(tmp_path)
    described = failed_custom_job(tmp_path / "ran")
    sleeper = "import time; print('sleeping', flush=True); time.sleep(120)"
    described["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["command"] = [
        "python", "-c", sleeper,
    ]  # fmt: skip
    (folder / "job.json").write_text(json.dumps(described))
    out, err = folder / "out", folder / "err"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VTP_LOCAL", "STORAGE_"))}
    with out.open("w") as stdout, err.open("w") as stderr:
        run = subprocess.Popen(
            [sys.executable, "-m", "vtp", "run", "--from-job", "job.json",
             "--state-dir", str(local.state_dir)],
            cwd=folder, env=env, stdout=stdout, stderr=stderr, text=True,
        )  # fmt: skip
        try:
            wait_until(lambda: "sleeping" in out.read_text() or run.poll() is not None, 60)
            run.send_signal(signal.SIGINT)
            assert run.wait(60) == 130, err.read_text()
        finally:
            run.kill()
    said = err.read_text()
    name = said.split("CustomJob [", 1)[1].split("]", 1)[0]
    assert name.startswith(local.parent + "/customJobs/") and f"cancelled {name}" in said
    assert local.client().get_custom_job(name=name).state == State.JOB_STATE_CANCELLED
