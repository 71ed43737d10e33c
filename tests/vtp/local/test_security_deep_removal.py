"""Issue #49: a folder tree a job leaves 1,200 levels deep never makes a delete a 500 or a
restart crash.

The attack, as a job plays it: a CustomJob's replica (or a pipeline task, or a tuning trial)
makes a folder tree 1,200 levels deep where it may write (its working folder, its run's
workspace, its metric file's folder), through open folders as any program can. Before the guard
every removal of those folders was `shutil.rmtree`, which recurses once per folder and stops
with RecursionError (which `ignore_errors=True` does not catch): deleting the job answered 500
and left everything, and a restarted replica's start crashed, failing the job with an internal
error. Now they go through `tree_walk.remove_tree`, which never recurses.
"""

import ast
import json
from pathlib import Path
from typing import cast

import pytest
import yaml
from google.cloud.aiplatform_v1 import HyperparameterTuningJob, PipelineState
from kfp import compiler, dsl

from tests.fixtures import LocalService, State, wait_for_state, wait_until
from tests.pipelines.tiny_pipeline import pipeline_client, tiny_job, wait_for_pipeline
from tests.vtp.engine.test_tree_walk import DeepTrees
from tests.vtp.engine.test_tree_walk import deep_trees as deep_trees  # fixture
from tests.vtp.local.conftest import DEEP_TREE, OTHER_IMAGE, custom_job
from vtp.vertex.states import JOB_ENDED

DEPTH = 1_200
"""Past the ~1,000 frames `shutil.rmtree` recurses through before RecursionError."""

LEAVE_AND_END = DEEP_TREE + "deep(os.path.join(os.getcwd(), 'deep'), int(sys.argv[1]))\n"
"""A replica that leaves the deep tree in its working folder, then succeeds."""

LEAVE_THEN_RESTART = (
    DEEP_TREE
    + r"""
record, depth = sys.argv[1], int(sys.argv[2])
starts = os.path.join(record, "starts")
with open(starts, "a") as f:
    f.write("x")
if os.path.getsize(starts) == 1:  # the first start leaves the tree, then fails as preempted
    deep(os.path.join(os.getcwd(), "deep"), depth)
    sys.exit(6)  # a transient exit: Vertex restarts the replica in a new container
with open(os.path.join(record, "found"), "w") as f:  # the restart: what its folder held
    f.write(repr(sorted(os.listdir("."))))
"""
)
"""A replica whose first start leaves the deep tree and exits 6; the next writes what its
working folder held when it started."""


def pool(script: str, *args: str) -> dict:
    """One replica running `script` (python -c) on this machine."""
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": OTHER_IMAGE, "command": ["python", "-c", script, *args]},
    }


def job_dir(service: LocalService, name: str) -> Path:
    return service.state_dir / "jobs" / name.rsplit("/", 1)[1]


def test_deleting_a_job_removes_the_deep_tree_its_replica_left(
    local_service, deep_trees: DeepTrees
):
    jobs = local_service.client()
    created = jobs.create_custom_job(
        parent=local_service.parent, custom_job=custom_job(pool(LEAVE_AND_END, str(DEPTH)))
    )
    ended = wait_for_state(jobs, created.name, timeout=120)
    assert ended.state == State.JOB_STATE_SUCCEEDED, ended.error.message
    folder = deep_trees.remove_later(job_dir(local_service, created.name))
    assert (folder / "work" / "workerpool0-0" / "deep" / "d" / "d").is_dir()

    session = local_service.session()
    deleted = session.delete(f"{local_service.url}/v1/{created.name}", timeout=60)
    assert deleted.status_code == 200, deleted.text  # was a 500 (RecursionError)
    assert deleted.json()["done"]
    assert not folder.exists()  # every one of the 1,200 folders, and the leaf
    gone = session.get(f"{local_service.url}/v1/{created.name}", timeout=30)
    assert gone.status_code == 404


def test_a_replica_restarted_over_its_deep_tree_starts_in_an_empty_folder(
    local_service, tmp_path, deep_trees: DeepTrees
):
    jobs = local_service.client()
    job = custom_job(pool(LEAVE_THEN_RESTART, str(tmp_path), str(DEPTH)))
    created = jobs.create_custom_job(parent=local_service.parent, custom_job=job)
    deep_trees.remove_later(job_dir(local_service, created.name))
    ended = wait_for_state(jobs, created.name, timeout=120)
    assert ended.state == State.JOB_STATE_SUCCEEDED, ended.error.message  # was INTERNAL
    assert (tmp_path / "starts").read_text() == "xx"
    assert (tmp_path / "found").read_text() == "[]"  # a new container: nothing of the first


