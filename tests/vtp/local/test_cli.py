"""`vtp local serve|env|preempt`: bad input exits 2 naming the flag; env drives the real gcloud."""

import os
import subprocess
import sys

import pytest

from tests.fixtures import wait_for_state
from tests.vtp.local.conftest import custom_job, scripted_pool
from vtp.cli import main as vtp
from vtp.cli import target


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["local", "preempt", "123", "--replica", "worker-1"], "--replica"),
        (["local", "preempt", "123", "--replica", "workerpool1-0", "--grace", "-1"], "--grace"),
        (["local", "preempt", "projects/p/customJobs/1", "--replica", "workerpool1-0"], "JOB"),
        (["local", "serve", "--port", "70000"], "--port"),
        (["local", "serve", "--poll-interval", "0"], "--poll-interval"),
        (["local", "serve", "--max-replicas", "-2"], "--max-replicas"),
        (["local", "serve", "--gpus", "first"], "--gpus"),
    ],
)
def test_bad_flags_exit_2_naming_the_flag(argv, named, capsys, tmp_path):
    assert vtp([*argv, *(["--state-dir", str(tmp_path)] if argv[1] == "serve" else [])]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("vtp: error: ") and named in err


def test_preempt_without_a_service_says_how_to_start_one(capsys, tmp_path):
    argv = ["local", "preempt", "123", "--replica", "workerpool0-0"]
    assert vtp([*argv, "--endpoint", "http://127.0.0.1:9"]) == 1
    assert "vtp local serve" in capsys.readouterr().err


def test_preempt_reports_the_services_error(local_service, capsys):
    argv = ["local", "preempt", "projects/local/locations/us-central1/customJobs/42"]
    assert vtp([*argv, "--replica", "workerpool0-0", "--endpoint", local_service.url]) == 1
    assert "CustomJob projects/local/locations/us-central1/customJobs/42 not found" in (
        capsys.readouterr().err
    )


def test_local_env_points_the_real_gcloud_at_the_service(local_service, tmp_path) -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "vtp", "local", "env", "--endpoint", local_service.url],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    settings = dict(line.split("=", 1) for line in printed.stdout.splitlines())
    assert settings["CLOUDSDK_AUTH_ACCESS_TOKEN_FILE"] == str(local_service.state_dir / "token")
    assert settings["CLOUDSDK_API_ENDPOINT_OVERRIDES_AIPLATFORM"] == f"{local_service.url}/"
    env = {**os.environ, **settings, "CLOUDSDK_CONFIG": str(tmp_path)}
    listed = subprocess.run(
        ["gcloud", "ai", "custom-jobs", "list", "--region=us-central1", "--project=local"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "Listed 0 items." in listed.stderr  # signed in: an empty list, not a refusal


def test_local_exec_runs_a_command_pointed_at_the_service(local_service, tmp_path) -> None:
    script = (
        "import os; from vtp.vertex.client import job_client; "
        "c = job_client('us-central1', local=True); "
        "print(len(list(c.list_custom_jobs(parent='projects/local/locations/us-central1'))), "
        "os.environ['VTP_GCS_ROOT'])"
    )
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", local_service.url, "--",
         sys.executable, "-c", script],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    count, root = result.stdout.split()
    assert int(count) >= 0 and root == str(local_service.gcs_root.resolve())


def test_local_exec_finds_the_service_by_its_state_directory(local_service, tmp_path) -> None:
    script = "import os; print(os.environ['VTP_LOCAL_ENDPOINT'], os.environ['VTP_GCS_ROOT'])"
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "local", "exec", "--state-dir", str(local_service.state_dir),
         "--", sys.executable, "-c", script],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [local_service.url, str(local_service.gcs_root.resolve())]


def test_local_exec_state_dir_without_a_service_exits_2_naming_the_flag(capsys, tmp_path):
    argv = ["local", "exec", "--state-dir", str(tmp_path), "--", "true"]
    assert vtp(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("vtp: error: --state-dir") and "vtp local serve" in err
    with pytest.raises(SystemExit) as exited:
        vtp([*argv[:3], "--endpoint", "http://127.0.0.1:9", *argv[3:]])
    assert exited.value.code == 2 and "--state-dir" in capsys.readouterr().err


def vtp_local_env(url: str, **environ: str) -> dict[str, str]:
    """`vtp local env`'s settings, run with `environ` over an environment without a project."""
    base = {k: v for k, v in os.environ.items() if k not in target.PROJECT_ENVS}
    printed = subprocess.run(
        [sys.executable, "-m", "vtp", "local", "env", "--endpoint", url],
        env={**base, **environ}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return dict(line.split("=", 1) for line in printed.stdout.splitlines())


def test_local_env_gives_gcloud_the_local_project_unless_the_user_set_one(local_service) -> None:
    assert vtp_local_env(local_service.url)["CLOUDSDK_CORE_PROJECT"] == target.LOCAL_PROJECT
    assert "CLOUDSDK_CORE_PROJECT" not in vtp_local_env(
        local_service.url, CLOUDSDK_CORE_PROJECT="mine"
    )
    chosen = vtp_local_env(local_service.url, GOOGLE_CLOUD_PROJECT="theirs")
    assert chosen["CLOUDSDK_CORE_PROJECT"] == "theirs"


def test_gclouds_own_next_steps_run_under_local_exec(local_service, tmp_path) -> None:
    """`gcloud ai custom-jobs create` prints `gcloud ai custom-jobs stream-logs JOB --region R`
    (no --project): under `vtp local exec` it runs without one. (`--polling-interval=1` only
    because gcloud has no property for it: a finished job's logs end after two empty polls.)"""
    record = tmp_path / "record"
    record.mkdir()
    job = local_service.client().create_custom_job(
        parent=local_service.parent, custom_job=custom_job(scripted_pool(record))
    )
    wait_for_state(local_service.client(), job.name)
    env = {k: v for k, v in os.environ.items() if k not in target.PROJECT_ENVS}
    env["CLOUDSDK_CONFIG"] = str(tmp_path / "gcloud")  # no project in gcloud's own config
    exec_ = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", local_service.url, "--"]
    job_id = job.name.rsplit("/", 1)[1]
    for command in (["describe"], ["stream-logs", "--polling-interval=1"]):
        result = subprocess.run(
            [*exec_, "gcloud", "ai", "custom-jobs", *command, job_id, "--region", "us-central1"],
            env=env, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        assert "[project]" not in result.stderr
        assert result.returncode == 0, result.stderr
