"""The project image, built from this source: its tag, its variants, and Cloud Build's request.

Two variants of one Dockerfile, chosen by build arguments:

    cpu   python:3.11-slim, torch from PyTorch's CPU index (small: no CUDA libraries)
    gpu   pytorch/pytorch:<torch>-cuda<cuda>-cudnn9-runtime, PyTorch's CUDA base with the CUDA
          build of our torch pin already installed (pip finds the pin satisfied)

The tag is `<package version>-<digest>[-gpu]`, the digest a SHA-256 of a byte-reproducible
archive of everything the image is built from (`sdist`), so the same source always gives the
same tag and a changed file a new one. The image is `<repository>/vtp:<tag>`: its path holds a
`vtp` component, which is how the local service and upload_model recognise the project's image.

A team's image is ours plus the team's folder (`team_folder`: its files, ignore files honoured):
the archive holds its files under `team/`, and its Dockerfile is ours with `team_steps` after
the `WORKDIR TEAM_DIR` line, where our Dockerfile has put the working directory and the import
path, as the user's folder is for local replicas; the steps install the folder's
`requirements.txt` (under our constraints) and copy the folder there. From this repository
itself there is no team folder: the archive and the tag are ours alone.

Cloud Build takes the archive from the staging bucket (`gs://<project>_cloudbuild/source/...`,
gcloud's default) and runs `docker build` in the archive's top directory; the `Build` request
here is what `vtp image build` sends, and what `--dry-run` prints.
"""

import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from vtp.vertex import sdist, team_folder

NAME = "vertex-torch-pipelines"
IMAGE_NAME = "vtp"
SOURCES = (
    "Dockerfile", "README.md", "constraints.txt", "pyproject.toml", "setup.py",
    "compiled", "components", "pipelines", "trainer", "vtp",
)  # fmt: skip
"""What the Dockerfile copies: our part of the image depends on these and nothing else."""
OUR_DIR = "/opt/vtp"
"""Our Dockerfile's build directory (constraints.txt lies there)."""
TEAM_CONTEXT = "team"
"""Where the team's files sit in the build context."""
TEAM_DIR = "/workspace/team"
"""Where they land in the image: the working directory, first on PYTHONPATH (our Dockerfile)."""

CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
CUDA_VERSION = "12.8"
DOCKER_BUILDER = "gcr.io/cloud-builders/docker"
_REPOSITORY = re.compile(
    r"[a-z0-9-]+-docker\.pkg\.dev/[a-z][-a-z0-9]{4,28}[a-z0-9]/[a-z][-a-z0-9]*"
)


@dataclass(frozen=True)
class Variant:
    """A build of the Dockerfile: its base image and where torch comes from."""

    name: str
    base_image: str
    torch_index_url: str

    def build_args(self) -> dict[str, str]:
        """The Dockerfile's ARGs for this variant."""
        return {"BASE_IMAGE": self.base_image, "TORCH_INDEX_URL": self.torch_index_url}


def variant(gpu: bool, torch_version: str) -> Variant:
    """The CPU or the GPU variant for `torch_version` (our pin)."""
    if gpu:
        base = f"pytorch/pytorch:{torch_version}-cuda{CUDA_VERSION}-cudnn9-runtime"
        return Variant("gpu", base, "")
    return Variant("cpu", "python:3.11-slim", CPU_TORCH_INDEX)


def torch_pin(root: Path) -> str:
    """The torch version constraints.txt pins (`torch==X`)."""
    match = re.search(r"^torch==([\w.]+)\s*$", (root / "constraints.txt").read_text(), re.M)
    if not match:
        raise ValueError(f"{root / 'constraints.txt'} pins no torch version (torch==X)")
    return match.group(1)


def source_archive(
    root: Path, version: str, team: Mapping[str, sdist.SourceFile] | None = None
) -> bytes:
    """The reproducible `.tar.gz` of everything the image is built from: our sources and, for a
    team's image, the team's files (`team_folder.files`) with the Dockerfile's steps for them."""
    return sdist.write_sdist(NAME, version, context_files(root, team), mtime=sdist.DEFAULT_EPOCH)


def context_files(
    root: Path, team: Mapping[str, sdist.SourceFile] | None = None
) -> dict[str, sdist.SourceFile]:
    """The build context, keyed by path: `SOURCES` from `root`, the team's under `team/`."""
    files: dict[str, sdist.SourceFile] = {}
    for name in SOURCES:
        if (root / name).is_dir():
            files.update(sdist.collect(root, name))
        else:
            files[name] = sdist.SourceFile((root / name).read_bytes())
    if team is not None:
        steps = team_steps(team_folder.REQUIREMENTS in team)
        files["Dockerfile"] = sdist.SourceFile(_with_team(files["Dockerfile"].data, steps))
        files.update({f"{TEAM_CONTEXT}/{name}": data for name, data in team.items()})
    return files


