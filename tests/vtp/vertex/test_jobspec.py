"""Merging flags over --config the way gcloud does, and blaming the right flag or file."""

from pathlib import Path

import pytest

from vtp.vertex.jobspec import (
    JobFlags,
    build_custom_job,
    build_request_body,
    parse_flag_duration,
    request_body,
)
from vtp.vertex.protodict import SpecError

CONFIG = """\
workerPoolSpecs:
- machineSpec: {machineType: n1-standard-4}
  containerSpec: {imageUri: img, args: [--from-file], command: [run]}
- machineSpec: {machineType: n1-standard-4}
  replicaCount: 2
  pythonPackageSpec: {executorImageUri: exe, packageUris: [gs://b/t.tar.gz], pythonModule: m}
scheduling: {timeout: 600s, restartJobOnWorkerRestart: true}
enableWebAccess: true
network: projects/1/global/networks/from-file
"""


@pytest.fixture
def config(tmp_path: Path) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG)
    return str(path)


def test_args_replace_every_pools_args_and_command_only_containers(config: str) -> None:
    job = build_request_body(
        JobFlags(display_name="j", config=config, args=("--a,--b", "--c"), command=("python,-m,x",))
    )
    container, package = job["jobSpec"]["workerPoolSpecs"]
    assert container["containerSpec"]["args"] == ["--a", "--b", "--c"]
    assert container["containerSpec"]["command"] == ["python", "-m", "x"]
    assert package["pythonPackageSpec"]["args"] == ["--a", "--b", "--c"]
    assert "command" not in package["pythonPackageSpec"]


def test_file_values_stay_unless_a_flag_sets_them(config: str) -> None:
    spec = build_request_body(JobFlags(display_name="j", config=config))["jobSpec"]
    assert spec["enableWebAccess"] is True  # no --enable-web-access does not turn it off
    assert spec["workerPoolSpecs"][0]["containerSpec"]["args"] == ["--from-file"]
    flags = JobFlags(
        display_name="j",
        config=config,
        network="projects/2/global/networks/x",
        scheduling_strategy="spot",
        timeout="1h",
    )
    spec = build_request_body(flags)["jobSpec"]
    assert spec["network"] == "projects/2/global/networks/x"
    assert spec["scheduling"] == {
        "timeout": "3600s",
        "restartJobOnWorkerRestart": True,
        "strategy": "SPOT",
    }


def test_worker_pool_specs_replace_the_files_pools(config: str) -> None:
    flags = JobFlags(
        display_name="j",
        config=config,
        worker_pool_specs=("machine-type=n1-standard-8,container-image-uri=new",),
    )
    pools = build_request_body(flags)["jobSpec"]["workerPoolSpecs"]
    assert pools == [
        {
            "machineSpec": {"machineType": "n1-standard-8"},
            "replicaCount": 1,
            "containerSpec": {"imageUri": "new"},
        }
    ]


def test_the_result_is_a_custom_job_with_rest_names(config: str) -> None:
    job = build_custom_job(JobFlags(display_name="j", config=config, labels=("a=b",)))
    assert job.job_spec.worker_pool_specs[1].replica_count == 2
    body = request_body(job)
    assert body["labels"] == {"a": "b"}
    assert body["jobSpec"]["workerPoolSpecs"][1]["replicaCount"] == "2"  # int64 as JSON string


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90m", "5400s"),
        ("2h30m", "9000s"),
        ("1d", "86400s"),
        ("3600s", "3600s"),
        ("3600", "3600s"),
        ("1.5s", "1.5s"),
        ("7d", "604800s"),
    ],
)
def test_flag_durations(text: str, expected: str) -> None:
    assert parse_flag_duration(text, "--timeout") == expected


def test_errors_in_file_pools_name_the_file(config: str) -> None:
    Path(config).write_text(CONFIG.replace("replicaCount: 2", "replicaCount: 0"))
    with pytest.raises(SpecError) as caught:
        build_request_body(JobFlags(display_name="j", config=config))
    assert caught.value.path == f"--config {config}: workerPoolSpecs[1].replicaCount"


def test_errors_in_flag_pools_name_the_flag_and_key() -> None:
    flags = JobFlags(
        display_name="j",
        worker_pool_specs=(
            "machine-type=n1-standard-4,container-image-uri=i",
            "",
            "machine-type=g2-standard-4,accelerator-type=NVIDIA_L4,accelerator-count=2,"
            "container-image-uri=i",
        ),
    )
    with pytest.raises(SpecError) as caught:
        build_request_body(flags)
    assert caught.value.path == "--worker-pool-spec #3 (pool 2) key accelerator-type"
    assert "exactly 1" in str(caught.value)


def test_a_flag_is_blamed_over_the_file_it_overrides(config: str) -> None:
    with pytest.raises(SpecError) as caught:
        build_request_body(JobFlags(display_name="j", config=config, network="vpc"))
    assert caught.value.path == "--network"
