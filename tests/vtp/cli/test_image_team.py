"""`vtp image build` from a team's folder outside the repository: the team's files (ignore files
honoured) and requirements go in, the tag follows them, and the dry run says so."""

from pathlib import Path

import pytest
from google.cloud.devtools import cloudbuild_v1

from tests.fixtures import REPO, run_vtp
from vtp.vertex import image_build, team_folder

REPOSITORY = "us-central1-docker.pkg.dev/my-project/ml"


def team(tmp_path: Path) -> Path:
    """A team folder: a task module, requirements, and data its .gcloudignore leaves out."""
    folder = tmp_path / "team"
    (folder / "data").mkdir(parents=True)
    (folder / "my_task.py").write_text("LABELS = ['a', 'b']\n")
    (folder / "requirements.txt").write_text("scikit-learn\n")
    (folder / ".gcloudignore").write_text("data/\n")
    (folder / "data" / "big.bin").write_bytes(b"\0" * 4096)
    return folder


def dry_run(capsys, *flags: str) -> tuple[str, str]:
    """The image the dry run names and what it says on stderr; stdout is a valid Build."""
    code, out, err = run_vtp(
        capsys, "image", "build", "--repository", REPOSITORY, "--dry-run", *flags
    )
    assert code == 0, err
    build = cloudbuild_v1.Build.from_json(out)  # unknown fields would raise
    (image,) = build.images
    assert f"image: {image}" in err
    return image, err


def test_the_team_folder_its_requirements_and_not_its_ignored_files(
    capsys, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(team(tmp_path))
    image, err = dry_run(capsys)
    listed = {line.strip() for line in err.splitlines()}
    assert "team/my_task.py" in listed and "team/requirements.txt" in listed
    assert not any("big.bin" in line or ".gcloudignore" in line for line in listed)
    assert "requirements: pip install -r requirements.txt in the image" in listed
    steps = err.split("Dockerfile:", 1)[1].splitlines()
    steps = [s.strip() for s in steps if s.strip()]
    install = "RUN pip install -c /opt/vtp/constraints.txt -r /workspace/team/requirements.txt"
    assert steps.index(install) < steps.index("COPY team /workspace/team")
    assert steps.index("WORKDIR /workspace/team") < steps.index(install)
    assert steps[-2].startswith("ENTRYPOINT")  # the team's steps come before it
    assert "ENV PYTHONPATH=/workspace/team" in steps
    assert image.startswith(f"{REPOSITORY}/vtp:0.1.0-")


def test_the_tag_follows_the_team_files_and_not_the_ignored_ones(
    capsys, tmp_path, monkeypatch
) -> None:
    folder = team(tmp_path)
    monkeypatch.chdir(folder)
    first, _ = dry_run(capsys)
    assert dry_run(capsys)[0] == first  # the same sources, the same tag
    (folder / "data" / "big.bin").write_bytes(b"\1" * 8192)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "my_task.cpython-311.pyc").write_bytes(b"cache")
    (folder / ".vtp" / "run").mkdir(parents=True)
    (folder / ".vtp" / "run" / "state.json").write_text("{}")
    assert dry_run(capsys)[0] == first
    (folder / "my_task.py").write_text("LABELS = ['a', 'b', 'c']\n")
    changed, _ = dry_run(capsys)
    assert changed != first
    (folder / "requirements.txt").write_text("scikit-learn==1.5.0\n")
    assert dry_run(capsys)[0] not in (first, changed)


def test_source_names_the_folder_from_anywhere(capsys, tmp_path, monkeypatch) -> None:
    folder = team(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    image, err = dry_run(capsys, "--source", str(folder))
    assert f"team folder: {folder.resolve()} -> /workspace/team (2 files)" in err
    monkeypatch.chdir(folder)
    assert dry_run(capsys)[0] == image


def test_dockerignore_patterns_are_relative_to_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    (folder / "logs").mkdir(parents=True)
    (folder / "sub").mkdir()
    for name in ("a.log", "keep.log", "logs/x.txt", "sub/b.log", "my_task.py", ".env"):
        (folder / name).write_text(name)
    (folder / ".dockerignore").write_text("# comment\n*.log\n!keep.log\nlogs/\n")
    assert sorted(team_folder.files(folder)) == ["keep.log", "my_task.py", "sub/b.log"]


def test_a_checkout_inside_the_folder_and_a_virtualenv_stay_out(tmp_path: Path) -> None:
    folder = tmp_path / "team"
    (folder / "venv").mkdir(parents=True)
    (folder / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    (folder / "vtp-checkout" / "vtp").mkdir(parents=True)
    (folder / "vtp-checkout" / "vtp" / "cli.py").write_text("")
    (folder / "my_task.py").write_text("")
    assert list(team_folder.files(folder, folder / "vtp-checkout")) == ["my_task.py"]


def test_a_file_over_the_limit_is_refused_saying_how_to_leave_it_out(
    capsys, tmp_path, monkeypatch
) -> None:
    folder = team(tmp_path)
    (folder / "weights.pt").write_bytes(b"\0" * 2048)
    monkeypatch.setattr(team_folder, "MAX_FILE_BYTES", 1024)
    monkeypatch.chdir(folder)
    code, out, err = run_vtp(capsys, "image", "build", "--repository", REPOSITORY, "--dry-run")
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert "weights.pt" in line and ".gcloudignore" in line


def test_from_the_repository_there_is_no_team_folder(capsys, monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    image, err = dry_run(capsys)
    assert "team folder: none" in err and "COPY team" not in err
    archive = image_build.source_archive(REPO, "0.1.0")
    assert image.endswith(image_build.image_tag("0.1.0", archive, False))


@pytest.mark.parametrize("source", ["missing", "my_task.py"])
def test_source_must_be_a_directory(capsys, tmp_path, monkeypatch, source) -> None:
    monkeypatch.chdir(team(tmp_path))
    code, _, err = run_vtp(
        capsys, "image", "build", "--repository", REPOSITORY, "--source", source, "--dry-run"
    )
    assert code == 2 and "--source" in err


def test_an_engine_builds_from_the_archive_unpacked(capsys, tmp_path, monkeypatch) -> None:
    """With an engine, `build` runs in the archive's own files: ours and the team's."""
    import subprocess

    from vtp.cli import image as image_cli
    from vtp.engine import vertex_tasks

    seen: dict[str, object] = {}

    def fake_run(argv, cwd=None, **_kwargs):
        context = Path(cwd)
        seen["argv"] = argv
        seen["files"] = {p.relative_to(context).as_posix() for p in context.rglob("*")}
        seen["dockerfile"] = (context / "Dockerfile").read_text()
        return subprocess.CompletedProcess(argv, 0)

    monkeypatch.setattr(vertex_tasks, "container_engine", lambda: "podman")
    monkeypatch.setattr(image_cli.subprocess, "run", fake_run)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(team(tmp_path))
    code, out, err = run_vtp(capsys, "image", "build", "--repository", REPOSITORY)
    assert code == 0, err
    assert seen["argv"][:3] == ["podman", "build", "--tag"] and seen["argv"][3] == out.strip()
    files = seen["files"]
    assert {"team/my_task.py", "team/requirements.txt", "vtp/cli/image.py"} <= files
    assert "team/data/big.bin" not in files
    assert "COPY team /workspace/team" in seen["dockerfile"]
    assert image_build.last_built() == out.strip()
