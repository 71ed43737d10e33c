"""Lazy imports as Python 3.15 makes them (PEP 810), for the packages we import on every start.

Google's generated client packages name, in their `__init__.py`, the submodules whose imports may
be deferred: `__lazy_modules__ = {"google.cloud.aiplatform_v1.services.job_service", ...}`. On
Python 3.15 and later each `from <one of them> import Name` there binds `Name` without importing
anything until `Name` is first used; older Pythons ignore the variable and import every one of
them at once. For `google.cloud.aiplatform_v1` that is every type and the clients of all 34
services with three transports each: 0.75 s of CPU in every process that imports the package,
where a `vtp` command, the local service and a pipeline task each use two or three services.

`install()` imports such a package as Python 3.15 would: it runs the package's own
`__init__.py` with each module-level from-import of a deferred module (in an `if` block there
too, when that branch runs) turned into a lazy binding, which resolves on first access (the
module's `__getattr__`, PEP 562) to the very object the import would have bound. Everything else
in the file runs as written (its version checks, `__all__`). What is never touched is never
imported; `from package import *` and `dir(package)` see every name. A package whose own code
reads one of those names, or that defers nothing, or is imported already, is left to the normal
import. The first access to any of aiplatform_v1's types imports its `types` package, which
imports all of them: the protobuf descriptor pool holds every message as before.

The CLI (`vtp.cli.console`) and the pipeline fork server install it first thing: the processes
that would otherwise import these packages whole on the way to a run's first job.
"""

import ast
import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType

LAZY_PACKAGES: Mapping[str, frozenset[str]] = {
    "google.cloud.aiplatform_v1": frozenset(),
    "kfp": frozenset({"kfp.client"}),
}
"""The packages `install()` imports lazily by default, each with the modules deferred besides
those it declares: the packages this project's processes import on their critical path.
aiplatform_v1 declares its own. kfp declares none; of what its `__init__.py` imports, we defer
`kfp.client` (`kfp.Client`, the KFP backend's REST client, with its generated API and the
Kubernetes client: 0.4 s of CPU), which no local run uses and whose import kfp's own task
runtime skips (`_KFP_RUNTIME`)."""
_LAZY_VARIABLE = "__lazy_modules__"
_BIND = "__lazy_bind__"
"""The function a deferred from-import becomes while the package's code runs; it binds the
import's names lazily where the statement runs (inside an `if`, only when it does)."""

Bindings = dict[str, tuple[str, str]]
"""Deferred names: name -> (module, attribute)."""


def install(packages: Mapping[str, frozenset[str]] = LAZY_PACKAGES) -> None:
    """Make each package in `packages` import lazily (see above), unless it is imported already
    or defers nothing; a package that cannot be found is skipped."""
    for name, extra in packages.items():
        if name not in sys.modules:
            _install(name, extra)


def _install(name: str, extra: frozenset[str]) -> None:
    parent = name.rpartition(".")[0]
    if parent:
        importlib.import_module(parent)  # as the import system does before the package
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or spec.submodule_search_locations is None:
        return
    body = _plan(Path(spec.origin), name, extra)
    if body is None:
        return
    module = importlib.util.module_from_spec(spec)
    bindings: Bindings = {}
    module.__getattr__ = _resolver(module, bindings)  # type: ignore[method-assign]
    module.__dir__ = lambda: sorted({*vars(module), *bindings})  # type: ignore[method-assign]
    namespace = vars(module)
    namespace[_BIND] = bindings.update
    sys.modules[name] = module
    try:
        exec(compile(body, spec.origin, "exec"), namespace)
    except BaseException:
        del sys.modules[name]
        raise
    finally:
        namespace.pop(_BIND, None)
    if parent:
        setattr(sys.modules[parent], name.rpartition(".")[2], module)


def _plan(init: Path, package: str, extra: frozenset[str]) -> ast.Module | None:
    """The package's `__init__.py` with each module-level from-import of a deferred module
    turned into a lazy binding of its names; None when nothing is deferred, or the file's own
    code reads a deferred name (the package is then imported as written)."""
    tree = ast.parse(init.read_bytes(), str(init))
    lazy = _lazy_modules(tree) | extra
    if not lazy:
        return None
    deferred: set[str] = set()
    tree.body = _deferring(tree.body, package, lazy, deferred)
    if not deferred:
        return None
    read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} - {_BIND}
    if read & deferred:
        return None
    return ast.fix_missing_locations(tree)


def _deferring(
    statements: list[ast.stmt], package: str, lazy: set[str], deferred: set[str]
) -> list[ast.stmt]:
    """`statements` with their deferred from-imports (those at module level and in `if`
    blocks there) replaced by `__lazy_bind__({name: (module, attribute), ...})`."""
    out: list[ast.stmt] = []
    for statement in statements:
        if isinstance(statement, ast.If):
            statement.body = _deferring(statement.body, package, lazy, deferred)
            statement.orelse = _deferring(statement.orelse, package, lazy, deferred)
        elif isinstance(statement, ast.ImportFrom):
            source = _absolute(statement, package)
            if source in lazy and all(alias.name != "*" for alias in statement.names):
                names = {a.asname or a.name: (source, a.name) for a in statement.names}
                deferred.update(names)
                call = ast.Call(ast.Name(_BIND, ast.Load()), [_literal(names)], [])
                statement = ast.copy_location(ast.Expr(call), statement)
        out.append(statement)
    return out


def _literal(names: Bindings) -> ast.expr:
    """`names` as the expression of a dict display."""
    return ast.parse(repr(names), mode="eval").body


def _lazy_modules(tree: ast.Module) -> set[str]:
    """The module names of a top-level `__lazy_modules__ = {...}` literal, or an empty set."""
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and [
            getattr(t, "id", None) for t in statement.targets
        ] == [_LAZY_VARIABLE]:
            try:
                value = ast.literal_eval(statement.value)
            except ValueError:
                return set()
            return {v for v in value if isinstance(v, str)} if isinstance(value, set) else set()
    return set()


def _absolute(statement: ast.ImportFrom, package: str) -> str:
    """The absolute module name a from-import in `package`'s `__init__.py` imports from."""
    if not statement.level:
        return statement.module or ""
    base = package.rsplit(".", statement.level - 1)[0] if statement.level > 1 else package
    return f"{base}.{statement.module}" if statement.module else base


def _is_submodule(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _resolver(module: ModuleType, bindings: Bindings) -> Callable[[str], object]:
    """The package's `__getattr__`: a deferred name is imported, bound and returned. No lock of
    its own: the import system's module locks order concurrent imports, and binding the same
    object twice is harmless (a lock held across an import could deadlock with theirs)."""

    def __getattr__(name: str) -> object:
        if name in bindings:
            source, attribute = bindings[name]
            imported = importlib.import_module(source)
            if not hasattr(imported, attribute):  # `from package import submodule`
                importlib.import_module(f"{source}.{attribute}")
            value = getattr(imported, attribute)
        elif not name.startswith("__") and _is_submodule(f"{module.__name__}.{name}"):
            # An eager import of the package would have imported it on the way.
            value = importlib.import_module(f"{module.__name__}.{name}")
        else:
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        setattr(module, name, value)
        return value

    return __getattr__
