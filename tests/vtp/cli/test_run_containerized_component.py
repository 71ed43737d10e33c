"""A containerized Python component (`@dsl.component(target_image=...)`, built by `kfp component
build`) has its code only in its image: without that image it is refused in one line that says
so, before anything runs, instead of failing inside kfp's executor ("No components found in
kfp_config.ini")."""

from pathlib import Path

from tests.container_images import Engine, engine_fixture  # noqa: F401 (container_engine)
from tests.fixtures import REPO
from tests.vtp.cli.run_helpers import vtp

COMPONENT = """
from kfp import dsl


@dsl.component(base_image="python:3.11-slim", target_image="team-image:1")
def concat(message1: str, message2: str) -> str:
    return message1 + message2
"""


def _run(folder: Path, **env: str):
    assert not folder.is_relative_to(REPO)
    (folder / "team.py").write_text(COMPONENT)
    result = vtp(
        folder, "run", "team.py:concat", "--param", "message1=a", "--param", "message2=b", **env
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "kfp_config.ini" not in result.stdout + result.stderr
    assert not (folder / ".vtp" / "run" / "pipelines").exists()
    line = result.stderr.strip()
    assert "\n" not in line and "concat" in line and "team-image:1" in line
    return line


def test_refused_in_one_line_without_its_image(tmp_path: Path) -> None:
    line = _run(tmp_path, VTP_CONTAINER_ENGINE="")
    assert "containerized Python component" in line and "kfp component build" in line


def test_refused_in_one_line_when_the_engine_has_not_its_image(
    tmp_path: Path, container_engine: Engine
) -> None:
    line = _run(tmp_path, **container_engine.service_env())  # neither here nor pullable
    assert "is not on this machine and could not be pulled" in line
