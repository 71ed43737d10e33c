"""The lazy imports a package declares for Python 3.15 (PEP 810), on the Python we run.

Google's generated client packages name, in their `__init__.py`, the submodules whose imports may
be deferred: `__lazy_modules__ = {"google.cloud.aiplatform_v1.services.job_service", ...}`. On
Python 3.15 and later each `from <one of them> import Name` there binds `Name` without importing
anything until `Name` is first used; older Pythons ignore the variable and import every one of
them at once. For `google.cloud.aiplatform_v1` that is every type and the clients of all 34
services with three transports each: 0.75 s of CPU in every process that imports the package,
where a `vtp` command, the local service and a pipeline task each use two or three services.

`install(name)` imports such a package as Python 3.15 would: it runs the package's own
`__init__.py`, less those from-imports, whose names resolve on first access (the module's
`__getattr__`, PEP 562) to the very object the import would have bound. Everything else in the
file runs as written (its version checks, `__all__`). What is never touched is never imported;
`from package import *` and `dir(package)` see every name. A package whose top-level code uses
one of those names itself, declares no `__lazy_modules__`, or is imported already, is left to the
normal import. The first access to any of aiplatform_v1's types imports its `types` package,
which imports all of them: the protobuf descriptor pool holds every message as before.
"""

import ast
import importlib
import importlib.util
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

LAZY_PACKAGES = ("google.cloud.aiplatform_v1",)
"""The packages `install()` imports lazily by default: the ones this project's processes import
on their critical path, whose declared lazy modules are most of their import time."""
_LAZY_VARIABLE = "__lazy_modules__"


def install(names: tuple[str, ...] = LAZY_PACKAGES) -> None:
    """Make each package in `names` import lazily (see above), unless it is imported already or
    does not declare its lazy modules; a package that cannot be found is skipped."""
    for name in names:
        if name not in sys.modules:
            _install(name)


def _install(name: str) -> None:
    parent = name.rpartition(".")[0]
    if parent:
        importlib.import_module(parent)  # as the import system does before the package
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or spec.submodule_search_locations is None:
        return
    plan = _plan(Path(spec.origin), name)
    if plan is None:
        return
    body, bindings = plan
    module = importlib.util.module_from_spec(spec)
    module.__getattr__ = _resolver(module, bindings)  # type: ignore[method-assign]
    module.__dir__ = lambda: sorted({*vars(module), *bindings})  # type: ignore[method-assign]
    sys.modules[name] = module
    try:
        exec(compile(body, spec.origin, "exec"), vars(module))
    except BaseException:
        del sys.modules[name]
        raise
    if parent:
        setattr(sys.modules[parent], name.rpartition(".")[2], module)


def _plan(init: Path, package: str) -> tuple[ast.Module, dict[str, tuple[str, str]]] | None:
    """The package's `__init__.py` without its lazy from-imports, and what each of their names
    binds (name -> (module, attribute)); None when it cannot be imported lazily as written."""
    tree = ast.parse(init.read_bytes(), str(init))
    lazy = _lazy_modules(tree)
    if not lazy:
        return None
    bindings: dict[str, tuple[str, str]] = {}
    kept: list[ast.stmt] = []
    for statement in tree.body:
        source = _absolute(statement, package) if isinstance(statement, ast.ImportFrom) else None
        if isinstance(statement, ast.ImportFrom) and source in lazy:
            if any(alias.name == "*" for alias in statement.names):
                return None
            for alias in statement.names:
                bindings[alias.asname or alias.name] = (source, alias.name)
        else:
            kept.append(statement)
    used = {
        node.id for node in ast.walk(ast.Module(body=kept, type_ignores=[]))
        if isinstance(node, ast.Name)
    }  # fmt: skip
    if used & bindings.keys():  # the file's own code reads a deferred name: import it eagerly
        return None
    return ast.Module(body=kept, type_ignores=[]), bindings


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


def _resolver(module: ModuleType, bindings: dict[str, tuple[str, str]]) -> Callable[[str], object]:
    """The package's `__getattr__`: a deferred name is imported, bound and returned."""
    lock = threading.Lock()

    def __getattr__(name: str) -> object:
        with lock:
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
