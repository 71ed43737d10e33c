"""Golden tests: compiled/ is what the code compiles to, and every file loads back with kfp."""

from pathlib import Path

import pytest
from kfp import components

from vtp.cli import main
from vtp.images import COMPONENT_IMAGE
from vtp.pipelines import catalog
from vtp.pipelines.compile import comparable, compile_all, compile_text, compiled_dir


@pytest.mark.parametrize("name", list(catalog.PIPELINES))
def test_compiled_yaml_is_up_to_date(name: str) -> None:
    golden = (compiled_dir() / f"{name}.yaml").read_text()
    assert comparable(compile_text(name)) == comparable(golden), "run `vtp compile`"


@pytest.mark.parametrize("name", list(catalog.PIPELINES))
def test_compiled_yaml_loads_back(name: str) -> None:
    pipeline = components.load_component_from_file(str(compiled_dir() / f"{name}.yaml"))
    assert pipeline.name == f"vtp-{name}"
    assert set(pipeline.component_spec.inputs) == set(
        catalog.entry(name).load().component_spec.inputs
    )


@pytest.mark.parametrize("name", list(catalog.COMPONENTS))
def test_component_yaml_is_up_to_date_and_loads_without_our_packages(name: str) -> None:
    path = compiled_dir() / "components" / f"{name}.yaml"
    assert comparable(compile_text(name, component=True)) == comparable(path.read_text())
    loaded = components.load_component_from_file(str(path))
    assert set(loaded.component_spec.inputs) == set(
        catalog.COMPONENTS[name].load().component_spec.inputs
    )


def test_image_is_set_at_compile_time_and_nowhere_else(tmp_path: Path) -> None:
    outcomes = compile_all(tmp_path, image="europe-docker.pkg.dev/acme/ml/vtp:7", names=["train"])
    text = outcomes[0].path.read_text()
    assert COMPONENT_IMAGE not in text
    assert text.count("europe-docker.pkg.dev/acme/ml/vtp:7") >= 4  # 3 executors + default pools
    assert comparable(text) == comparable(
        compile_text("train").replace(COMPONENT_IMAGE, "europe-docker.pkg.dev/acme/ml/vtp:7")
    )


def test_environment_does_not_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("VTP_GCS_ROOT", "/somewhere/else")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "leaky-project")
    text = compile_text("train")
    assert "127.0.0.1" not in text and "/somewhere/else" not in text and "leaky" not in text
    assert comparable(text) == comparable((compiled_dir() / "train.yaml").read_text())


def test_check_reports_stale_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compile", "export", "--output-dir", str(tmp_path)]) == 0
    assert main(["compile", "export", "--check", "--output-dir", str(tmp_path)]) == 0
    (tmp_path / "export.yaml").write_text("stale: true\n")
    assert main(["compile", "export", "--check", "--output-dir", str(tmp_path)]) == 1
    assert "out of date" in capsys.readouterr().out


def test_check_knows_the_image_files_were_compiled_for(tmp_path: Path, capsys) -> None:
    image = "europe-docker.pkg.dev/acme/ml/vtp:7"
    assert main(["compile", "export", "--image", image, "--output-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["compile", "export", "--check", "--output-dir", str(tmp_path)]) == 0
    assert f"up to date (for image {image})" in capsys.readouterr().out
    other = "europe-docker.pkg.dev/acme/ml/vtp:8"
    assert main(["compile", "export", "--check", "--image", other, "--output-dir", str(tmp_path)])
