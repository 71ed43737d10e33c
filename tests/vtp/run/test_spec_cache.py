"""Compiled specs of our own pipelines are kept between runs (`vtp.run.spec_cache`), and read
back only while every source they were compiled from is unchanged."""

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vtp.run import spec_cache


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A module outside the installed packages that "compiling" imports; a private cache."""
    monkeypatch.setenv(spec_cache.CACHE_ENV, str(tmp_path / "cache"))
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "spec_source_mod.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(folder))
    yield folder / "spec_source_mod.py"
    sys.modules.pop("spec_source_mod", None)


def compiler(calls: list[int]):
    def compile_spec() -> dict:
        sys.modules.pop("spec_source_mod", None)
        value = importlib.import_module("spec_source_mod").VALUE
        calls.append(value)
        return {"root": {"value": value}}

    return compile_spec


def test_an_unchanged_pipeline_is_not_compiled_again(module: Path) -> None:
    calls: list[int] = []
    assert spec_cache.cached_spec("p", compiler(calls)) == {"root": {"value": 1}}
    assert spec_cache.cached_spec("p", compiler(calls)) == {"root": {"value": 1}}
    assert calls == [1]
    [entry] = (module.parent.parent / "cache" / "vtp" / "compiled").iterdir()
    assert oct(entry.stat().st_mode & 0o777) == "0o600"
    assert str(module.resolve()) in json.loads(entry.read_text())["files"]


def test_a_changed_source_compiles_again(module: Path) -> None:
    calls: list[int] = []
    spec_cache.cached_spec("p", compiler(calls))
    module.write_text("VALUE = 2\n")
    assert spec_cache.cached_spec("p", compiler(calls)) == {"root": {"value": 2}}
    assert calls == [1, 2]


def test_another_version_or_a_damaged_entry_compiles_again(module: Path, monkeypatch) -> None:
    calls: list[int] = []
    spec_cache.cached_spec("p", compiler(calls))
    monkeypatch.setattr(spec_cache, "DISTRIBUTIONS", ("kfp", "pip"))
    spec_cache.cached_spec("p", compiler(calls))
    [entry] = (module.parent.parent / "cache" / "vtp" / "compiled").iterdir()
    entry.write_text("{not json")
    assert spec_cache.cached_spec("p", compiler(calls)) == {"root": {"value": 1}}
    assert calls == [1, 1, 1]


def test_another_installation_of_the_project_never_reads_this_ones_entry(
    module: Path, monkeypatch
) -> None:
    """Two checkouts (an old one left unchanged beside a new one) keep an entry each: the new
    one compiles its own pipeline instead of reading the old one's."""
    calls: list[int] = []
    spec_cache.cached_spec("p", compiler(calls))
    monkeypatch.setattr(spec_cache, "PROJECT_ROOT", str(module.parent / "another-checkout"))
    spec_cache.cached_spec("p", compiler(calls))
    assert len(calls) == 2


def test_an_unwritable_cache_only_costs_a_compile(module: Path, monkeypatch) -> None:
    monkeypatch.setenv(spec_cache.CACHE_ENV, str(module))  # a file, not a folder
    calls: list[int] = []
    for _ in range(2):
        assert spec_cache.cached_spec("p", compiler(calls)) == {"root": {"value": 1}}
    assert calls == [1, 1]


def test_a_module_loaded_before_whose_file_is_gone_does_not_matter(module: Path, tmp_path) -> None:
    gone = tmp_path / "src" / "spec_gone_mod.py"
    gone.write_text("X = 1\n")
    importlib.import_module("spec_gone_mod")
    gone.unlink()  # as another test's temporary module is, in a long test session
    try:
        calls: list[int] = []
        for _ in range(2):
            spec_cache.cached_spec("p", compiler(calls))
        assert calls == [1]
    finally:
        sys.modules.pop("spec_gone_mod", None)


READ_TRAIN = """
import json, sys
from vtp.run import sources
source = sources.load("train")
print(json.dumps({"workspace": "workspace" in json.dumps(source.platform()),
                  "tasks": len(source.spec()["root"]["dag"]["tasks"]),
                  "kfp": "kfp" in sys.modules, "pipeline": "vtp.pipelines.train" in sys.modules}))
"""


def test_a_rerun_of_a_shipped_pipeline_reads_both_documents_without_kfp(tmp_path: Path) -> None:
    """The run checks the platform spec's workspace as well as the pipeline: once kept, neither
    is read by importing kfp and the pipeline again (what a second `vtp run train` costs)."""
    env = {**os.environ, spec_cache.CACHE_ENV: str(tmp_path / "cache")}
    runs = [
        json.loads(subprocess.run([sys.executable, "-c", READ_TRAIN], env=env, check=True,
                                  capture_output=True, text=True, cwd=tmp_path).stdout)
        for _ in range(2)
    ]  # fmt: skip
    assert runs[0]["kfp"] and runs[0]["pipeline"]  # compiled
    assert not runs[1]["kfp"] and not runs[1]["pipeline"]  # read back
    assert runs[1]["tasks"] == runs[0]["tasks"] > 0
    assert runs[1]["workspace"] == runs[0]["workspace"]
