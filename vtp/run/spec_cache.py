"""Compiled specs of this project's own pipelines, kept between runs.

Compiling `train` means importing kfp (whose package also imports its KFP-backend client and
with it the whole Kubernetes client), Google's components and ours: on a small machine, most of
what a second identical `vtp run train` costs. The compiled spec depends only on code (nothing
from the environment reaches it: `pipelines/compile.py`), so it is kept, with what it was
compiled from:

- the versions of the distributions that compile it (kfp, Google's components, this project);
- the path and SHA-256 of every module file, outside the installed packages, that compiling
  imported or that belongs to this project (its sources, in an editable install);

and read back only while all of those are unchanged, by the same installation of this project (an
entry is per pipeline and per place the project is installed: two checkouts, each unchanged,
never share one). An entry is one JSON file in
`$XDG_CACHE_HOME/vtp/compiled/` (default `~/.cache`), written atomically, private to the user;
a missing, damaged or stale one is simply compiled again.
"""

import contextlib
import hashlib
import json
import os
import sys
import sysconfig
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import vtp
from vtp import private_files

CACHE_ENV = "XDG_CACHE_HOME"
DISTRIBUTIONS = ("kfp", "google-cloud-pipeline-components", "vertex-torch-pipelines")
PROJECT_PACKAGES = frozenset({"vtp"})
"""This project's namespace: every module of it loaded counts, imported by compiling or
before it (`vtp.pipelines.catalog` is, by whoever names a pipeline)."""
PROJECT_ROOT = str(Path(vtp.__file__).resolve().parent)
"""Where this project's package is: an entry holds the files of one installation."""
_INSTALLED = tuple(
    str(Path(p).resolve())
    for p in {sysconfig.get_path(k) for k in ("purelib", "platlib", "stdlib", "platstdlib")}
)


def cached_spec(name: str, compile_spec: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The spec of pipeline `name`: the kept one while what it was compiled from is unchanged,
    else `compile_spec()`'s (kept for next time)."""
    where = f"{name}\0{PROJECT_ROOT}"
    entry = _folder() / f"{hashlib.sha256(where.encode()).hexdigest()[:32]}.json"
    kept = _read(entry)
    if kept is not None and kept.get("versions") == _versions() and _unchanged(kept["files"]):
        return kept["spec"]
    before = set(sys.modules)
    spec = compile_spec()
    ours = {m for m in sys.modules if m.partition(".")[0] in PROJECT_PACKAGES}
    files = _sources((set(sys.modules) - before) | ours)
    if files is not None:  # every source known: safe to keep
        _write(entry, {"versions": _versions(), "files": files, "spec": spec})
    return spec


def _folder() -> Path:
    base = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache")
    return Path(base) / "vtp" / "compiled"


def _versions() -> dict[str, str]:
    found = {}
    for name in DISTRIBUTIONS:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = ""
    return found


def _sources(modules: set[str]) -> dict[str, str] | None:
    """Path -> SHA-256 of each module's file outside the installed packages; None when one has
    no readable file (its code cannot be checked next time: nothing is kept)."""
    files: dict[str, str] = {}
    for name in modules:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if module is None or path is None:
            continue  # built-in, frozen or a namespace package: no code of its own here
        resolved = str(Path(path).resolve())
        if resolved.startswith(_INSTALLED):
            continue  # versioned by DISTRIBUTIONS (or the interpreter)
        digest = _digest(resolved)
        if digest is None:
            return None
        files[resolved] = digest
    return files


def _unchanged(files: dict[str, str]) -> bool:
    return all(_digest(path) == digest for path, digest in files.items())


def _digest(path: str) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _read(entry: Path) -> dict[str, Any] | None:
    try:
        kept = json.loads(private_files.read_private(entry, limit=1 << 26))
    except (OSError, ValueError, private_files.UnsafePath):
        return None
    ok = isinstance(kept, dict) and all(k in kept for k in ("versions", "files", "spec"))
    return kept if ok and isinstance(kept["files"], dict) else None


def _write(entry: Path, kept: dict[str, Any]) -> None:
    # A cache that cannot be written (or safely) costs the next run its compile, nothing more.
    with contextlib.suppress(OSError, private_files.UnsafePath):
        private_files.write_private(entry, json.dumps(kept))
