"""KFP workspaces (a run's shared folder, `dsl.WORKSPACE_PATH_PLACEHOLDER`, the platform spec's
size) in every mode, from the user's folder: `vtp run FILE.py`, `vtp run FILE.yaml` and `vtp
submit FILE.yaml --local --wait`, where FILE.yaml is the two documents kfp writes (the pipeline,
then its platform spec). A workspace bigger than the disk, and one sent to Vertex, are refused in
one line before anything runs."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.fixtures import REPO, compile_user_pipeline
from tests.vtp.cli.run_helpers import Served, serve, vtp

pytestmark = pytest.mark.slow

PIPELINE = """
from kfp import dsl


@dsl.component(base_image="python:3.11-slim")
def write(workspace: str, text: str) -> str:
    import os

    path = os.path.join(workspace, "shared", "note.txt")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


@dsl.component(base_image="python:3.11-slim")
def read(path: str, workspace: str) -> str:
    assert path.startswith(workspace), (path, workspace)
    with open(path) as f:
        text = f.read()
    print(f"read back {text!r} from the workspace")
    return text


@dsl.pipeline(
    name="shared-folder",
    pipeline_config=dsl.PipelineConfig(workspace=dsl.WorkspaceConfig(size="{size}")),
)
def shared(text: str = "hello"):
    wrote = write(workspace=dsl.WORKSPACE_PATH_PLACEHOLDER, text=text)
    read(path=wrote.output, workspace=dsl.WORKSPACE_PATH_PLACEHOLDER)
"""


def user_folder(root: Path, size: str) -> Path:
    """The user's folder: the pipeline (workspace of `size`), compiled as kfp compiles it."""
    folder = root / size.lower()
    folder.mkdir()
    assert not folder.is_relative_to(REPO)
    (folder / "shared.py").write_text(PIPELINE.replace("{size}", size))
    compile_user_pipeline(folder, "shared", "shared", "shared.yaml")
    return folder


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return user_folder(tmp_path_factory.mktemp("workspace"), "1Mi")


@pytest.fixture(scope="module")
def served(project: Path) -> Iterator[Served]:
    with serve(project, project / ".vtp" / "serve") as service:
        yield service


def succeeded(result: subprocess.CompletedProcess, text: str) -> None:
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"read back {text!r} from the workspace" in result.stdout


def test_kfp_writes_the_platform_spec_as_a_second_document(project: Path) -> None:
    documents = list(yaml.safe_load_all((project / "shared.yaml").read_text()))
    assert len(documents) == 2
    workspace = documents[1]["platforms"]["kubernetes"]["pipelineConfig"]["workspace"]
    assert workspace["size"] == "1Mi"


def test_vtp_run_of_the_file(project: Path) -> None:
    succeeded(vtp(project, "run", "shared.py:shared", "--param", "text=py"), "py")
    notes = list((project / ".vtp" / "run" / "pipelines").glob("*/workspace/shared/note.txt"))
    assert [n.read_text() for n in notes] == ["py"]  # the run's own workspace folder


def test_vtp_run_of_the_two_document_yaml(project: Path) -> None:
    succeeded(vtp(project, "run", "shared.yaml", "--no-cache", "--param", "text=yaml"), "yaml")


def test_vtp_submit_local_of_the_two_document_yaml(project: Path, served: Served) -> None:
    result = vtp(
        project, "submit", "shared.yaml", "--local", "--wait", "--param", "text=submit",
        VTP_LOCAL_ENDPOINT=served.url,
    )  # fmt: skip
    succeeded(result, "submit")
    notes = list((served.state_dir / "pipelines").glob("*/workspace/shared/note.txt"))
    assert [n.read_text() for n in notes] == ["submit"]


def test_a_workspace_bigger_than_the_disk_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = user_folder(tmp_path, "900Ei")
    for command in (["run", "shared.py:shared"], ["run", "shared.yaml"]):
        result = vtp(folder, *command)
        assert result.returncode == 2, result.stderr
        line = result.stderr.strip()
        assert "\n" not in line and "workspace asks for" in line and "GiB free" in line
        assert not (folder / ".vtp" / "run" / "pipelines").exists()  # nothing ran


def test_a_workspace_pipeline_sent_to_vertex_is_refused(project: Path) -> None:
    result = vtp(
        project, "submit", "shared.yaml", "--project", "p", "--region", "us-central1",
        "--pipeline-root", "gs://bucket/root", "--dry-run",
    )  # fmt: skip
    assert result.returncode == 2
    assert "uses a KFP workspace" in result.stderr and "--local" in result.stderr
