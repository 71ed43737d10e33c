"""With a container engine, `vtp run` runs a pipeline's container components in their images
(issue #28): a @dsl.container_component of an image built here writes its output parameter and
artifact at their /gcs paths, from inside the image, and a lightweight component downstream
reads them on this machine. With each engine this machine has (Podman, Docker:
`tests/container_images.py`)."""

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests import container_images
from tests.container_images import Engine, engine_fixture  # noqa: F401 (container_engine)

PIPELINE = """
from kfp import dsl

IMAGE = {image!r}


@dsl.container_component
def stamp(text: str, said: dsl.OutputPath(str), report: dsl.Output[dsl.Artifact]):
    return dsl.ContainerSpec(
        image=IMAGE,
        command=["python3", "-c"],
        args=[
            "import os, sys, json; text, said, report = sys.argv[1:]; "
            "marker = open('/marker').read().strip(); "
            "print('in the image:', marker, 'host /work:', os.path.exists('/work'), said); "
            "os.makedirs(os.path.dirname(said), exist_ok=True); "
            "open(said, 'w').write(text.upper() + ' ' + marker); "
            "os.makedirs(os.path.dirname(report), exist_ok=True); "
            "json.dump({{'from': said}}, open(report, 'w'))",
            text, said, report.path,
        ],
    )


@dsl.component
def check(said: str, report: dsl.Input[dsl.Artifact]) -> str:
    import json

    print("downstream got:", said, json.load(open(report.path)))
    return said


@dsl.pipeline(name="container-components")
def containers(text: str = "hello"):
    made = stamp(text=text)
    check(said=made.outputs["said"], report=made.outputs["report"])
"""


@pytest.fixture(scope="module")
def image(container_engine: Engine) -> tuple[str, str]:
    """(name, marker): the Debian base with Python and a /marker file of its own."""
    with container_images.marked_image("component", engine=container_engine) as made:
        yield made


def test_a_container_component_runs_in_its_image(
    tmp_path: Path, container_engine: Engine, image: tuple[str, str]
) -> None:
    name, marker = image
    (tmp_path / "components_pipeline.py").write_text(PIPELINE.format(image=name))
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "run", "components_pipeline.py", "--param", "text=hi"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, **container_engine.service_env()},
    )  # fmt: skip
    out = result.stdout
    assert result.returncode == 0, out[-3000:] + result.stderr[-2000:]
    assert f"this task runs in its image {name}" in out
    # inside: the image's own file, not the host's folders, and Vertex's /gcs paths
    assert f"in the image: {marker} host /work: False /gcs/" in out
    assert f"downstream got: HI {marker} {{'from': '/gcs/" in out
    assert not [n for n in container_engine.container_names() if "vtp-task-stamp" in n]


def test_without_an_engine_it_is_refused_before_the_run(tmp_path: Path, image) -> None:
    name, _ = image
    (tmp_path / "components_pipeline.py").write_text(PIPELINE.format(image=name))
    env = {k: v for k, v in os.environ.items() if k != "VTP_CONTAINER_ENGINE"}
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "run", "components_pipeline.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"container component stamp (image {name}) cannot run locally" in result.stderr
    # whichever engine answers here (Docker is asked first), named as the way out
    assert re.search(r"set VTP_CONTAINER_ENGINE=(docker|podman) to run them", result.stderr)


def test_an_image_not_here_fails_before_the_run_naming_it(
    tmp_path: Path, container_engine: Engine
) -> None:
    absent = f"localhost:1/vtp-absent-{uuid.uuid4().hex[:8]}:1"
    (tmp_path / "components_pipeline.py").write_text(PIPELINE.format(image=absent))
    result = subprocess.run(
        [sys.executable, "-m", "vtp", "run", "components_pipeline.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, **container_engine.service_env()},
    )  # fmt: skip
    assert result.returncode == 2, result.stdout[-2000:] + result.stderr[-2000:]
    assert f"container component stamp: image {absent!r} is not on this machine" in result.stderr
