"""Autopackaging: gcloud's local-code keys -> a Python source distribution + pythonPackageSpec.

`gcloud ai custom-jobs create --worker-pool-spec=...,executor-image-uri=IMAGE,
local-package-path=DIR,python-module=M` (or `script=S`) builds a Docker image FROM IMAGE with
Docker, pushes it and runs it as a `containerSpec`. We need no Docker: the same keys build a
Python source distribution here, staged at a content-addressed Cloud Storage URI, and the pool
runs it as a `pythonPackageSpec` on the prebuilt executor image IMAGE, which pip-installs it.

What the archive holds, following gcloud's image build:
- the code: the directory of the entry point (gcloud copies exactly that), widened for
  `python-module=a.b.c` to its top-level package `a/` so `a/__init__.py` and siblings come too;
  the whole `local-package-path` when the entry sits at its top; plus each of `extra-dirs`.
  Caches, version control and virtual environments are left out (`sdist.collect`).
- `vtp_autopackage`, the module the pool runs: it puts the code first on `sys.path` (gcloud
  makes it the working directory) and runs `python -m M` or `python S` (`bash S` for other
  scripts) with the replica's args (`autopackage_main.py`).
- `requirements`, and the lines of a `requirements.txt` at the top of `local-package-path`
  (gcloud installs that file too), as the distribution's dependencies; the executor's pip
  installs them. `extra-packages` (archives inside `local-package-path`) are staged beside it
  and listed after it in `packageUris`.

Where this differs from gcloud: the code is installed next to `vtp_autopackage` in
site-packages, not copied to the working directory, so read data files relative to `__file__`;
a `setup.py` of your own is packaged as a file but not run (list dependencies in
`requirements`); `output-image-uri` has no meaning (no image is built). The local service
installs packages without their dependencies (`vtp.local.runtime.packages`): its own environment
stands in for the executor image, so it must already hold them.
The same files give the same archive bytes, hence the same URI
`<staging>/vtp-packages/<sha256 of the archive>/<name>-0.0.0.tar.gz`.
"""

import hashlib
import importlib.util
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from vtp.vertex import ignore, sdist
from vtp.vertex.autopackage_main import CODE_DIR
from vtp.vertex.protodict import SpecError

PACKAGE = "vtp_autopackage"
"""The module every autopackaged pool runs (`pythonPackageSpec.pythonModule`)."""
VERSION = "0.0.0"
STAGING_DIR = "vtp-packages"
INSTALLABLE = (".whl", ".tar.gz", ".zip")
"""Archive types pip installs, for `extra-packages`."""
REQUIREMENTS_FILE = "requirements.txt"
_MAIN = Path(__file__).with_name("autopackage_main.py")


@dataclass(frozen=True)
class LocalCode:
    """Pool 0's local-code keys, with gcloud's names and meaning (paths relative to the dir)."""

    local_package_path: str
    python_module: str = ""
    script: str = ""
    requirements: tuple[str, ...] = ()
    extra_packages: tuple[str, ...] = ()
    extra_dirs: tuple[str, ...] = ()

    @classmethod
    def from_pool_flags(cls, flags: dict[str, Any]) -> "LocalCode":
        """The keys of one parsed `--worker-pool-spec` (see `poolspec.parse_worker_pool_spec`)."""
        return cls(
            local_package_path=flags["local-package-path"],
            python_module=flags.get("python-module", ""),
            script=flags.get("script", ""),
            requirements=tuple(flags.get("requirements", ())),
            extra_packages=tuple(flags.get("extra-packages", ())),
            extra_dirs=tuple(flags.get("extra-dirs", ())),
        )

    @property
    def directory(self) -> Path:
        """`local-package-path` as an absolute path."""
        return Path(self.local_package_path).expanduser().absolute()


@dataclass(frozen=True)
class Archive:
    """A package archive: its file name and bytes."""

    filename: str
    data: bytes

    def uri(self, staging: str) -> str:
        """`<staging>/vtp-packages/<sha256 of the bytes>/<filename>`: equal bytes, equal URI."""
        digest = hashlib.sha256(self.data).hexdigest()
        return f"{staging.rstrip('/')}/{STAGING_DIR}/{digest}/{self.filename}"


