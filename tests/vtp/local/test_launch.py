"""From a job spec to host commands: validation, image rules, package installs, capacity."""

import sys

import pytest
from google.cloud import aiplatform_v1

from tests.vtp.local.conftest import write_sdist
from vtp.local.base import errors
from vtp.local.runtime.capacity import Capacity, Needs, cpu_warning
from vtp.local.runtime.launch import is_project_image, plan_job
from vtp.local.runtime.packages import install

MACHINE = {"machine_type": "n1-standard-4"}


def spec(*pools: dict) -> aiplatform_v1.CustomJobSpec:
    return aiplatform_v1.CustomJobSpec(worker_pool_specs=list(pools))


def container(image: str, command: list[str] | None = None, **extra: object) -> dict:
    pool = {"machine_spec": MACHINE, "replica_count": 1, "container_spec": {"image_uri": image}}
    if command:
        pool["container_spec"]["command"] = command
    pool["container_spec"]["args"] = ["--a=1"]
    return {**pool, **extra}


@pytest.mark.parametrize(
    ("image", "ours"),
    [
        ("us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0", True),
        ("us-docker.pkg.dev/my-project/vtp/trainer:latest", True),
        ("localhost:5000/vtp@sha256:abc", True),
        ("python:3.11", False),
        ("us-docker.pkg.dev/my-project/team/vtp-fork:1", False),
    ],
)
def test_project_image_is_recognised_by_name(image, ours):
    assert is_project_image(image) is ours


def test_project_image_prefixes_can_be_added():
    assert is_project_image("eu.gcr.io/acme/trainer:2", ("eu.gcr.io/acme/",))


def test_project_image_runs_the_trainer_with_this_python():
    plan = plan_job(spec(container("gcr.io/p/vtp:1")))
    assert plan.pools[0].argv == (sys.executable, "-m", "vtp.trainer", "--a=1")


def test_other_image_runs_its_command_on_the_host():
    plan = plan_job(
        spec(container("python:3.11", ["python3", "train.py"]), {}, container("x", ["./e"]))
    )
    assert [p.index for p in plan.pools] == [0, 2]
    assert plan.pools[0].argv == (sys.executable, "train.py", "--a=1")
    assert plan.pool_sizes() == (1, 0, 1)


def test_python_package_runs_the_module():
    pool = {
        "machine_spec": MACHINE,
        "replica_count": 2,
        "python_package_spec": {
            "executor_image_uri": "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4:latest",
            "package_uris": ["gs://b/trainer-0.1.tar.gz"],
            "python_module": "trainer.task",
            "args": ["--x=1"],
        },
    }
    plan = plan_job(spec(container("gcr.io/p/vtp:1"), pool))
    assert plan.pools[1].argv == (sys.executable, "-m", "trainer.task", "--x=1")
    assert plan.pools[1].package_uris == ("gs://b/trainer-0.1.tar.gz",)
    assert plan.pools[1].replicas == ["workerpool1-0", "workerpool1-1"]


def test_unset_replica_count_means_one_replica():
    pool = {"machine_spec": MACHINE, "container_spec": {"image_uri": "gcr.io/p/vtp:1"}}
    plan = plan_job(spec(pool, pool))
    assert [p.replicas for p in plan.pools] == [["workerpool0-0"], ["workerpool1-0"]]


@pytest.mark.parametrize(
    ("pools", "named"),
    [
        ((), "workerPoolSpecs must not be empty"),
        ((container("gcr.io/p/vtp:1", replica_count=-1),), r"\[0\].replicaCount must be at least"),
        (({}, container("gcr.io/p/vtp:1")), r"workerPoolSpecs\[0\] \(the primary replica\)"),
        ((container("gcr.io/p/vtp:1", replica_count=2),), r"\[0\].replicaCount must be 1"),
        (({"replica_count": 1, "container_spec": {"image_uri": "x"}},), "machineType"),
        (({"machine_spec": MACHINE, "replica_count": 1},), "exactly one of containerSpec"),
        ((container("python:3.11"),), r"\[0\].containerSpec: image 'python:3.11' is not"),
        ((container("gcr.io/p/vtp:1"),) * 5, "at most 4"),
    ],
)
def test_invalid_specs_are_refused_naming_the_field(pools, named):
    with pytest.raises(errors.ApiError, match=named):
        plan_job(spec(*pools))


def test_packages_install_once_per_content(tmp_path):
    bucket = tmp_path / "gcs" / "b"
    bucket.mkdir(parents=True)
    write_sdist(bucket / "hello-0.1.tar.gz", "hello", __main___py="print('hello')\n")
    first = install(["gs://b/hello-0.1.tar.gz"], tmp_path / "gcs", tmp_path / "cache")
    assert (first.archives / "hello" / "__main__.py").read_text() == "print('hello')\n"
    again = install(["gs://b/hello-0.1.tar.gz"], tmp_path / "gcs", tmp_path / "cache")
    write_sdist(bucket / "hello-0.1.tar.gz", "hello", __main___py="print('changed')\n")
    changed = install(["gs://b/hello-0.1.tar.gz"], tmp_path / "gcs", tmp_path / "cache")
    assert again.archives == first.archives and changed.archives != first.archives
    assert first.requirements == () and first.environment is None
    assert (changed.archives / "hello" / "__main__.py").read_text() == "print('changed')\n"


def test_capacity_hands_out_gpus_and_replica_slots():
    capacity = Capacity(("0", "1", "2"), max_replicas=3)
    two = Needs({"workerpool0-0": 2})
    assert capacity.never_fits(Needs({"workerpool0-0": 2, "workerpool1-0": 2}))
    assert "--max-replicas" in capacity.never_fits(Needs({f"workerpool1-{i}": 0 for i in range(4)}))
    first = capacity.allocate(two)
    assert first == {"workerpool0-0": ("0", "1")}
    assert capacity.allocate(two) is None  # one GPU left: the job waits in the queue
    assert capacity.allocate(Needs({"a": 1, "b": 0})) == {"a": ("2",), "b": ()}
    assert capacity.allocate(Needs({"c": 0})) is None  # three replicas run already
    capacity.release(first)
    assert capacity.allocate(two) == {"workerpool0-0": ("0", "1")}


def test_accelerator_jobs_without_gpus_run_on_cpu_with_a_warning_or_never_fit_when_strict():
    pool = container("gcr.io/p/vtp:1")
    pool["machine_spec"] = {
        **MACHINE,
        "accelerator_type": "NVIDIA_TESLA_A100",
        "accelerator_count": 2,
    }
    workers = {**pool, "replica_count": 3}
    plan = plan_job(spec(pool, workers))
    laptop = Capacity(())
    assert laptop.lacks_gpus(Needs.of(plan)) and not Capacity(tuple("01234567")).lacks_gpus(
        Needs.of(plan)
    )
    assert "--strict-accelerators" in laptop.never_fits(Needs.of(plan))  # the strict refusal
    on_cpu = Needs.of(plan, on_cpu=True)
    assert laptop.never_fits(on_cpu) == ""
    assert set(laptop.allocate(on_cpu).values()) == {()}  # CUDA_VISIBLE_DEVICES empty
    assert cpu_warning(spec(pool, workers), 0) == (
        "WARNING: workerPoolSpecs[0] asks for 2 x NVIDIA_TESLA_A100 (1 replica); "
        "workerPoolSpecs[1] asks for 2 x NVIDIA_TESLA_A100 each (3 replicas), but this machine "
        "has no GPU: the job runs on CPU (CUDA_VISIBLE_DEVICES is empty; "
        "`vtp local serve --strict-accelerators` refuses such jobs instead)."
    )
