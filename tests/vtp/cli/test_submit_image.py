"""`--image` replaces our image and no other; without an image, Vertex runs are refused.

Run as a user would: from a folder of their own outside the repository, with a pipeline file
that has its own lightweight component besides ours, compiled with kfp's compiler.
"""

import importlib.util
import json
from pathlib import Path

import pytest

from tests.fixtures import VERTEX_TARGET, run_vtp
from vtp.images import COMPONENT_IMAGE
from vtp.vertex.image_rewrite import names_placeholder, retarget

TEAM = "europe-docker.pkg.dev/team-project/ml/team-image:7"
"""What the user passes as --image (a name that is not ours by any rule)."""
OTHER = "gcr.io/someone-else/tool:1"
"""An image of someone else's that a job spec in the pipeline names."""

PIPELINE = f'''
from kfp import dsl

from vtp.components.custom_job import custom_job
from vtp.components.evaluate_checkpoints import evaluate_checkpoints

IMAGE = "{COMPONENT_IMAGE}"


@dsl.component(base_image="python:3.11-slim")
def say(message: str) -> str:
    print(message)
    return message


@dsl.pipeline(name="my-train")
def my_train(project: str, output_root: str):
    say(message="hello")
    job = custom_job(
        project=project,
        location="us-central1",
        display_name="train",
        output_root=output_root,
        worker_pool_specs=[f"machine-type=n1-standard-8,container-image-uri={{IMAGE}}"],
    )
    custom_job(
        project=project,
        location="us-central1",
        display_name="train",
        output_root=output_root,
        job_spec={{"workerPoolSpecs": [
            {{"machineSpec": {{"machineType": "n1-standard-4"}}, "replicaCount": 1,
             "containerSpec": {{"imageUri": IMAGE}}}},
            {{"machineSpec": {{"machineType": "n1-standard-4"}}, "replicaCount": 1,
             "containerSpec": {{"imageUri": "{OTHER}"}}}},
        ]}},
    ).after(job)
    evaluate_checkpoints(checkpoints=job.outputs["checkpoints"], threshold=0.9)
'''
PARAMS = ("--param=output_root=gs://my-bucket/out",)


