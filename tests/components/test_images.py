"""The project's image as components recognise it, in agreement with the service and trainer."""

import pytest

from vtp.images import (
    COMPONENT_IMAGE,
    TRAINER_METRICS,
    VERTEX_IMAGE_EXAMPLE,
    is_project_image,
    vertex_image,
)
from vtp.local.runtime import launch
from vtp.trainer.config import Config
from vtp.trainer.tasks import CLASSIFICATION_GOALS, digits, goals


@pytest.mark.parametrize(
    ("image", "ours"),
    [
        (COMPONENT_IMAGE, True),
        ("us-docker.pkg.dev/my-project/vtp/trainer:latest", True),
        ("europe-docker.pkg.dev/acme/ml/vtp:1", True),
        ("localhost:5000/vtp@sha256:abc", True),
        ("python:3.11", False),
        ("vtp.example.com/team/trainer:1", False),
        ("us-docker.pkg.dev/my-project/team/vtp-fork:1", False),
    ],
)
def test_components_and_the_local_service_agree_on_the_project_image(
    image: str, ours: bool
) -> None:
    assert is_project_image(image) is ours
    assert launch.is_project_image(image) is ours


def test_the_metrics_are_the_built_in_tasks() -> None:
    """What the built-in digits task reports (a task's own metrics are its GOALS)."""
    assert Config.task == digits.__name__ and goals(digits) == dict(CLASSIFICATION_GOALS)
    assert tuple(CLASSIFICATION_GOALS) == TRAINER_METRICS


DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    "image",
    [
        "us-central1-docker.pkg.dev/p/r/vtp:1.2",
        "us-central1-docker.pkg.dev/my-project/ml/vtp:0.1.0-0123456789ab-gpu",
        "gcr.io/p/vtp:latest",
        f"eu.gcr.io/p/vtp@{DIGEST}",
        f"europe-docker.pkg.dev/p/r/team/vtp:7@{DIGEST}",
        "registry.example.com:5000/team/vtp:1",
        "docker.io/team/vtp:1",
        "us-central1-docker.pkg.dev/my-project/ml/vtp:TAG",  # the README's, as written
    ],
)
def test_vertex_takes_a_registry_image_with_a_tag_or_digest(image: str) -> None:
    assert vertex_image(image) == image


@pytest.mark.parametrize(
    ("image", "why"),
    [
        (COMPONENT_IMAGE, "is the placeholder"),
        (f"us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp@{DIGEST}", "is the placeholder"),
        ("us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.2.0", "is the placeholder"),
        ("IMAGE", "names no registry"),
        ("vtp:dev", "names no registry"),
        ("python:3.11", "names no registry"),
        ("team/vtp:1", "names no registry"),
        ("", "names no registry"),
        ("/tmp/vtp.tar", "is a local file or path"),
        ("./images/vtp", "is a local file or path"),
        ("vtp.tar", "is a local file or path"),
        ("~/vtp.tar.gz", "is a local file or path"),
        ("localhost:5000/team/vtp:1", "names a registry on this machine (localhost:5000)"),
        ("127.0.0.1:5000/team/vtp:1", "names a registry on this machine"),
        ("gcr.io/p/vtp", "has no tag or digest"),
        ("us-central1-docker.pkg.dev/p/r/vtp", "has no tag or digest"),
        ("us-central1-docker.pkg.dev/p/vtp:1", "PROJECT/REPO/IMAGE"),
        ("gcr.io/vtp:1", "gcr.io/PROJECT/IMAGE"),
        ("eu.gcr.io/vtp:1", "eu.gcr.io/PROJECT/IMAGE"),
        ("gcr.io/p/Vtp:1", "is not an image reference"),
        ("gcr.io/p/vtp:", "is not an image reference"),
        ("gcr.io/p/vtp@sha256:abc", "is not an image reference"),
        ("gcr.io/p/vtp:1,replica-count=2", "is not an image reference"),
        ("gcr.io/p/vtp:1 ", "is not an image reference"),
    ],
)
def test_vertex_refuses_what_it_could_not_pull(image: str, why: str) -> None:
    with pytest.raises(ValueError) as raised:
        vertex_image(image)
    message = str(raised.value)
    assert message.startswith(repr(image)) and why in message, message
    assert message.endswith(f"e.g. {VERTEX_IMAGE_EXAMPLE}")