@dsl.component(base_image=OTHER_IMAGE)
def leave_deep(workspace: str, depth: int):
    """Leave a folder tree `depth` deep in the run's workspace."""
    import os

    here = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=here)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
        os.close(here)
        here = below
    os.close(here)


@dsl.pipeline(
    name="leaves-deep",
    pipeline_config=dsl.PipelineConfig(workspace=dsl.WorkspaceConfig(size="1Mi")),
)
def leaves_deep(depth: int):
    leave_deep(workspace=dsl.WORKSPACE_PATH_PLACEHOLDER, depth=depth)


@pytest.mark.slow
def test_deleting_a_pipeline_job_removes_the_deep_tree_its_task_left(
    local_service, tmp_path, deep_trees: DeepTrees
):
    compiled = tmp_path / "compiled.yaml"
    compiler.Compiler().compile(leaves_deep, str(compiled))
    package = tmp_path / "leaves-deep.yaml"  # its first document: the SDK reads only one
    package.write_text(yaml.safe_dump(next(yaml.safe_load_all(compiled.read_text()))))
    client = pipeline_client(local_service.url)
    created = client.create_pipeline_job(
        parent=local_service.parent, pipeline_job=tiny_job(package, depth=DEPTH)
    )
    run_dir = deep_trees.remove_later(
        local_service.state_dir / "pipelines" / created.name.rsplit("/", 1)[1]
    )
    done = wait_for_pipeline(client, created.name, timeout=120)
    assert done.state == PipelineState.PIPELINE_STATE_SUCCEEDED, done.error.message
    assert (run_dir / "workspace" / "d" / "d").is_dir()

    deleted = local_service.session().delete(f"{local_service.url}/v1/{created.name}", timeout=60)
    assert deleted.status_code == 200, deleted.text  # was a 500 (RecursionError)
    assert not run_dir.exists()


LEAVE_IN_METRICS = (
    DEEP_TREE
    + r"""
import hypertune
depth = int(sys.argv[1])
deep(os.path.join(os.path.dirname(os.environ["CLOUD_ML_HP_METRIC_FILE"]), "deep"), depth)
deep(os.path.join(os.getcwd(), "deep"), depth)
hypertune.HyperTune().report_hyperparameter_tuning_metric(
    hyperparameter_metric_tag="score", metric_value=1.0, global_step=1
)
"""
)
"""A trial that leaves the deep tree beside its metric file and in its working folder."""


@pytest.mark.slow
def test_deleting_a_tuning_job_removes_the_deep_trees_its_trial_left(
    local_service, deep_trees: DeepTrees
):
    body = {
        "displayName": "leaves-deep",
        "studySpec": {
            "metrics": [{"metricId": "score", "goal": "MAXIMIZE"}],
            "parameters": [
                {"parameterId": "x", "doubleValueSpec": {"minValue": 0.0, "maxValue": 1.0}}
            ],
        },
        "maxTrialCount": 1,
        "parallelTrialCount": 1,
        "trialJobSpec": {"workerPoolSpecs": [pool(LEAVE_IN_METRICS, str(DEPTH))]},
    }
    client = local_service.client()
    created = client.create_hyperparameter_tuning_job(
        parent=local_service.parent,
        hyperparameter_tuning_job=HyperparameterTuningJob.from_json(json.dumps(body)),
    )
    metrics = deep_trees.remove_later(
        local_service.state_dir / "tuning" / created.name.rsplit("/", 1)[1]
    )

    def ended() -> HyperparameterTuningJob | None:
        job = client.get_hyperparameter_tuning_job(name=created.name)
        return job if job.state in JOB_ENDED else None

    job = cast(HyperparameterTuningJob, wait_until(ended, 120, "the tuning job to end"))
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error.message
    trial_dir = deep_trees.remove_later(job_dir(local_service, job.trials[0].custom_job))
    assert (metrics / "1" / "deep" / "d").is_dir()
    assert (trial_dir / "work" / "workerpool0-0" / "deep" / "d").is_dir()

    deleted = local_service.session().delete(f"{local_service.url}/v1/{created.name}", timeout=60)
    assert deleted.status_code == 200, deleted.text  # was a 500 (RecursionError)
    assert not metrics.exists() and not trial_dir.exists()


def test_no_module_of_the_service_calls_shutil_rmtree():
    """`shutil.rmtree` recurses once per folder (3.11-3.13): every removal of a tree goes
    through `tree_walk.remove_tree`, so a new one cannot slip back in."""
    root = Path(__file__).resolve().parents[3] / "vtp"
    found = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in sorted(root.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call) and _called_name(node.func) == "rmtree"
    ]
    assert found == [], found


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""
