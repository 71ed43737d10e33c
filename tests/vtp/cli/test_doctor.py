"""`vtp doctor` offline: the image built, compiled/ current, something to build with; one line
a check, and one error line when the project cannot be asked."""

from pathlib import Path

import google.auth
import pytest
from google.auth.exceptions import DefaultCredentialsError

from tests.fixtures import run_vtp
from vtp.cli import doctor
from vtp.pipelines.compile import Outcome

TARGET = ("--project=my-project", "--region=us-central1")


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No image built, no Google credentials."""

    def no_credentials(**_: object) -> None:
        raise DefaultCredentialsError("no credentials here")

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(google.auth, "default", no_credentials)


def test_offline_it_checks_what_it_can_then_says_why_it_stops(capsys) -> None:
    code, out, err = run_vtp(capsys, "doctor", *TARGET)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3, out
    assert lines[0].startswith("MISSING image: none built")
    assert lines[0].endswith("fix: vtp image build --repository REGION-docker.pkg.dev/PROJECT/REPO")
    assert lines[1].startswith("ok      ") and lines[1].endswith("compiled current")
    assert lines[2].startswith(("ok      container engine", "ok      Cloud Build", "MISSING no"))
    assert err.count("\n") == 1 and err.startswith("vtp: error: "), err
    assert "Traceback" not in out + err


def test_the_last_build_counts_and_repository_names_the_fix(capsys) -> None:
    from vtp.vertex.image_build import remember

    image = "us-central1-docker.pkg.dev/my-project/ml/vtp:0.1.0-abc"
    remember(image)
    out = run_vtp(capsys, "doctor", *TARGET)[1]
    assert out.splitlines()[0] == f"ok      image {image} (the last `vtp image build`)"


def test_stale_compiled_files_and_no_builder_are_one_line_each(capsys, monkeypatch) -> None:
    import vtp.pipelines.compile

    stale = Outcome("train", Path("compiled/train.yaml"), changed=True)
    monkeypatch.setattr(vtp.pipelines.compile, "compile_all", lambda check: [stale])
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    code, out, _ = run_vtp(
        capsys, "doctor", *TARGET, "--repository=us-central1-docker.pkg.dev/my-project/ml"
    )
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3, out
    assert lines[0].endswith(
        "fix: vtp image build --repository us-central1-docker.pkg.dev/my-project/ml"
    )
    assert (
        lines[1].startswith("MISSING ") and "out of date: train.yaml; fix: vtp compile" in lines[1]
    )
    assert lines[2].startswith("MISSING no container engine (docker, podman) and no gcloud")


def test_a_broken_compile_is_one_line_too(capsys, monkeypatch) -> None:
    import vtp.pipelines.compile

    def broken(check: bool) -> list[Outcome]:
        raise ImportError("no module named kfp")

    monkeypatch.setattr(vtp.pipelines.compile, "compile_all", broken)
    out = run_vtp(capsys, "doctor", *TARGET)[1]
    assert "MISSING compiled/ cannot be checked: ImportError: no module named kfp" in out
