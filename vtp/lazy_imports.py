"""Lazy imports as Python 3.15 makes them (PEP 810), for the packages we import on every start.

Google's generated client packages name, in their `__init__.py`, the submodules whose imports may
be deferred: `__lazy_modules__ = {"google.cloud.aiplatform_v1.services.job_service", ...}`. On
Python 3.15 and later each `from <one of them> import Name` there binds `Name` without importing
anything until `Name` is first used; older Pythons ignore the variable and import every one of
them at once. For `google.cloud.aiplatform_v1` that is every type and the clients of all 34
services with three transports each: 0.75 s of CPU in every process that imports the package,
where a `vtp` command, the local service and a pipeline task each use two or three services.

After `install()`, importing such a package runs its own compiled `__init__` as always, except
that a from-import of a deferred module (one it declares, or one named here) binds nothing yet:
the name resolves on first access (the package's `__getattr__`, PEP 562) to the very object the
import would have bound. A deferred import in a branch that does not run binds nothing, as in
Python 3.15. Everything else in the file runs as written (its version checks, `__all__`); what
is never touched is never imported; `from package import *` and `dir(package)` see every name.
Should the file's own code use a deferred name while it runs, the package is imported again as
written. A package imported before `install()` stays as it is. aiplatform_v1's `types` package is
deferred the same way, each module of it imported when one of its messages is first used: the
protobuf descriptor pool then knows a message once its module is imported, which every client
and every class that names it does first. Only a `google.protobuf.Any` read from JSON names a
message by its type URL alone (a long-running operation's metadata): the clients import the
types of their operations, and the service's gRPC front imports the type an operation names
before it parses it (`vtp.local.grpc_server`).

The CLI (`vtp.cli.console`) and the pipeline fork server install it first thing: the processes
that would otherwise import these packages whole on the way to a run's first job.
"""

import builtins
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

LAZY_PACKAGES: Mapping[str, frozenset[str]] = {
    "google.cloud.aiplatform_v1": frozenset(),
    "google.cloud.aiplatform_v1.types": frozenset({"google.cloud.aiplatform_v1.types.*"}),
    "kfp": frozenset({"kfp.client"}),
}
"""The packages imported lazily by default, each with the modules deferred besides those it
declares (`package.*`: every module of the package): the packages this project's processes
import on their critical path. aiplatform_v1 declares its own. Its `types` package declares
none, and its `__init__.py` imports all 124 modules of types; we defer them all: the job client
and our job launchers need 27 of them (0.33-0.38 s of CPU instead of 0.58-0.59 s, on the way to
a run's first job). kfp declares none; of what its `__init__.py` imports, we defer `kfp.client`
(`kfp.Client`, the KFP backend's REST client, with its generated API and the Kubernetes client:
0.4 s of CPU), which no local run uses and whose import kfp's own task runtime skips
(`_KFP_RUNTIME`)."""
_LAZY_VARIABLE = "__lazy_modules__"

Bindings = dict[str, tuple[str, str]]
"""Deferred names: name -> (module, attribute)."""


def install(packages: Mapping[str, frozenset[str]] = LAZY_PACKAGES) -> None:
    """From now on, each package in `packages` is imported lazily (see above) when first
    imported; installing twice changes nothing."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder(packages))


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the packages to import lazily where the path finder would, with our loader."""

    def __init__(self, packages: Mapping[str, frozenset[str]]) -> None:
        self._packages = dict(packages)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self._packages:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if (
            spec is None
            or spec.origin is None
            or spec.submodule_search_locations is None
            or not isinstance(spec.loader, importlib.machinery.SourceFileLoader)
        ):
            return None  # not a package of source files: imported as usual
        spec.loader = _Loader(fullname, spec.origin, self._packages[fullname])
        return spec


class _Loader(importlib.machinery.SourceFileLoader):
    """The package's own loader (its compiled code, data and resources), running the code with
    its deferred from-imports binding lazily."""

    def __init__(self, fullname: str, path: str, extra: frozenset[str]) -> None:
        super().__init__(fullname, path)
        self._extra = extra

    def exec_module(self, module: ModuleType) -> None:
        code = self.get_code(module.__name__)
        assert code is not None  # a source file's loader always has code
        namespace = vars(module)
        namespace["__builtins__"] = {**vars(builtins), "__import__": self._import}
        try:
            exec(code, namespace)
        except Exception:  # its code used a deferred name: import it as written
            for name in [n for n in namespace if not n.startswith("__")]:
                del namespace[name]
            namespace["__builtins__"] = builtins
            exec(code, namespace)
            return
        finally:
            namespace["__builtins__"] = builtins
        bindings = {n: v.target for n, v in namespace.items() if isinstance(v, _Placeholder)}
        for name in bindings:
            del namespace[name]
        module.__getattr__ = _resolver(module, bindings)  # type: ignore[method-assign]
        module.__dir__ = lambda: sorted({*vars(module), *bindings})  # type: ignore[method-assign]

    def _import(
        self,
        name: str,
        globals: Mapping[str, Any] | None = None,
        locals: Mapping[str, Any] | None = None,
        fromlist: Sequence[str] = (),
        level: int = 0,
    ) -> "ModuleType | _Deferred":
        """`__import__` while the package's code runs: a from-import of a deferred module
        gives names to bind lazily, anything else imports."""
        if fromlist and "*" not in fromlist and globals is not None:
            absolute = importlib.util.resolve_name(
                "." * level + name, globals.get("__package__") or ""
            ) if level else name  # fmt: skip
            if absolute in {*globals.get(_LAZY_VARIABLE, ()), *self._extra} or (
                f"{absolute.rpartition('.')[0]}.*" in self._extra
            ):
                return _Deferred(absolute)
        return builtins.__import__(name, globals, locals, fromlist, level)


class _Deferred:
    """What a deferred module's from-import gets instead of the module."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, attribute: str) -> "_Placeholder":
        return _Placeholder((self._module, attribute))


class _Placeholder:
    """A name a deferred from-import bound while the package's code runs; it becomes a lazy
    binding afterwards. Using it then is an error, and the package is imported as written."""

    __slots__ = ("target",)

    def __init__(self, target: tuple[str, str]) -> None:
        self.target = target

    def __getattr__(self, name: str) -> object:
        raise RuntimeError(f"{self.target[0]}.{self.target[1]} is deferred")


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


def _is_submodule(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
