"""The one place that names container images.

Every component runs on the project's image: the Dockerfile at the repository root bakes this
package (the trainer included) into it, so component bodies and training replicas share one
environment. `vtp compile --image` rewrites the image in the compiled YAML, so a team can point
pipelines at its own registry without touching code, and nothing from the environment leaks in.
`vertex_image` is what `--image` must be for Vertex AI (`compile`, `submit`, `schedule create`).
"""

import re

COMPONENT_IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"
"""Default image for components and training replicas (override with `vtp compile --image`)."""

PROJECT_IMAGE_NAMES: tuple[str, ...] = ("vtp", "vertex-torch-pipelines")
"""An image with one of these as a path component of its name is the project's image."""

VERTEX_IMAGE_EXAMPLE = "us-central1-docker.pkg.dev/PROJECT/REPO/vtp:TAG"
"""What a valid `--image` looks like (what `vtp image build` pushes), for error messages."""

TRAINER_METRICS: tuple[str, ...] = ("accuracy", "loss")
"""What the trainer can report to a tuning study (its --hypertune_metric choices)."""


def is_project_image(image_uri: str) -> bool:
    """True when `image_uri` names the project's image (tag and digest aside).

    The local service uses the same rule to run such a container as `python -m vtp.trainer`.
    """
    name = image_uri.split("@", 1)[0]
    if name.rfind(":") > name.rfind("/"):
        name = name[: name.rfind(":")]  # drop the tag, keep a registry's host:port
    return any(part in PROJECT_IMAGE_NAMES for part in name.split("/"))


_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_REFERENCE = re.compile(
    rf"(?P<host>{_LABEL}(?:\.{_LABEL})+(?::[0-9]+)?)"
    rf"(?P<path>(?:/{_COMPONENT})+)"
    r"(?::(?P<tag>\w[\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?",
    re.ASCII,
)
"""REGISTRY-HOST[:PORT]/PATH[:TAG][@sha256:DIGEST], Docker's reference grammar with a host."""
_LOOPBACK = re.compile(r"(localhost|127(?:\.\d+){3}|0\.0\.0\.0|\[::1?\])(?::\d+)?")
_PATH_SHAPES = {"pkg.dev": "PROJECT/REPO/IMAGE", "gcr.io": "PROJECT/IMAGE"}
"""The path each Google registry domain (and its subdomains) needs after the host."""


def vertex_image(image: str) -> str:
    """`image` when Vertex AI can pull it; ValueError saying why not and what would do.

    Vertex pulls each task's and worker pool's image itself, minutes after the request was
    accepted, so an image it cannot pull is accepted by the API and then fails every task. What
    it can pull is a registry reference: a host that is a domain (it has a dot:
    `us-central1-docker.pkg.dev`, `gcr.io`, `eu.gcr.io`, `registry.example.com:5000`), then the
    image's path (PROJECT/REPO/IMAGE on Artifact Registry, PROJECT/IMAGE on Container Registry),
    then a tag (`:1.2`) or a digest (`@sha256:` and 64 hex digits), which say what runs. Refused:
    the placeholder COMPONENT_IMAGE (any tag; compiled pipelines name it until `--image` or
    `vtp image build` replaces it, and no image is pushed there), a name without a registry
    (`vtp:dev`, `IMAGE`: Docker's short names mean a local image or Docker Hub; write
    `docker.io/...` for the latter), localhost or loopback registries (this machine's, not one
    Vertex reaches), and local files or paths (`/tmp/vtp.tar`). The local service runs local
    images, so `--local` runs do not go through this check.
    """
    reason = _unpullable(image)
    if reason:
        raise ValueError(
            f"{image!r} {reason}; Vertex AI pulls REGISTRY/PATH:TAG or "
            f"REGISTRY/PATH@sha256:DIGEST, e.g. {VERTEX_IMAGE_EXAMPLE}"
        )
    return image


def _unpullable(image: str) -> str:
    """Why Vertex AI could not pull `image` ("" when it could)."""
    host = image.split("/", 1)[0]
    if image.startswith(("/", ".", "~")) or image.endswith((".tar", ".tar.gz", ".tgz")):
        return "is a local file or path, not an image in a registry"
    if image.split("@", 1)[0].rsplit(":", 1)[0] == COMPONENT_IMAGE.rsplit(":", 1)[0]:
        return (
            "is the placeholder the pipelines are compiled with, not a pushed image "
            "(`vtp image build` pushes one and prints it)"
        )
    if _LOOPBACK.fullmatch(host):
        return f"names a registry on this machine ({host}), which Vertex AI cannot reach"
    if "/" not in image or "." not in host:
        return "names no registry (a host with a dot, e.g. us-central1-docker.pkg.dev)"
    match = _REFERENCE.fullmatch(image)
    if match is None:
        return "is not an image reference (lowercase path, tag of letters, digits, '.', '_', '-')"
    if not match["tag"] and not match["digest"]:
        return "has no tag or digest (:TAG or @sha256:DIGEST)"
    name = match["host"].split(":", 1)[0]
    for domain, shape in _PATH_SHAPES.items():
        if f".{name}".endswith(f".{domain}") and match["path"].count("/") <= shape.count("/"):
            return f"is too short: {name} images are {name}/{shape}"
    return ""
