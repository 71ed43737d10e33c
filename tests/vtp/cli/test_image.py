"""`vtp image build --dry-run` and `vtp submit --image`: Cloud Build's request and the image in
every task, checked with the official clients' own types."""

import json
import re
import shutil
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1
from google.cloud.devtools import cloudbuild_v1

from tests.fixtures import REPO, run_vtp
from vtp.vertex import image_build

REPOSITORY = "us-central1-docker.pkg.dev/my-project/ml"


def dockerfile_args() -> set[str]:
    return set(re.findall(r"^ARG (\w+)", (REPO / "Dockerfile").read_text(), re.MULTILINE))


def dry_run(capsys, *flags: str) -> cloudbuild_v1.Build:
    code, out, err = run_vtp(
        capsys, "image", "build", "--repository", REPOSITORY, "--dry-run", *flags
    )
    assert code == 0, err
    return cloudbuild_v1.Build.from_json(out)  # unknown fields would raise


@pytest.mark.parametrize(
    ("flags", "base", "index"),
    [
        ((), "python:3.11-slim", "https://download.pytorch.org/whl/cpu"),
        (("--gpu",), f"pytorch/pytorch:{image_build.torch_pin(REPO)}-cuda", ""),
    ],
    ids=["cpu", "gpu"],
)
def test_dry_run_is_a_cloud_build_request_from_our_dockerfile(capsys, flags, base, index) -> None:
    build = dry_run(capsys, *flags)
    (step,) = build.steps
    assert step.name == "gcr.io/cloud-builders/docker" and step.args[0] == "build"
    args = dict(a.split("=", 1) for a in step.args if "=" in a)
    assert set(args) == dockerfile_args() == {"BASE_IMAGE", "TORCH_INDEX_URL"}
    assert args["BASE_IMAGE"].startswith(base) and args["TORCH_INDEX_URL"] == index
    image = step.args[step.args.index("--tag") + 1]
    assert list(build.images) == [image] and image.startswith(f"{REPOSITORY}/vtp:0.1.0-")
    assert image.endswith("-gpu") == bool(flags)
    assert build.source.storage_source.bucket == "my-project_cloudbuild"
    assert step.dir == "vertex-torch-pipelines-0.1.0"  # the archive's top directory


def test_the_same_source_gives_the_same_tag_and_a_change_a_new_one(tmp_path: Path) -> None:
    for name in image_build.SOURCES:
        source = REPO / name
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=ignore, symlinks=True)  # as a clone
        else:
            shutil.copy(source, tmp_path / name)
    tags = [image_build.image_tag("0.1.0", image_build.source_archive(root, "0.1.0"), False)
            for root in (REPO, tmp_path, tmp_path)]  # fmt: skip
    assert tags[0] == tags[1] == tags[2]
    (tmp_path / "trainer" / "train.py").write_text("# changed\n", encoding="utf-8")
    changed = image_build.image_tag("0.1.0", image_build.source_archive(tmp_path, "0.1.0"), False)
    assert changed != tags[0]


def test_a_bad_repository_is_refused_naming_the_flag(capsys) -> None:
    code, out, err = run_vtp(capsys, "image", "build", "--repository", "gcr.io/x", "--dry-run")
    assert code == 2 and "--repository" in err and out == ""


def test_submit_dry_run_names_the_image_in_every_task(capsys) -> None:
    image = f"{REPOSITORY}/vtp:0.1.0-abc"
    code, out, err = run_vtp(
        capsys, "submit", "train", "--project=my-project", "--region=us-central1",
        "--pipeline-root=gs://my-bucket/root", "--param", "output_root=gs://my-bucket/runs",
        "--image", image, "--dry-run",
    )  # fmt: skip
    assert code == 0, err
    job = aiplatform_v1.PipelineJob.from_json(out)
    spec = json.loads(aiplatform_v1.PipelineJob.to_json(job))["pipelineSpec"]
    executors = spec["deploymentSpec"]["executors"].values()
    assert {e["container"]["image"] for e in executors} == {image}
    assert "us-docker.pkg.dev/vertex-torch-pipelines" not in out


def test_the_last_built_image_is_the_default(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    image = f"{REPOSITORY}/vtp:0.1.0-last"
    image_build.remember(image)
    code, out, err = run_vtp(
        capsys, "submit", "export", "--project=my-project", "--region=us-central1",
        "--pipeline-root=gs://my-bucket/root", "--param", "checkpoints_uri=gs://my-bucket/c",
        "--dry-run",
    )  # fmt: skip
    assert code == 0, err
    assert image in out and "us-docker.pkg.dev/vertex-torch-pipelines" not in out
