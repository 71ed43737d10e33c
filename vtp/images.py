"""The one place that names container images.

Every component runs on the project's image: the Dockerfile at the repository root bakes this
package (the trainer included) into it, so component bodies and training replicas share one
environment. `vtp compile --image` rewrites the image in the compiled YAML, so a team can point
pipelines at its own registry without touching code, and nothing from the environment leaks in.
"""

COMPONENT_IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"
"""Default image for components and training replicas (override with `vtp compile --image`)."""

PROJECT_IMAGE_NAMES: tuple[str, ...] = ("vtp", "vertex-torch-pipelines")
"""An image with one of these as a path component of its name is the project's image."""

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