@dataclass(frozen=True)
class Package:
    """Archives at their Cloud Storage URIs (the code's first), and the image that runs them."""

    files: tuple[tuple[str, bytes], ...]
    """(uri, bytes) of each archive, to stage before the job runs."""
    executor_image_uri: str

    @classmethod
    def staged_at(cls, archives: Sequence[Archive], staging: str, executor: str) -> "Package":
        """The archives placed under the gs:// prefix `staging`, run on `executor`."""
        return cls(tuple((a.uri(staging), a.data) for a in archives), executor)

    @property
    def package_uris(self) -> list[str]:
        """`packageUris`: the code's archive, then the extra packages."""
        return [uri for uri, _ in self.files]

    def python_package_spec(self, more_uris: Sequence[str] = ()) -> dict[str, Any]:
        """The REST `pythonPackageSpec` of every pool (`more_uris` appended to the packages)."""
        return {
            "executorImageUri": self.executor_image_uri,
            "packageUris": [*self.package_uris, *more_uris],
            "pythonModule": PACKAGE,
        }


def build(code: LocalCode, mtime: int | None = None) -> tuple[Archive, ...]:
    """Check `code` against the disk and build its archives in memory: the sdist, then extras.

    Nothing is written. Raises SpecError whose path is the gcloud key at fault (`script`, ...).
    """
    directory = _checked_directory(code)
    entry = _entry(code, directory)
    files = _code_files(code, directory)
    requirements = _requirements(code, directory)
    name = distribution_name(directory.name)
    try:
        data = sdist.write_sdist(name, VERSION, _layout(name, entry, files, requirements), mtime)
    except ValueError as exc:  # a malformed SOURCE_DATE_EPOCH
        raise SpecError("local-package-path", str(exc)) from None
    archives = [Archive(sdist.archive_name(name, VERSION), data)]
    archives += [Archive(p.name, p.read_bytes()) for p in _extra_packages(code, directory)]
    return tuple(archives)


def distribution_name(directory_name: str) -> str:
    """The normalized distribution name for a code directory (`My-Task` -> `my_task`)."""
    name = re.sub(r"[-_.]+", "_", directory_name).lower()
    return name if re.fullmatch(r"[a-z0-9](?:[a-z0-9_]*[a-z0-9])?", name) else "autopackage"


def _checked_directory(code: LocalCode) -> Path:
    directory = code.directory
    if not directory.is_dir():
        raise SpecError("local-package-path", f"directory {str(directory)!r} not found")
    return directory.resolve()


def _inside(directory: Path, relative: str, key: str) -> Path:
    """`directory/relative`, which must stay inside `directory` (gcloud's build context)."""
    if not relative or PurePosixPath(relative).is_absolute():
        raise SpecError(key, f"{relative!r} must be a path relative to local-package-path")
    path = (directory / relative).resolve()
    if not path.is_relative_to(directory):
        raise SpecError(key, f"{relative!r} is outside local-package-path {str(directory)!r}")
    return path


def _entry(code: LocalCode, directory: Path) -> dict[str, str]:
    """What `vtp_autopackage` runs: `{"python_module": M}` or `{"script": path in the code}`."""
    if code.python_module:
        if not all(part.isidentifier() for part in code.python_module.split(".")):
            raise SpecError("python-module", f"{code.python_module!r} is not a dotted module name")
        return {"python_module": code.python_module}
    script = _inside(directory, code.script, "script")
    if not script.is_file():
        raise SpecError("script", f"file {code.script!r} not found under {str(directory)!r}")
    return {"script": script.relative_to(directory).as_posix()}


def _code_roots(code: LocalCode, directory: Path) -> list[str]:
    """Directories to package, relative to `directory` ('' is all of it)."""
    if code.python_module:
        # A package of the code's is packaged alone. A module the code does not hold but this
        # environment has (vtp.trainer, which the executor image has too) runs with all of the
        # code, as gcloud's does; one found nowhere is a typo.
        top, dot, _ = code.python_module.partition(".")
        inside = (directory / top).is_dir()
        if dot and not inside and importlib.util.find_spec(top) is None:
            raise SpecError(
                "python-module",
                f"package directory {top}/ not found in {directory}, and no package {top} is "
                "installed",
            )
        root = top if dot and inside else ""
    else:
        root = _inside(directory, code.script, "script").parent.relative_to(directory).as_posix()
    roots = ["" if root == "." else root]
    for extra in code.extra_dirs:
        path = _inside(directory, extra, "extra-dirs")
        if not path.is_dir():
            raise SpecError("extra-dirs", f"directory {extra!r} not found under {directory}")
        roots.append(path.relative_to(directory).as_posix())
    return roots


