"""`vtp image build`: the project image, with a local Docker engine or through Cloud Build.

    vtp image build --repository us-central1-docker.pkg.dev/my-project/ml [--gpu] [--push]
    vtp image build --repository ... --dry-run     # Cloud Build's Build request, sends nothing

The image is `<repository>/vtp:<version>-<digest>[-gpu]` (`vtp.vertex.image_build`). With a
reachable Docker engine it is built here (and pushed with --push); otherwise Cloud Build builds
and pushes it in the repository's project. The image built last becomes the default `--image`
of `vtp compile`, `vtp submit` and `vtp schedule create`.
"""

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from vtp.cli import UsageError, command_group, failures

if TYPE_CHECKING:  # imported when the command runs, so that `vtp --help` stays fast
    from vtp.vertex.image_build import Variant


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `image build`."""
    commands = command_group(subparsers, "image", "build and push the project image")
    parser = commands.add_parser("build", help="build the project image", allow_abbrev=False)
    add = parser.add_argument
    add("--repository", required=True, help="REGION-docker.pkg.dev/PROJECT/REPO to push to")
    add("--gpu", action="store_true", help="the CUDA variant (PyTorch's CUDA base image)")
    add("--push", action="store_true", help="push after a local build (Cloud Build always does)")
    add("--dry-run", action="store_true", help="print Cloud Build's Build request, send nothing")
    add(
        "--staging-bucket",
        default="",
        help="gs:// bucket for the source (default PROJECT_cloudbuild)",
    )
    parser.set_defaults(func=_build)


def _build(args: argparse.Namespace) -> int:
    from vtp.vertex import image_build

    try:
        repository = image_build.check_repository(args.repository)
    except ValueError as exc:
        raise UsageError(f"--repository: {exc}") from None
    root = _checkout()
    version = _version()
    archive = image_build.source_archive(root, version)
    chosen = image_build.variant(args.gpu, image_build.torch_pin(root))
    image = image_build.image_uri(repository, image_build.image_tag(version, archive, args.gpu))
    project = repository.split("/")[1]
    source = image_build.staging_uri(project, archive, args.staging_bucket)
    request = image_build.build_request(image, chosen, source, version)
    if args.dry_run:
        print(json.dumps(request, indent=2))
        return 0
    if _docker_reachable():
        _docker(image, chosen, root, args.push)
    else:
        _cloud_build(project, request, source, archive)
    image_build.remember(image)
    print(image)
    return 0


def _checkout() -> Path:
    root = Path(__file__).resolve().parents[2]
    if not (root / "Dockerfile").is_file():
        raise UsageError("the image is built from a clone of the repository; run vtp from one")
    return root


def _version() -> str:
    from importlib.metadata import version

    return version("vertex-torch-pipelines")


def _docker_reachable() -> bool:
    if not shutil.which("docker"):
        return False
    probe = subprocess.run(["docker", "info"], capture_output=True, timeout=20)
    return probe.returncode == 0


def _docker(image: str, chosen: "Variant", root: Path, push: bool) -> None:
    from vtp.vertex.image_build import docker_args

    print(f"Building {image} with the local Docker engine", file=sys.stderr)
    if subprocess.run(["docker", *docker_args(image, chosen)], cwd=root).returncode:
        raise failures.Failed("docker build failed (its output is above)")
    if push and subprocess.run(["docker", "push", image]).returncode:
        raise failures.Failed(
            f"docker push {image} failed; `gcloud auth configure-docker` may help"
        )


def _cloud_build(project: str, request: dict, source: str, archive: bytes) -> None:
    from google.cloud.devtools import cloudbuild_v1

    from vtp.vertex.staging import stage

    print(f"No Docker engine here: building with Cloud Build in {project}", file=sys.stderr)
    failures.call(lambda: stage([(source, archive)]), "Cloud Storage")
    client = failures.call(cloudbuild_v1.CloudBuildClient, "Cloud Build")
    build = cloudbuild_v1.Build.from_json(json.dumps(request))
    operation = failures.call(
        lambda: client.create_build(project_id=project, build=build), "Cloud Build"
    )
    result = failures.call(lambda: operation.result(timeout=3600), "Cloud Build")
    if result.status != cloudbuild_v1.Build.Status.SUCCESS:
        raise failures.Failed(
            f"Cloud Build {result.id} ended {result.status.name}: {result.log_url}"
        )
