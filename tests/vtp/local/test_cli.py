"""`vtp local serve` and `vtp local preempt`: bad input exits 2, naming the flag; stdout empty."""

import pytest

from vtp.cli import main as vtp


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