def _code_files(code: LocalCode, directory: Path) -> dict[str, sdist.SourceFile]:
    files: dict[str, sdist.SourceFile] = {}
    roots = _code_roots(code, directory)
    skip = ignore.rules(directory)
    try:
        for root in roots:
            files.update(sdist.collect(directory, root, skip))
    except ValueError as exc:  # a symbolic link to a directory
        raise SpecError("local-package-path", str(exc)) from None
    return files


def _requirements(code: LocalCode, directory: Path) -> list[str]:
    """`requirements`, then the lines of DIR/requirements.txt (gcloud installs it too), checked."""
    found = [("requirements", text) for text in code.requirements]
    listed = directory / REQUIREMENTS_FILE
    if listed.is_file():
        for number, line in enumerate(listed.read_text().splitlines(), 1):
            text = line.split(" #", 1)[0].strip()
            if text and not text.startswith("#"):
                found.append((f"requirements ({REQUIREMENTS_FILE} line {number})", text))
    checked = []
    for where, text in found:
        try:
            checked.append(str(Requirement(text)))
        except InvalidRequirement as exc:
            hint = " (pip options cannot go in a package's dependencies)" if text[:1] == "-" else ""
            raise SpecError(where, f"{text!r} is not a valid requirement{hint}: {exc}") from None
    return checked


def _extra_packages(code: LocalCode, directory: Path) -> list[Path]:
    paths = []
    for extra in code.extra_packages:
        path = _inside(directory, extra, "extra-packages")
        if not path.is_file():
            raise SpecError("extra-packages", f"file {extra!r} not found under {directory}")
        if not path.name.endswith(INSTALLABLE):
            kinds = ", ".join(INSTALLABLE)
            raise SpecError("extra-packages", f"{extra!r} is not a package archive ({kinds})")
        paths.append(path)
    return paths


def _layout(
    name: str,
    entry: dict[str, str],
    code: dict[str, sdist.SourceFile],
    requirements: list[str],
) -> dict[str, sdist.SourceFile]:
    """Every member of the sdist, by path under `<name>-<version>/`."""
    data_files = ["entry.json", *(f"{CODE_DIR}/{path}" for path in sorted(code))]
    generated = {
        "PKG-INFO": _pkg_info(name, requirements),
        "pyproject.toml": _pyproject(name, requirements, data_files),
        f"{PACKAGE}/__init__.py": f'"""{_summary(name)}."""\n',
        f"{PACKAGE}/__main__.py": _MAIN.read_text(),
        f"{PACKAGE}/entry.json": json.dumps(entry, sort_keys=True) + "\n",
    }
    members = {path: sdist.SourceFile(text.encode()) for path, text in generated.items()}
    members.update({f"{PACKAGE}/{CODE_DIR}/{path}": file for path, file in code.items()})
    return members


def _summary(name: str) -> str:
    return f"{name}: local code packaged by vtp; run it with python -m {PACKAGE}"


def _pkg_info(name: str, requirements: list[str]) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {VERSION}"]
    lines += [f"Summary: {_summary(name)}", *(f"Requires-Dist: {r}" for r in requirements)]
    return "\n".join(lines) + "\n"


def _pyproject(name: str, requirements: list[str], data_files: list[str]) -> str:
    def strings(values: list[str]) -> str:
        # JSON strings are TOML basic strings; glob metacharacters in file names are escaped.
        return "[" + ", ".join(json.dumps(v) for v in values) + "]"

    escaped = [re.sub(r"([*?\[])", r"[\1]", path) for path in data_files]
    return "\n".join(
        [
            "[build-system]",
            'requires = ["setuptools>=61"]',
            'build-backend = "setuptools.build_meta"',
            "",
            "[project]",
            f"name = {json.dumps(name)}",
            f"version = {json.dumps(VERSION)}",
            f"description = {json.dumps(_summary(name))}",
            f"dependencies = {strings(requirements)}",
            "",
            "[tool.setuptools]",
            f"packages = [{json.dumps(PACKAGE)}]",
            "include-package-data = false",
            "",
            "[tool.setuptools.package-data]",
            f"{PACKAGE} = {strings(escaped)}",
            "",
        ]
    )
