"""`vtp image build`: the team's image, with a local Docker or Podman engine or through Cloud Build.

    vtp image build --repository us-central1-docker.pkg.dev/my-project/ml [--gpu] [--push]
    vtp image build --repository ... --source DIR  # the team folder (default: this folder)
    vtp image build --repository ... --dry-run     # Cloud Build's Build request, sends nothing

The image is ours plus the folder it is run from (or `--source`): its files, less what its
`.gcloudignore`/`.dockerignore` leave out (`vtp.vertex.team_folder`), in `/workspace/team`, with
its `requirements.txt` installed. Run from this repository's checkout, the folder is ours and the
image ours alone. It is `<repository>/vtp:<version>-<digest>[-gpu]`, the digest of everything that
went in (`vtp.vertex.image_build`). `--dry-run` prints the Build request on stdout and, on stderr,
the image, its sources and the Dockerfile's steps; it sends nothing and needs no engine. With an
engine that answers it is built here (and pushed with --push); otherwise Cloud Build builds
and pushes it in the repository's project. The image built last becomes the default `--image`
of `vtp compile`, `vtp submit` and `vtp schedule create`.
"""

import argparse
import io
import json
import os
import shlex
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vtp.cli import UsageError, command_group, failures

BUILD_FLAGS_ENV = "VTP_IMAGE_BUILD_FLAGS"
"""More flags for a local engine's `build` (shell words), ahead of the context directory."""

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
    add(
        "--source",
        default=".",
        metavar="DIR",
        help="the team folder to add to our image (default: this folder)",
    )
    add(
        "--dry-run",
        action="store_true",
        help="print the image, its sources and Cloud Build's Build request; send nothing",
    )
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
    folder, team = _team(Path(args.source), root)
    version = _version()
    context = image_build.context_files(root, team)
    archive = image_build.source_archive(root, version, team)
    chosen = image_build.variant(args.gpu, image_build.torch_pin(root))
    image = image_build.image_uri(repository, image_build.image_tag(version, archive, args.gpu))
    project = repository.split("/")[1]
    source = image_build.staging_uri(project, archive, args.staging_bucket)
    request = image_build.build_request(image, chosen, source, version)
    _describe(image, folder, team, context, steps=args.dry_run)
    if args.dry_run:
        print(json.dumps(request, indent=2))
        return 0
    from vtp import containers
    from vtp.engine.vertex_tasks import container_engine

    # $VTP_CONTAINER_ENGINE's command line (docs/containers.md), else docker or podman, whichever
    # answers
    engine = containers.engine_from(os.environ) or tuple(filter(None, [container_engine()]))
    if engine:
        _local_build(engine, image, chosen, archive, args.push)
    else:
        _cloud_build(project, request, source, archive)
    image_build.remember(image)
    print(image)
    return 0


def _team(source: Path, root: Path) -> tuple[Path, dict | None]:
    """The team folder and its files; None for this repository's checkout (ours already)."""
    from vtp.vertex import team_folder

    folder = source.expanduser().resolve()
    if not folder.is_dir():
        raise UsageError(f"--source: {source} is not a directory")
    if folder == root:
        return folder, None
    try:
        return folder, team_folder.files(folder, root)
    except ValueError as exc:  # too large, or a link to a directory
        raise UsageError(str(exc)) from None


def _describe(image: str, folder: Path, team: dict | None, context: dict, steps: bool) -> None:
    """What goes into the image, on stderr: ours by top-level entry, the team's file by file,
    and (`steps`) the Dockerfile's instructions."""
    from vtp.vertex import image_build, team_folder

    def say(line: str) -> None:
        print(line, file=sys.stderr)

    say(f"image: {image}")
    ours = [n for n in context if not n.startswith(f"{image_build.TEAM_CONTEXT}/")]
    counts = {top: sum(n.split("/")[0] == top for n in ours) for top in image_build.SOURCES}
    entries = [f"{top}/ ({count} files)" if count > 1 else top for top, count in counts.items()]
    say(f"ours: {', '.join(entries)}")
    if team is None:
        say(f"team folder: none ({folder} is this repository's checkout)")
    else:
        say(f"team folder: {folder} -> {image_build.TEAM_DIR} ({len(team)} files)")
        for name in sorted(team):
            say(f"  {image_build.TEAM_CONTEXT}/{name}")
        if team_folder.REQUIREMENTS in team:
            say(f"requirements: pip install -r {team_folder.REQUIREMENTS} in the image")
    if steps:
        say("Dockerfile:")
        for step in image_build.dockerfile_steps(context["Dockerfile"].data):
            say(f"  {step}")


def _checkout() -> Path:
    root = Path(__file__).resolve().parents[2]
    if not (root / "Dockerfile").is_file():
        raise UsageError("the image is built from a clone of the repository; run vtp from one")
    return root


def _version() -> str:
    from importlib.metadata import version

    return version("vertex-torch-pipelines")


def _local_build(
    engine: Sequence[str], image: str, chosen: "Variant", archive: bytes, push: bool
) -> None:
    """Build from the archive's own files (what Cloud Build would get), unpacked here, with the
    engine's own build flags from $VTP_IMAGE_BUILD_FLAGS (a base image of this machine's,
    `--build-arg BASE_IMAGE=...`; `--network host`; package mirrors as `--volume`s)."""
    from vtp.vertex.image_build import docker_args

    name = Path(engine[0]).name
    print(f"Building {image} with the local {name} engine", file=sys.stderr)
    build, *rest = docker_args(image, chosen)
    argv = [*engine, build, *rest[:-1], *shlex.split(os.environ.get(BUILD_FLAGS_ENV, "")), rest[-1]]
    with tempfile.TemporaryDirectory(prefix="vtp-image-") as scratch:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            tar.extractall(scratch, filter="data")
        (context,) = Path(scratch).iterdir()  # the archive's one top directory
        if subprocess.run(argv, cwd=context).returncode:
            raise failures.Failed(f"{name} build failed (its output is above)")
    if push and subprocess.run([*engine, "push", image]).returncode:
        raise failures.Failed(
            f"{name} push {image} failed; `gcloud auth configure-docker` may help"
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
