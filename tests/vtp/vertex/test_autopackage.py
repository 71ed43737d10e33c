"""Autopackaging: what goes into the archive, how it runs once pip-installed, and bad input."""

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.vtp.vertex.usercode import write_user_code
from vtp.vertex import autopackage, staging
from vtp.vertex.autopackage import LocalCode
from vtp.vertex.jobspec import JobFlags, build_custom_job, build_packaged_job
from vtp.vertex.protodict import SpecError

PREFIX = "code-0.0.0/vtp_autopackage/code-root/"


def archive(code: Path, **keys) -> bytes:
    return autopackage.build(LocalCode(str(code), **keys))[0].data


def names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return tar.getnames()


def member(data: bytes, name: str) -> str:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return tar.extractfile(name).read().decode()


def code_files(data: bytes) -> list[str]:
    return [n.removeprefix(PREFIX) for n in names(data) if n.startswith(PREFIX)]


def test_the_same_source_gives_the_same_bytes_and_uri_on_any_checkout(tmp_path: Path) -> None:
    first, second = write_user_code(tmp_path / "a"), write_user_code(tmp_path / "b")
    for index, path in enumerate(sorted(second.rglob("*"))):
        os.utime(path, (10**9 + index, 10**9 + index))
    keys = {"python_module": "blobs.task", "extra_dirs": ("configs",)}
    built = [autopackage.build(LocalCode(str(c), **keys)) for c in (first, second)]
    assert built[0] == built[1]
    (archive_file,) = built[0]
    uri = archive_file.uri("gs://bucket/stage/")
    digest = uri.split("/")[-2]
    assert uri == f"gs://bucket/stage/vtp-packages/{digest}/code-0.0.0.tar.gz"
    (second / "blobs" / "task.py").write_text("changed = True\n")
    assert autopackage.build(LocalCode(str(second), **keys))[0].uri("gs://bucket/stage") != uri


def test_a_module_ships_its_top_level_package_and_the_extra_dirs(tmp_path: Path) -> None:
    data = archive(write_user_code(tmp_path), python_module="blobs.task", extra_dirs=("configs",))
    assert code_files(data) == [
        "blobs/__init__.py",
        "blobs/data/centers.json",
        "blobs/echo.py",
        "blobs/task.py",
        "configs/small.yaml",
    ]
    assert json.loads(member(data, "code-0.0.0/vtp_autopackage/entry.json")) == {
        "python_module": "blobs.task"
    }
    assert member(data, "code-0.0.0/vtp_autopackage/__main__.py") == (
        Path(autopackage.__file__).with_name("autopackage_main.py").read_text()
    )


def test_a_script_ships_its_directory_and_a_top_level_module_everything(tmp_path: Path) -> None:
    code = write_user_code(tmp_path)
    assert code_files(archive(code, script="scripts/run.py")) == [
        "scripts/helper.py",
        "scripts/run.py",
        "scripts/run.sh",
    ]
    everything = code_files(archive(code, python_module="trainer"))
    assert "README.md" in everything and "scripts/run.sh" in everything
    assert not [f for f in everything if f.startswith((".git/", "env/")) or "pycache" in f]


def test_requirements_and_requirements_txt_become_the_dependencies(tmp_path: Path) -> None:
    code = write_user_code(tmp_path)
    (code / "requirements.txt").write_text("# pinned\nnumpy>=1.26  # arrays\n\nscipy\n")
    data = archive(code, python_module="blobs.task", requirements=("scikit-learn>=1.5",))
    pkg_info = member(data, "code-0.0.0/PKG-INFO")
    assert pkg_info.splitlines()[-3:] == [
        "Requires-Dist: scikit-learn>=1.5",
        "Requires-Dist: numpy>=1.26",
        "Requires-Dist: scipy",
    ]
    pyproject = member(data, "code-0.0.0/pyproject.toml")
    assert 'dependencies = ["scikit-learn>=1.5", "numpy>=1.26", "scipy"]' in pyproject


def test_extra_packages_are_staged_beside_the_code(tmp_path: Path) -> None:
    code = write_user_code(tmp_path)
    (code / "wheels").mkdir()
    (code / "wheels" / "dep-1.0-py3-none-any.whl").write_bytes(b"wheel bytes")
    built = autopackage.build(
        LocalCode(
            str(code),
            python_module="blobs.task",
            extra_packages=("wheels/dep-1.0-py3-none-any.whl",),
        )
    )
    package = autopackage.Package.staged_at(built, "gs://b/s", "exe")
    code_uri, wheel_uri = package.package_uris
    assert wheel_uri.endswith("/dep-1.0-py3-none-any.whl") and "/vtp-packages/" in wheel_uri
    assert package.python_package_spec(["gs://b/more.tar.gz"]) == {
        "executorImageUri": "exe",
        "packageUris": [code_uri, wheel_uri, "gs://b/more.tar.gz"],
        "pythonModule": "vtp_autopackage",
    }
    assert "wheels/dep-1.0-py3-none-any.whl" not in code_files(built[0].data)


