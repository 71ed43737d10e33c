"""The distribution installs one top-level package, `vtp`, and ships the compiled YAML."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
         "-w", str(out), str(REPO)],
        check=True, capture_output=True,
    )  # fmt: skip
    (path,) = out.glob("*.whl")
    return zipfile.ZipFile(path)


def test_wheel_installs_only_the_vtp_namespace(wheel: zipfile.ZipFile) -> None:
    """No name a team may give its folders (`trainer`, `components`, ...) is one of ours."""
    names = wheel.namelist()
    top = {name.split("/", 1)[0] for name in names if ".dist-info/" not in name}
    assert top == {"vtp"}
    (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    assert set(wheel.read(top_level).decode().split()) == top


def test_the_top_level_folders_are_files_of_the_namespace_in_the_wheel(
    wheel: zipfile.ZipFile,
) -> None:
    """`trainer/`, `components/` and `pipelines/` of the checkout are `vtp.<name>`: every
    module is in the wheel under vtp/, as its bytes (the links are followed)."""
    for folder in ("trainer", "components", "pipelines"):
        for path in (REPO / folder).rglob("*.py"):
            relative = path.relative_to(REPO).as_posix()
            assert wheel.read(f"vtp/{relative}") == path.read_bytes()


def test_wheel_ships_every_compiled_file(wheel: zipfile.ZipFile) -> None:
    compiled = sorted(p.relative_to(REPO / "compiled") for p in (REPO / "compiled").rglob("*.yaml"))
    assert len(compiled) >= 9  # three pipelines, six components
    for path in compiled:
        assert (
            wheel.read(f"vtp/pipelines/compiled/{path}") == (REPO / "compiled" / path).read_bytes()
        )
