"""What `vtp run PIPELINE` can name: a shipped pipeline, or one of the user's own.

    train | tune | export                 a pipeline this project ships (`vtp.pipelines.catalog`)
    path/to/pipeline.py[:function]        a file of the user's with a @dsl.pipeline function,
                                          or a single @dsl.component (run as a one-task pipeline)
    package.module:function               the same, importable from the current directory
    path/to/pipeline.yaml                 a compiled pipeline or component (kfp's IR YAML or JSON)

A file's own folder goes first on `sys.path` while it loads, so its imports of its neighbours
work as they do when the user runs it with python. Without `:function`, the file must define
exactly one pipeline. Local runs fill in `project` (and the catalog's other local defaults for
shipped pipelines) when the pipeline declares them and the user gives none.

kfp warns, at every `@dsl.component` without a `base_image`, that its default image will change:
while a user's file loads, that warning is shown once (`_user_code`), not once per component.

Whatever the form, what runs is its compiled PipelineSpec (`Source.spec()`, the dict kfp's
compiler writes as YAML): a component compiles to a pipeline of that one task, as kfp's
compiler compiles it.
"""

import contextlib
import functools
import importlib
import importlib.util
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vtp.pipelines import catalog
from vtp.run import spec_cache

COMPILED_SUFFIXES = (".yaml", ".yml", ".json")
BASE_IMAGE_WARNING = r"The default base_image used by the @dsl\.component decorator"
"""The start of kfp's FutureWarning for a component that names no base image."""
DOCUMENTS = "pipeline+platform"
"""What a `spec_cache` entry of a shipped pipeline holds (in its key: entries that held the
pipeline document alone are never read as both)."""
USER_DEFAULTS = {"project": catalog.LOCAL_PROJECT, "output_root": catalog.LOCAL_OUTPUT_ROOT}
"""What a local run of a user's pipeline fills in, for the parameters it declares."""


class SourceError(ValueError):
    """PIPELINE names nothing runnable; the message says what it expected."""


@dataclass(frozen=True)
class Source:
    """A pipeline (or component) to run, its name for people, and the values a local run
    starts from."""

    name: str
    load_pipeline: Callable[[], Any]
    """Returns a kfp BaseComponent: a @dsl.pipeline, a @dsl.component, or one loaded from YAML."""
    local_params: dict[str, Any] = field(default_factory=dict)
    keep_spec: bool = False
    """A pipeline this project ships: its compiled documents (pipeline and platform spec) are
    kept between runs (`spec_cache`), so a rerun imports neither kfp nor the pipeline."""

    @functools.cached_property
    def pipeline(self) -> Any:
        """The kfp BaseComponent (imported, and with it kfp, on first use)."""
        return self.load_pipeline()

    def spec(self) -> dict[str, Any]:
        """The compiled PipelineSpec, as a dict (what `kfp.compiler` writes as YAML)."""
        return self._documents["pipeline"]

    def platform(self) -> dict[str, Any]:
        """The pipeline's platform spec as a dict (what kfp writes as a compiled file's second
        document: a workspace, Kubernetes settings), empty when it has none."""
        return self._documents["platform"]

    @functools.cached_property
    def _documents(self) -> dict[str, dict[str, Any]]:
        if self.keep_spec:
            return spec_cache.cached_spec(f"{self.name} {DOCUMENTS}", self._compile)
        return self._compile()

    def _compile(self) -> dict[str, dict[str, Any]]:
        """Both documents of the compiled file: {"pipeline": ..., "platform": ...}."""
        from google.protobuf import json_format

        found = getattr(self.pipeline, "platform_spec", None)
        return {
            "pipeline": json_format.MessageToDict(self.pipeline.pipeline_spec),
            "platform": json_format.MessageToDict(found) if found is not None else {},
        }


def load(ref: str) -> Source:
    """The pipeline `ref` names (see the module docstring); SourceError otherwise."""
    if ref in catalog.PIPELINES:
        entry = catalog.entry(ref)
        return Source(ref, entry.load, dict(entry.local_params), keep_spec=True)
    if ref.endswith(COMPILED_SUFFIXES):
        return _user(ref, _compiled(Path(ref)))
    path_part, _, function = ref.partition(":")
    if path_part.endswith(".py"):
        return _user(ref, _pick(_from_file(Path(path_part)), function, ref))
    if function:
        return _user(ref, _pick(_from_module(path_part), function, ref))
    raise SourceError(
        f"unknown pipeline {ref!r}; use {', '.join(catalog.PIPELINES)}, FILE.py[:function], "
        "package.module:function or FILE.yaml"
    )


def _user(ref: str, pipeline: Any) -> Source:
    declared = set(pipeline.component_spec.inputs or {})
    defaults = {k: v for k, v in USER_DEFAULTS.items() if k in declared}
    return Source(ref, lambda: pipeline, defaults)


def _compiled(path: Path) -> Any:
    from kfp import components

    if not path.is_file():
        raise SourceError(f"PIPELINE: no compiled pipeline file {str(path)!r}")
    try:
        return components.load_component_from_file(str(path))
    except Exception as exc:  # kfp raises several types for a file that is not IR
        raise SourceError(f"PIPELINE: {path} is not a compiled pipeline: {exc}") from None


def _from_file(path: Path) -> Any:
    if not path.is_file():
        raise SourceError(f"PIPELINE: no such file {str(path)!r}")
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(f"vtp_user_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    try:
        with _user_code():
            spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:
        raise SourceError(
            f"PIPELINE: {path} failed to import: {type(exc).__name__}: {exc}"
        ) from exc
    return module


def _from_module(name: str) -> Any:
    if "" not in sys.path:
        sys.path.insert(0, "")  # as `python -m` would: the current directory
    try:
        with _user_code():
            return importlib.import_module(name)
    except ImportError as exc:
        raise SourceError(f"PIPELINE: cannot import {name!r}: {exc}") from None


@contextlib.contextmanager
def _user_code() -> Iterator[None]:
    """While a user's code loads: kfp's base-image warning at most once in this process."""
    with warnings.catch_warnings():
        warnings.filterwarnings("once", message=BASE_IMAGE_WARNING, category=FutureWarning)
        yield


def _pick(module: Any, function: str, ref: str) -> Any:
    from kfp.dsl.base_component import BaseComponent
    from kfp.dsl.graph_component import GraphComponent

    if function:
        found = getattr(module, function, None)
        if not isinstance(found, BaseComponent):
            raise SourceError(
                f"PIPELINE {ref!r}: {function!r} is not a @dsl.pipeline function or a "
                "@dsl.component"
            )
        return found
    pipelines = {n: v for n, v in vars(module).items() if isinstance(v, GraphComponent)}
    if len(pipelines) != 1:
        names = ", ".join(sorted(pipelines)) or "none"
        components = sorted(
            n
            for n, v in vars(module).items()
            if isinstance(v, BaseComponent) and not isinstance(v, GraphComponent)
        )
        also = f"; components: {', '.join(components)}" if components else ""
        raise SourceError(
            f"PIPELINE {ref!r}: name one with :function (pipelines here: {names}{also})"
        )
    return next(iter(pipelines.values()))
