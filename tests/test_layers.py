"""Imports point one way: every module imports only its own layer and the layers below it.

The layers are those of docs/architecture.md; every import is read from the source with `ast`,
function-local ones included (components import their bodies at run time). A module that
belongs to no layer fails too, so a new folder has to be placed.
"""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAPPED = ("components", "pipelines", "trainer")
"""Folders at the top of the repository that are `vtp.<name>` (the links in vtp/, setup.py)."""

LAYERS: list[tuple[str, ...]] = [
    ("vtp.testing",),
    ("vtp.cli", "vtp.__main__"),
    ("vtp.run",),
    ("vtp.pipelines",),
    ("vtp.components",),
    ("vtp.local.app", "vtp.local"),
    ("vtp.local.server", "vtp.local.grpc_server", "vtp.local.tls_front", "vtp.local.console"),
    ("vtp.local.storage", "vtp.local.projects"),
    ("vtp.local.schedules",),
    (
        "vtp.local.pipeline_jobs",
        "vtp.local.endpoints",
        "vtp.local.batch_prediction",
        "vtp.local.training_pipelines",
        "vtp.local.vizier",
        "vtp.local.datasets",
    ),
    ("vtp.local.tuning", "vtp.local.models", "vtp.local.metadata", "vtp.local.tensorboards"),
    ("vtp.local.custom_jobs",),
    ("vtp.local.persistent_resources",),
    ("vtp.local.service",),
    ("vtp.local.runtime",),
    ("vtp.local.base",),
    ("vtp.engine",),
    ("vtp.launchers",),
    ("vtp.trainer",),
    ("vtp.vertex",),
    (
        "vtp.images",
        "vtp.storage",
        "vtp.http_limits",
        "vtp.containers",
        "vtp.private_files",
        "vtp.process_exit",
        "vtp.native_threads",
        "vtp.stop_signals",
        "vtp.lazy_imports",
        "vtp.import_gc",
        "vtp",
    ),
]
"""Top first. A module's layer is the one with the longest prefix of its name."""


def layer_of(module: str) -> int | None:
    """The index in LAYERS of `module` (ours), or None for a module of another project."""
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    return None if best is None else best[1]


def module_name(path: Path) -> str:
    """The dotted name `path` is imported as: `trainer/x.py` is `vtp.trainer.x`."""
    parts = path.relative_to(REPO).with_suffix("").parts
    parts = ("vtp", *parts) if parts[0] in MAPPED else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every absolute import in the file; `from X import a` counts X.a too, and
    a string that is the full name of a module of ours (`importlib.import_module("vtp.x")`, a
    table of modules to load, `python -m vtp.x`) counts as an import of it."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}:{node.lineno}: use absolute imports"
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Constant) and node.value in OUR_MODULES:
            found.append((node.lineno, node.value))
    return found


SOURCES = sorted(p for package in ("vtp", *MAPPED) for p in (REPO / package).rglob("*.py"))
"""Every module once: rglob does not follow the links vtp/trainer, ... to the mapped folders."""
OUR_MODULES = frozenset(module_name(p) for p in SOURCES)


def test_the_mapped_folders_are_linked_into_the_namespace() -> None:
    for name in MAPPED:
        assert (REPO / "vtp" / name).resolve() == REPO / name
    assert len({module_name(p) for p in SOURCES}) == len(SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_nothing_imports_a_top_level_name_a_team_may_have(path: Path) -> None:
    """`trainer`, `components` and `pipelines` are a team's names; ours live under `vtp`."""
    stale = [f"{line}: {name}" for line, name in imports(path) if name.split(".")[0] in MAPPED]
    assert stale == []


def test_the_checker_sees_a_string_import() -> None:
    strings = imports(REPO / "vtp" / "engine" / "fork_server.py")
    assert "vtp.trainer.export" in {name for _line, name in strings}


def test_every_module_has_a_layer() -> None:
    assert SOURCES
    assert [module_name(p) for p in SOURCES if layer_of(module_name(p)) is None] == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_imports_point_down(path: Path) -> None:
    own = layer_of(module_name(path))
    assert own is not None
    upward = [
        f"{path.relative_to(REPO)}:{line} imports {name}"
        for line, name in imports(path)
        if (target := layer_of(name)) is not None and target < own
    ]
    assert upward == []


FOLDERS_OF_LAYERS = ("vtp", "vtp.local")
"""Folders whose children are layers of their own: each child is placed by name."""


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_package_is_named(path: Path) -> None:
    """A new package or module under vtp/ or vtp/local/ must be placed in LAYERS by its own
    name, not fall through to its parent's layer."""
    name = module_name(path)
    folder = max((f for f in FOLDERS_OF_LAYERS if name.startswith(f + ".")), key=len, default="")
    if folder:
        child = name[: len(folder) + 1] + name[len(folder) + 1 :].split(".")[0]
        assert child in {prefix for layer in LAYERS for prefix in layer}, f"{child} has no layer"


def test_the_checker_sees_an_upward_import() -> None:
    assert layer_of("vtp.vertex.jobspec") > layer_of("vtp.trainer.train")
    assert layer_of("vtp.local.base.errors") > layer_of("vtp.local.custom_jobs.service")
    assert layer_of("vtp.storage") == layer_of("vtp.images")
