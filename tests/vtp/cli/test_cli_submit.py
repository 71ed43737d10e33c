"""`vtp submit`: the PipelineJob request the aiplatform SDK builds, bad flags, and --local runs."""

import json
from pathlib import Path

import pytest
import yaml
from google.cloud.aiplatform_v1 import PipelineJob

from tests.fixtures import VERTEX_TARGET, LocalService, run_vtp
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from vtp.pipelines.compile import compiled_dir
from vtp.vertex.image_rewrite import retarget

SA = "runner@my-project.iam.gserviceaccount.com"


def vtp(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_vtp(capsys, "submit", *argv)


pytestmark = pytest.mark.usefixtures("no_gcloud_defaults", "built_image")

BUILT = "us-central1-docker.pkg.dev/my-project/ml/vtp:0.1.0-0123456789ab"
"""What `vtp image build` built last here: without one, Vertex runs are refused."""


@pytest.fixture
def built_image(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """A state directory where `vtp image build` built BUILT (test_submit_image.py has none)."""
    from vtp.vertex.image_build import remember

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    remember(BUILT)
    return BUILT


def test_dry_run_prints_the_pipeline_job_the_sdk_builds(capsys) -> None:
    code, out, err = vtp(
        capsys,
        "train",
        *VERTEX_TARGET,
        "--param=output_root=gs://my-bucket/train",
        "--param=threshold=0.9",
        "--param=last_k=2",
        '--param=trainer_args=["--epochs=3"]',
        "--param=restart_job_on_worker_restart=false",
        f"--service-account={SA}",
        "--no-enable-caching",
        "--dry-run",
    )
    assert code == 0, err
    job = PipelineJob.from_json(out, ignore_unknown_fields=False)  # what Vertex parses
    body = json.loads(out)
    assert body["displayName"] == "vtp-train"
    assert body["serviceAccount"] == SA
    assert body["runtimeConfig"] == {
        "gcsOutputDirectory": "gs://my-bucket/root",
        "parameterValues": {
            "output_root": "gs://my-bucket/train",
            "threshold": 0.9,
            "last_k": 2,
            "trainer_args": ["--epochs=3"],
            "restart_job_on_worker_restart": False,
            "project": "my-project",  # the pipeline's own parameters, from --project/--region
            "location": "europe-west4",
        },
    }
    compiled = yaml.safe_load(retarget((compiled_dir() / "train.yaml").read_text(), BUILT))
    assert body["pipelineSpec"]["deploymentSpec"] == compiled["deploymentSpec"]
    tasks = body["pipelineSpec"]["root"]["dag"]["tasks"].values()
    assert {json.dumps(t["cachingOptions"]) for t in tasks} == {'{"enableCache": false}'}
    assert job.runtime_config.gcs_output_directory == "gs://my-bucket/root"


def test_a_compiled_file_can_be_submitted_and_keeps_its_caching(capsys, tiny_yaml) -> None:
    code, out, err = vtp(
        capsys, str(tiny_yaml), *VERTEX_TARGET, "--param=marker_uri=gs://b/m", "--dry-run"
    )
    assert code == 0, err
    body = json.loads(out)
    assert body["displayName"] == "vtp-tiny"
    assert body["runtimeConfig"]["parameterValues"] == {"marker_uri": "gs://b/m"}
    tasks = body["pipelineSpec"]["root"]["dag"]["tasks"].values()
    assert all(t["cachingOptions"] == {"enableCache": True} for t in tasks)


BAD = {
    "unknown pipeline": (["trian", *VERTEX_TARGET], "PIPELINE: unknown pipeline 'trian'"),
    "missing file": (["nowhere.yaml", *VERTEX_TARGET], "PIPELINE: no compiled pipeline file"),
    "unknown param": (
        ["export", *VERTEX_TARGET, "--param=checkpoint_uri=gs://b/c"],
        "--param checkpoint_uri",
    ),
    "missing param": (["export", *VERTEX_TARGET], "--param checkpoints_uri=VALUE is required"),
    "not an integer": (
        ["export", *VERTEX_TARGET, "--param=checkpoints_uri=gs://b/c", "--param=last_k=two"],
        "--param last_k: expected a NUMBER_INTEGER",
    ),
    "not a list": (
        [
            "train",
            *VERTEX_TARGET,
            "--param=output_root=gs://b/o",
            "--param=trainer_args=--epochs=3",
        ],
        "--param trainer_args: expected a LIST value",
    ),
    "output root off Cloud Storage": (
        ["train", *VERTEX_TARGET, "--param=output_root=/tmp/x"],
        "--param output_root: '/tmp/x' is not a Cloud Storage URI",
    ),
    "checkpoints off Cloud Storage": (
        ["export", *VERTEX_TARGET, "--param=checkpoints_uri=/data/run/checkpoints"],
        "--param checkpoints_uri: '/data/run/checkpoints' is not a Cloud Storage URI",
    ),
    "location param": (
        [
            "export",
            *VERTEX_TARGET,
            "--param=checkpoints_uri=gs://my-bucket/c",
            "--param=location=moon",
        ],
        "--param location: 'moon' is not a Vertex AI location",
    ),
    "local output root": (
        ["train", "--local", "--param=output_root=runs"],
        "--param output_root: 'runs' is not a Cloud Storage URI",
    ),
    "param syntax": (
        ["export", *VERTEX_TARGET, "--param=checkpoints_uri"],
        "--param expects NAME=VALUE",
    ),
    "local root": (
        ["export", "--project=p", "--region=us-central1", "--pipeline-root=/tmp/root"],
        "--pipeline-root must be a Cloud Storage URI",
    ),
    "no root": (["export", "--project=p", "--region=us-central1"], "--pipeline-root gs://"),
    "bad region": (
        ["export", "--project=p", "--region=moon-base1x", "--pipeline-root=gs://my-bucket/r"],
        "--region: 'moon-base1x' is not a Vertex AI location",
    ),
    "no project": (
        ["export", "--region=us-central1", "--pipeline-root=gs://my-bucket/r"],
        "no project: pass --project",
    ),
    "service account": (
        ["export", *VERTEX_TARGET, "--param=checkpoints_uri=gs://b/c", "--service-account=runner"],
        "--service-account must be an email",
    ),
    "dry run and local": (["export", "--local", "--dry-run"], "--dry-run and --local"),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_input_exits_2_naming_the_flag_before_anything_is_sent(capsys, case) -> None:
    argv, message = BAD[case]
    code, out, err = vtp(capsys, *argv, *([] if "--local" in argv else ["--dry-run"]))
    assert (code, out) == (2, "")
    assert message in err


@pytest.fixture
def local(local_service: LocalService, monkeypatch: pytest.MonkeyPatch) -> LocalService:
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", local_service.url)
    return local_service


def test_submit_local_runs_the_pipeline_to_the_end(local, capsys, tiny_yaml) -> None:
    marker = "gs://vtp-test/markers/cli"
    code, out, err = vtp(
        capsys, str(tiny_yaml), "--local", f"--param=marker_uri={marker}", "--param=a=5", "--wait"
    )
    assert code == 0, err
    name = out.strip()
    assert name.startswith(f"{local.parent}/pipelineJobs/vtp-tiny-")
    assert "PIPELINE_STATE_SUCCEEDED" in err
    recorded = json.loads(Path(local.gcs_root, "vtp-test", "markers", "cli").read_text())
    assert recorded == {"value": 7, "endpoint": local.url}
    outputs = local.gcs_root / "vtp-local" / "pipeline-root"  # the local default root
    assert any(outputs.rglob("executor_output.json"))


def test_submit_local_wait_fails_with_the_run_error(local, capsys, tiny_yaml) -> None:
    code, out, err = vtp(
        capsys,
        str(tiny_yaml),
        "--local",
        "--param=marker_uri=gs://b/m",
        "--param=fail=true",
        "--wait",
    )
    assert code == 1
    assert out.strip().startswith(f"{local.parent}/pipelineJobs/"), err
    assert "PIPELINE_STATE_FAILED" in err
    assert "vtp: pipeline failed:" in err and "add" in err


def test_a_second_local_submit_in_the_same_second_takes_the_next_free_id(
    local, capsys, tiny_yaml, monkeypatch
) -> None:
    """The SDK's ID holds the second it was made in; two submits in one second both run."""
    from vtp.cli import submit

    made = submit.build_job

    def same_second(args):
        job = made(args)
        job.job_id = "vtp-tiny-20261202030000"
        return job

    monkeypatch.setattr(submit, "build_job", same_second)
    names = [vtp(capsys, str(tiny_yaml), "--local", "--param=marker_uri=gs://b/s") for _ in "12"]
    assert [(code, out.strip()) for code, out, _ in names] == [
        (0, f"{local.parent}/pipelineJobs/vtp-tiny-20261202030000"),
        (0, f"{local.parent}/pipelineJobs/vtp-tiny-20261202030000-2"),
    ]


def test_submit_local_without_a_service_says_how_to_start_one(capsys, monkeypatch, tiny_yaml):
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    code, out, err = vtp(capsys, str(tiny_yaml), "--local", "--param=marker_uri=gs://b/m")
    assert (code, out) == (1, "")
    assert "cannot reach http://127.0.0.1:9; start it with `vtp local serve`" in err
