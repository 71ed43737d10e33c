"""The project's image as components recognise it, in agreement with the service and trainer."""

import pytest

from vtp.images import COMPONENT_IMAGE, TRAINER_METRICS, is_project_image
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