@pytest.fixture
def user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user's folder (outside the repository, no image built) holding my_pipeline.py and
    my_pipeline.yaml, compiled as the README shows; the working directory."""
    from kfp import compiler

    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "my_pipeline.py").write_text(PIPELINE)
    spec = importlib.util.spec_from_file_location("my_pipeline", folder / "my_pipeline.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    compiler.Compiler().compile(module.my_train, str(folder / "my_pipeline.yaml"))
    monkeypatch.chdir(folder)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_AI_REGION"):
        monkeypatch.delenv(name, raising=False)
    return folder


def dry_run(capsys: pytest.CaptureFixture[str], *flags: str) -> dict:
    code, out, err = run_vtp(
        capsys, "submit", "my_pipeline.yaml", *VERTEX_TARGET, *PARAMS, *flags, "--dry-run"
    )
    assert code == 0, err
    return json.loads(out)


def executor_images(body: dict) -> dict[str, str]:
    executors = body["pipelineSpec"]["deploymentSpec"]["executors"]
    return {name: e["container"]["image"] for name, e in executors.items()}


def assert_ours_became(body: dict, image: str) -> None:
    images = executor_images(body)
    assert images.pop("exec-say") == "python:3.11-slim"
    assert set(images.values()) == {image}, images
    text = json.dumps(body)
    assert COMPONENT_IMAGE not in text
    assert f"container-image-uri={image}" in text
    tasks = body["pipelineSpec"]["root"]["dag"]["tasks"]
    pools = tasks["custom-job-2"]["inputs"]["parameters"]["job_spec"]["runtimeValue"]["constant"]
    uris = [p["containerSpec"]["imageUri"] for p in pools["workerPoolSpecs"]]
    assert uris == [image, OTHER]


def test_image_replaces_ours_everywhere_and_nothing_else(capsys, user_folder) -> None:
    assert_ours_became(dry_run(capsys, f"--image={TEAM}"), TEAM)


@pytest.mark.parametrize(
    "ref", ["my_pipeline.py", "my_pipeline.py:my_train", "my_pipeline:my_train"]
)
def test_the_pipeline_file_itself_is_submitted_the_same_way(capsys, user_folder, ref) -> None:
    code, out, err = run_vtp(
        capsys, "submit", ref, *VERTEX_TARGET, *PARAMS, f"--image={TEAM}", "--dry-run"
    )
    assert code == 0, err
    assert_ours_became(json.loads(out), TEAM)


def test_the_last_build_is_the_default_the_same_way(capsys, user_folder) -> None:
    from vtp.vertex.image_build import remember

    built = "us-central1-docker.pkg.dev/my-project/ml/vtp:0.1.0-abcdef012345"
    remember(built)
    assert_ours_became(dry_run(capsys), built)
    assert_ours_became(dry_run(capsys, f"--image={TEAM}"), TEAM)  # the flag wins


@pytest.mark.parametrize(
    "argv",
    [
        ["submit", "my_pipeline.yaml", *VERTEX_TARGET, *PARAMS, "--dry-run"],
        ["submit", "my_pipeline.yaml", *VERTEX_TARGET, *PARAMS],
        ["submit", "train", *VERTEX_TARGET, "--param=output_root=gs://my-bucket/o", "--dry-run"],
        ["schedule", "create", "nightly", "--pipeline=my_pipeline.yaml", "--cron=0 3 * * *",
         *VERTEX_TARGET, *PARAMS, "--dry-run"],
        ["schedule", "create", "nightly", "--pipeline=train", "--cron=0 3 * * *",
         *VERTEX_TARGET, "--param=output_root=gs://my-bucket/o"],
    ],
    ids=["submit-dry-run", "submit", "submit-train", "schedule-dry-run", "schedule-train"],
)  # fmt: skip
def test_the_placeholder_is_refused_in_one_line(capsys, user_folder, argv) -> None:
    code, out, err = run_vtp(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1, err
    assert err.startswith("vtp: error: --image: the pipeline would run the placeholder image ")
    assert COMPONENT_IMAGE in err and "`vtp image build` or pass --image" in err


def test_a_bad_image_is_refused_naming_the_flag(capsys, user_folder) -> None:
    code, out, err = run_vtp(
        capsys, "submit", "my_pipeline.yaml", *VERTEX_TARGET, *PARAMS, "--image=a,b", "--dry-run"
    )
    assert (code, out) == (2, "")
    assert err.startswith("vtp: error: --image: ") and err.count("\n") == 1


def test_local_runs_need_no_image(user_folder) -> None:
    from vtp.cli.submit import template

    assert (
        template("my_pipeline.yaml", None, local=True).resolve() == user_folder / "my_pipeline.yaml"
    )


def test_retarget_touches_only_whole_images_of_ours(monkeypatch) -> None:
    text = json.dumps(
        {
            "a": f"machine-type=x,container-image-uri={COMPONENT_IMAGE},replica-count=1",
            "b": json.dumps({"pythonPackageSpec": {"executorImageUri": "reg.io/x/vtp:2"}}),
            "c": f"executor-image-uri={OTHER},python-module=m",
            "d": "gs://bucket/vtp/data",
            "e": f"not this one: {COMPONENT_IMAGE}-gpu",
            "f": "mine.example.com/team/serve:1",
        }
    )
    done = json.loads(retarget(text, TEAM, prefixes=("mine.example.com/team/",)))
    assert done["a"] == f"machine-type=x,container-image-uri={TEAM},replica-count=1"
    assert json.loads(done["b"]) == {"pythonPackageSpec": {"executorImageUri": TEAM}}
    assert done["c"] == f"executor-image-uri={OTHER},python-module=m"
    assert done["d"] == "gs://bucket/vtp/data"
    assert done["e"] == f"not this one: {COMPONENT_IMAGE}-gpu"
    assert done["f"] == TEAM
    assert names_placeholder(text) and not names_placeholder(json.dumps(done))
