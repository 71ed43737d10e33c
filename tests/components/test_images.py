"""The project's image as components recognise it, in agreement with the service and trainer."""

import typing

import pytest

from trainer.config import Config
from vtp.images import COMPONENT_IMAGE, TRAINER_METRICS, is_project_image
from vtp.local.runtime import launch


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


def test_the_metrics_are_the_trainers_choices() -> None:
    metric = typing.get_type_hints(Config)["hypertune_metric"]
    assert typing.get_args(metric) == TRAINER_METRICS