def team_steps(requirements: bool) -> str:
    """The Dockerfile steps that put a team's folder into the image: its requirements first (a
    code edit does not reinstall them), then its files."""
    lines = ["# The team's folder (`vtp image build` from it, or --source DIR)"]
    if requirements:
        listed = f"{TEAM_DIR}/{team_folder.REQUIREMENTS}"
        lines += [
            f"COPY {TEAM_CONTEXT}/{team_folder.REQUIREMENTS} {listed}",
            f"RUN pip install -c {OUR_DIR}/constraints.txt -r {listed}",
        ]
    lines.append(f"COPY {TEAM_CONTEXT} {TEAM_DIR}")
    return "\n".join(lines) + "\n"


def _with_team(dockerfile: bytes, steps: str) -> bytes:
    """Our Dockerfile with `steps` right after its `WORKDIR TEAM_DIR` (before the entrypoint)."""
    marker = f"WORKDIR {TEAM_DIR}\n".encode()
    before, found, after = dockerfile.partition(marker)
    if not found:
        raise ValueError(f"the Dockerfile has no {marker.decode().strip()!r} line to add after")
    return before + found + steps.encode() + after


def dockerfile_steps(dockerfile: bytes) -> list[str]:
    """The Dockerfile's instructions, one a line: comments dropped, continuations joined."""
    text = dockerfile.decode().replace("\\\n", " ")
    lines = (" ".join(line.split()) for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def image_tag(version: str, archive: bytes, gpu: bool) -> str:
    """`<version>-<first 12 hex digits of the archive's SHA-256>`, plus `-gpu` for that variant."""
    digest = hashlib.sha256(archive).hexdigest()[:12]
    return f"{version}-{digest}" + ("-gpu" if gpu else "")


def check_repository(repository: str) -> str:
    """An Artifact Registry Docker repository `REGION-docker.pkg.dev/PROJECT/REPO`; ValueError."""
    repository = repository.rstrip("/")
    if not _REPOSITORY.fullmatch(repository):
        raise ValueError(
            f"{repository!r} is not an Artifact Registry Docker repository; use "
            "REGION-docker.pkg.dev/PROJECT/REPO, e.g. us-central1-docker.pkg.dev/my-project/ml"
        )
    return repository


def image_uri(repository: str, tag: str) -> str:
    """`<repository>/vtp:<tag>`."""
    return f"{check_repository(repository)}/{IMAGE_NAME}:{tag}"


def docker_args(image: str, chosen: Variant) -> list[str]:
    """`docker build` arguments for `image` from the Dockerfile in the build directory."""
    args = ["build", "--tag", image]
    for key, value in chosen.build_args().items():
        args += ["--build-arg", f"{key}={value}"]
    return [*args, "."]


def build_request(image: str, chosen: Variant, source_uri: str, version: str) -> dict:
    """Cloud Build's `Build` (REST JSON) that builds `image` from the archive at `source_uri`
    and pushes it."""
    bucket, _, obj = source_uri.removeprefix("gs://").partition("/")
    return {
        "source": {"storageSource": {"bucket": bucket, "object": obj}},
        "steps": [
            {
                "name": DOCKER_BUILDER,
                "dir": f"{NAME}-{version}",
                "args": docker_args(image, chosen),
            }
        ],
        "images": [image],
        "timeout": "3600s",
        "tags": ["vtp", chosen.name],
    }


def staging_uri(project: str, archive: bytes, bucket: str = "") -> str:
    """Where the source archive goes: gcloud's default bucket unless one is given."""
    digest = hashlib.sha256(archive).hexdigest()[:16]
    bucket = bucket.removeprefix("gs://").rstrip("/") or f"{project}_cloudbuild"
    return f"gs://{bucket}/source/{NAME}-{digest}.tar.gz"


def state_file(environ: Mapping[str, str] = os.environ) -> Path:
    """Where the last built image is remembered for `vtp compile|submit|schedule`."""
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "vtp" / "last-image.json"


def remember(image: str) -> None:
    """Record `image` as the last one built."""
    path = state_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"image": image}) + "\n")


def last_built() -> str | None:
    """The last image `vtp image build` built, if any."""
    try:
        return str(json.loads(state_file().read_text())["image"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
