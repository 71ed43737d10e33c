"""A container component's outputs stay inside its own output folder (security round 4): the
engine reads them on the host, so a task that names a host file as an artifact's `custom_path`,
or leaves its output parameter file as a link to the state directory's token, fails, and nothing
of the host reaches storage or the next task. Each attack runs as an attacker would run it: a
pipeline of their own under `vtp run`, its component in a real Podman container. The host side's
rules (`vtp.engine.output_paths`) are tested directly below them."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import container_images
from tests.container_images import Engine, engine_fixture  # noqa: F401 (container_engine)
from vtp import storage
from vtp.engine import output_paths

PIPELINE = """
from kfp import dsl

IMAGE = {image!r}
SECRET = {secret!r}

STEAL = '''
import json, os, sys
given = json.loads(sys.argv[1])
loot = given["outputs"]["artifacts"]["loot"]["artifacts"][0]
out = given["outputs"]["outputFile"]
os.makedirs(os.path.dirname(out), exist_ok=True)
record = {{"name": loot.get("name", ""), "uri": loot["uri"], "custom_path": SECRET}}
json.dump({{"artifacts": {{"loot": {{"artifacts": [record]}}}}}}, open(out, "w"))
'''

LINK = '''
import os, sys
said = sys.argv[1]
os.makedirs(os.path.dirname(said), exist_ok=True)
# From /gcs/... up to the folder that holds the storage root: the state directory on the host.
os.symlink(os.path.relpath("/token", os.path.dirname(said)), said)
'''


@dsl.container_component
def steal(loot: dsl.Output[dsl.Artifact]):
    script = STEAL.replace("SECRET", repr(SECRET))
    return dsl.ContainerSpec(image=IMAGE, command=["python3", "-c"], args=[script, "{{{{$}}}}"])


@dsl.container_component
def link(said: dsl.OutputPath(str)):
    return dsl.ContainerSpec(image=IMAGE, command=["python3", "-c"], args=[LINK, said])


@dsl.component
def show(text: str) -> str:
    print("downstream got:", text)
    return text


@dsl.pipeline(name="steal-a-host-file")
def steal_pipeline():
    steal()


@dsl.pipeline(name="link-to-the-token")
def link_pipeline():
    show(text=link().output)
"""


@pytest.fixture(scope="module")
def image(container_engine: Engine) -> tuple[Engine, str]:
    """The engine, and the Debian base with Python (no file of the host in it) in it."""
    with container_images.marked_image("attacker", engine=container_engine) as (name, _marker):
        yield container_engine, name


def attack(
    folder: Path, image: tuple[Engine, str], secret: Path, pipeline: str
) -> subprocess.CompletedProcess:
    """`vtp run attack.py:PIPELINE` in `folder` with `image`'s engine."""
    engine, image_name = image
    (folder / "attack.py").write_text(PIPELINE.format(image=image_name, secret=str(secret)))
    return subprocess.run(
        [sys.executable, "-m", "vtp", "run", f"attack.py:{pipeline}", "--no-cache"],
        cwd=folder, capture_output=True, text=True, timeout=600,
        env={**os.environ, **engine.service_env()},
    )  # fmt: skip


def test_a_custom_path_naming_a_host_file_is_refused_and_nothing_is_copied(
    tmp_path: Path, image: tuple[Engine, str]
) -> None:
    secret = tmp_path / "host-only" / "secret.txt"  # never mounted into the container
    secret.parent.mkdir()
    secret.write_text("the host's secret\n")
    result = attack(tmp_path, image, secret, "steal_pipeline")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-2000:]
    assert "is outside the task's output folder" in result.stdout + result.stderr
    stored = [p for p in (tmp_path / ".vtp" / "run" / "gcs").rglob("*") if p.is_file()]
    assert not [p for p in stored if "the host's secret" in p.read_text(errors="replace")]


def test_an_output_file_linked_to_the_token_is_refused_and_the_next_task_never_runs(
    tmp_path: Path, image: tuple[Engine, str]
) -> None:
    result = attack(tmp_path, image, tmp_path / "unused", "link_pipeline")
    out = result.stdout + result.stderr
    assert result.returncode == 1, out[-4000:]
    assert "is a symbolic link; a task's outputs may hold none" in out
    token = (tmp_path / ".vtp" / "run" / "token").read_text().strip()
    assert token and token not in out and "downstream got:" not in out


def test_a_link_anywhere_in_the_outputs_is_refused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(storage.GCS_ROOT_ENV, str(tmp_path / "gcs"))
    root = tmp_path / "gcs" / "root" / "run" / "task"
    (root / "model").mkdir(parents=True)
    (root / "model" / "weights").write_text("w")
    assert output_paths.checked_root(str(root)) == root
    (root / "model" / "config.json").symlink_to("../../../../../token")
    with pytest.raises(ValueError, match=r"config\.json is a symbolic link"):
        output_paths.checked_root(str(root))


def test_a_folder_reached_through_a_link_is_refused(tmp_path: Path, monkeypatch) -> None:
    """An earlier task of the run made the next task's folder a link out of storage."""
    monkeypatch.setenv(storage.GCS_ROOT_ENV, str(tmp_path / "gcs"))
    (tmp_path / "gcs" / "root" / "run").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "gcs" / "root" / "run" / "task").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ValueError, match="task is a symbolic link"):
        output_paths.checked_root(str(tmp_path / "gcs" / "root" / "run" / "task"))


def test_a_deep_or_huge_tree_is_refused(tmp_path: Path, monkeypatch) -> None:
    """Bounded, and by a walk that never recurses (a task's thousand levels cannot stop it)."""
    monkeypatch.setenv(storage.GCS_ROOT_ENV, str(tmp_path / "gcs"))
    root = tmp_path / "gcs" / "task"
    deep = root
    for _ in range(output_paths.MAX_DEPTH + 5):
        deep = deep / "d"
    deep.mkdir(parents=True)
    with pytest.raises(ValueError, match="folders deep"):
        output_paths.checked_root(str(root))
    monkeypatch.setattr(output_paths, "MAX_ENTRIES", 10)
    wide = tmp_path / "gcs" / "wide"
    wide.mkdir()
    for index in range(11):
        (wide / str(index)).touch()
    with pytest.raises(ValueError, match="more than 10 entries"):
        output_paths.checked_root(str(wide))


def test_a_custom_path_inside_the_folder_maps_from_gcs_in_an_image(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(storage.GCS_ROOT_ENV, str(tmp_path / "gcs"))
    root = tmp_path / "gcs" / "b" / "task"
    seen = output_paths.custom_source("/gcs/b/task/out/model", root, in_image=True)
    assert seen == root / "out" / "model"
    with pytest.raises(ValueError, match="outside the task's output folder"):
        output_paths.custom_source("/gcs/b/other/model", root, in_image=True)
    with pytest.raises(ValueError, match="outside the task's output folder"):
        output_paths.custom_source("/gcs/b/task/../../token", root, in_image=True)
    # A task on this machine wrote its file itself, wherever it could (KFP's own test pipeline).
    assert output_paths.custom_source("/tmp/out", root, in_image=False) == Path("/tmp/out")
