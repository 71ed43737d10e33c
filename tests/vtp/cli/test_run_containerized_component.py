"""A containerized Python component (`@dsl.component(target_image=...)`, built by `kfp component
build`) has its code only in its image: without that image it is refused in one line that says
so, before anything runs, instead of failing inside kfp's executor ("No components found in
kfp_config.ini")."""

import os
from pathlib import Path

import pytest

from tests.fixtures import REPO
from tests.vtp.cli.run_helpers import vtp

COMPONENT = """
from kfp import dsl


@dsl.component(base_image="python:3.11-slim", target_image="team-image:1")
def concat(message1: str, message2: str) -> str:
    return message1 + message2
"""


@pytest.mark.parametrize("engine", ["", "podman"])
def test_refused_in_one_line_without_its_image(tmp_path: Path, engine: str) -> None:
    if engine and not os.path.exists("/usr/bin/podman"):
        pytest.skip("podman is not installed here")
    assert not tmp_path.is_relative_to(REPO)
    (tmp_path / "team.py").write_text(COMPONENT)
    result = vtp(
        tmp_path, "run", "team.py:concat", "--param", "message1=a", "--param", "message2=b",
        VTP_CONTAINER_ENGINE=engine,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    line = result.stderr.strip()
    assert "\n" not in line and "concat" in line and "team-image:1" in line
    if engine:  # an engine answers, the image is neither here nor pullable
        assert "is not on this machine and could not be pulled" in line
    else:
        assert "containerized Python component" in line and "kfp component build" in line
    assert "kfp_config.ini" not in result.stdout + result.stderr
    assert not (tmp_path / ".vtp" / "run" / "pipelines").exists()