@pytest.mark.parametrize(
    ("directory_name", "expected"),
    [("My-Task.v2", "my_task_v2"), ("trainer", "trainer"), ("-", "autopackage")],
)
def test_distribution_names_are_normalized(directory_name: str, expected: str) -> None:
    assert autopackage.distribution_name(directory_name) == expected


def install(data: bytes, target: Path) -> dict[str, str]:
    """pip-install the archive into `target` the way the local service does; return the env."""
    path = target.with_suffix(".tar.gz")
    path.write_bytes(data)
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    command += ["--no-build-isolation", "--no-index", "--target", str(target), str(path)]
    subprocess.run(command, check=True, capture_output=True)
    return {**os.environ, "PYTHONPATH": str(target)}


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ({"script": "scripts/run.py"}, "script helper a b"),
        ({"script": "scripts/run.sh"}, "bash script a b"),
        ({"python_module": "blobs.echo"}, "module blobs a b"),
    ],
    ids=["python-script", "bash-script", "module"],
)
def test_the_installed_archive_runs_the_entry_with_the_replica_args(
    tmp_path: Path, keys: dict, expected: str
) -> None:
    env = install(archive(write_user_code(tmp_path), **keys), tmp_path / "site")
    run = subprocess.run(
        [sys.executable, "-m", "vtp_autopackage", "a", "b"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.strip() == expected


CASES = [
    (
        "missing-dir",
        {"local_package_path": "nope", "script": "run.py"},
        "local-package-path",
        "not found",
    ),
    ("script-outside", {"script": "../outside.py"}, "script", "outside local-package-path"),
    ("script-absolute", {"script": "/etc/passwd"}, "script", "relative to local-package-path"),
    ("script-missing", {"script": "scripts/none.py"}, "script", "not found"),
    ("module-name", {"python_module": "blobs.task-v2"}, "python-module", "not a dotted module"),
    ("module-package-missing", {"python_module": "nothere.task"}, "python-module", "nothere/"),
    ("requirement", {"requirements": ("torch>>2",)}, "requirements", "'torch>>2' is not a valid"),
    ("empty-requirement", {"requirements": ("",)}, "requirements", "not a valid requirement"),
    ("extra-dir-missing", {"extra_dirs": ("none",)}, "extra-dirs", "not found"),
    ("extra-dir-outside", {"extra_dirs": ("..",)}, "extra-dirs", "outside"),
    ("extra-package-missing", {"extra_packages": ("x.whl",)}, "extra-packages", "not found"),
    ("extra-package-kind", {"extra_packages": ("README.md",)}, "extra-packages", "not a package"),
]


@pytest.mark.parametrize(("keys", "key", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_local_code_names_the_key(tmp_path: Path, keys: dict, key: str, text: str) -> None:
    code = write_user_code(tmp_path)
    (tmp_path / "outside.py").write_text("")
    keys = {"local_package_path": str(code), "python_module": "blobs.task", **keys}
    if "script" in keys:
        del keys["python_module"]
    keys["local_package_path"] = str(code / keys["local_package_path"])
    with pytest.raises(SpecError) as error:
        autopackage.build(LocalCode(**keys))
    assert error.value.path.startswith(key) and text in str(error.value)


def test_pip_options_in_requirements_txt_are_refused_naming_the_line(tmp_path: Path) -> None:
    code = write_user_code(tmp_path)
    (code / "requirements.txt").write_text("numpy\n-r more.txt\n")
    with pytest.raises(SpecError, match=r"requirements.txt line 2.*pip options"):
        autopackage.build(LocalCode(str(code), python_module="blobs.task"))


def test_staging_writes_each_archive_once_through_the_local_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VTP_GCS_ROOT", str(tmp_path / "gcs"))
    files = [("gs://bucket/stage/vtp-packages/abc/a.tar.gz", b"archive")]
    assert staging.stage(files) == ["gs://bucket/stage/vtp-packages/abc/a.tar.gz"]
    assert staging.stage(files) == []
    folder = tmp_path / "gcs/bucket/stage/vtp-packages/abc"
    assert [p.name for p in folder.iterdir()] == ["a.tar.gz"]
    assert (folder / "a.tar.gz").read_bytes() == b"archive"


def test_the_job_runs_the_package_then_python_package_uris_and_plain_builds_refuse_it(
    tmp_path: Path,
) -> None:
    code = write_user_code(tmp_path)
    pool = f"machine-type=n1-standard-4,executor-image-uri=exe,local-package-path={code}"
    flags = JobFlags(
        display_name="j",
        worker_pool_specs=(f"{pool},python-module=trainer", "", "machine-type=n1-standard-4"),
        python_package_uris="gs://b/dep.tar.gz",
        staging_bucket="gs://b/stage",
    )
    job, package = build_packaged_job(flags)
    chief, skipped, evaluator = job.job_spec.worker_pool_specs
    assert list(chief.python_package_spec.package_uris) == [
        *package.package_uris,
        "gs://b/dep.tar.gz",
    ]
    assert evaluator.python_package_spec == chief.python_package_spec and not skipped.machine_spec
    with pytest.raises(SpecError, match="key local-package-path: local code is packaged by"):
        build_custom_job(flags)
