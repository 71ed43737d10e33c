"""The `gs://` objects a compiled pipeline reads, found from its spec (for `vtp run --from-job`).

A pipeline parameter is traced through the compiled spec to the component inputs it reaches:
from the root DAG's tasks (`inputs.parameters[...].componentInputParameter`) into nested DAGs,
conditions and loops (a loop's items reach its `itemInput`), to the inputs of the containers and
importers that run; a value kfp folds into a constant (`f"{root}/train.csv"`: the task's
`pipelinechannel--root` input, named by a `{{$.inputs.parameters[...]}}` placeholder) reaches
the inputs whose constants name it. A parameter's `gs://` URIs are where the run writes only if
every input it reaches is a known output location (`OUTPUT_LOCATIONS`, the components' own
names for one); otherwise, reaching none included, they are inputs.

Constants are read by their fields (`READ_FIELDS`, `READ_INPUTS`): wherever a task's constant, a
component input's default or a DAG input's default reaches a container input, the URIs under a
field that is read (`worker_pool_specs[0].python_package_spec.package_uris`, a dataset's
`gcs_source`) are inputs; an importer's constant `artifactUri` is one too. Other constants are
not guessed at (a `gs://` in a constant may be where a task writes).
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vtp.storage import path_under

OUTPUT_LOCATIONS = frozenset(
    {
        # Ours (vtp/components): custom_job and hyperparameter_tuning write models and
        # checkpoints under output_root; autopackage stages packages under staging_uri.
        "output_root",
        "staging_uri",
        # GCPC 2.22 (google_cloud_pipeline_components), inputs documented as where output is
        # written: CustomTrainingJobOp, create_custom_training_job_from_component and
        # HyperparameterTuningJobRunOp (base_output_directory); ModelBatchPredictOp
        # (gcs_destination_output_uri_prefix; gcs_output_directory is its output); the
        # evaluation pipelines (batch_predict_gcs_destination_output_uri); the dataset export
        # ops (output_dir); ModelExportOp (artifact_destination); AutoML tabular and forecasting
        # (root_dir); Dataflow (staging_location, temp_location, save_heap_dumps_to_gcs_path);
        # BigqueryExportModelJobOp (model_destination_path); the LLM evaluation and chunking
        # components (judgments_dir, output_text_gcs_dir, output_error_file_path).
        "base_output_directory",
        "gcs_destination_output_uri_prefix",
        "gcs_output_directory",
        "batch_predict_gcs_destination_output_uri",
        "output_dir",
        "artifact_destination",
        "root_dir",
        "staging_location",
        "temp_location",
        "save_heap_dumps_to_gcs_path",
        "model_destination_path",
        "judgments_dir",
        "output_text_gcs_dir",
        "output_error_file_path",
        # Vertex's and kfp's names: a CustomJob's baseOutputDirectory.output_uri_prefix, the
        # pipeline root.
        "output_uri_prefix",
        "pipeline_root",
    }
)
"""Component inputs that name where a task writes. GCPC's names with `output` in them are not
all outputs (`inference_output_uri`, `evaluated_annotation_output_uri` are read): hence a list."""
READ_INPUTS = frozenset({"gcs_source", "gcs_source_uris", "source_uri"})
"""Component inputs whose whole value is read: GCPC's dataset create and import ops
(`gcs_source`), ModelBatchPredictOp (`gcs_source_uris`), our autopackage (`source_uri`)."""
READ_FIELDS = frozenset({"packageUris", "package_uris", "gcsSource", "gcs_source"})
"""Fields, at any depth of a constant, whose URIs are read: a worker pool's
`pythonPackageSpec.packageUris` (either spelling), a dataset or batch input's `gcsSource.uris`."""
_PLACEHOLDER = "{{$.inputs.parameters['%s']}}"
_DEEPEST = 100
"""How deep a value is searched (the spec check's limit for a pipeline's own nesting)."""


@dataclass(frozen=True)
class Read:
    """A `gs://` object the run reads, and where the spec names it."""

    where: str
    """The parameter (`data_root`), or the task and field (`train: worker_pool_specs[0]...`)."""
    uri: str
    parameter: str = ""
    """The pipeline parameter that gives it ("" when the spec itself does)."""

    def __str__(self) -> str:
        if not self.uri:
            return self.where
        return f"{self.where}={self.uri}" if self.parameter else f"{self.where} = {self.uri}"


def reads(spec: dict[str, Any], values: dict[str, Any]) -> list[Read]:
    """Every `gs://` the pipeline `spec` run with `values` (over its defaults) reads, each once."""
    walk = _Walk(spec)
    found: list[Read] = []
    declared = _map(_map(walk.root.get("inputDefinitions")).get("parameters"))
    defaults = {
        n: _map(d)["defaultValue"] for n, d in declared.items() if "defaultValue" in _map(d)
    }
    for name, value in sorted({**defaults, **values}.items()):
        uris = [uri for _, uri in _uris("", value)]
        leaves = list(walk.leaves("", walk.root, name, set())) if uris else []
        if leaves and all(leaf.input in OUTPUT_LOCATIONS and not leaf.read for leaf in leaves):
            continue  # only where components write
        found.extend(Read(name, uri, name) for uri in uris)
    for leaf, constant in walk.constants():
        value = _parsed(constant)
        fields = _uris(leaf.input, value) if leaf.read else _read_fields(leaf.input, value)
        found.extend(Read(f"{leaf.task}: {field}", uri) for field, uri in fields)
    found.extend(walk.importers())
    return list(dict.fromkeys(found))


def present(root: Path, uri: str) -> bool:
    """Whether `uri` is an object or folder under the storage `root` (a wildcard: matches one)."""
    wild = min((uri.find(c) for c in "*?[" if c in uri), default=-1)
    try:
        if wild < 0:
            return path_under(root, uri).exists()
        base = uri[:wild].rpartition("/")[0]
        folder = path_under(root, base)
    except (ValueError, OSError):
        return False
    try:
        return next(folder.glob(uri[len(base) + 1 :]), None) is not None
    except ValueError:  # a pattern pathlib does not take (`**.csv`): the folder, then
        return folder.is_dir()
    except OSError:
        return False


@dataclass(frozen=True)
class _Leaf:
    """A container's or importer's input that a value reaches."""

    task: str
    input: str
    read: bool
    """Whether the whole value is read (`READ_INPUTS`, or the input an importer imports)."""


class _Walk:
    """The compiled spec's DAGs, walked from an input down to the inputs of what runs."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.root = _map(spec.get("root"))
        self.components = _map(spec.get("components"))
        self.executors = _map(_map(spec.get("deploymentSpec")).get("executors"))

    def leaves(
        self, name: str, component: dict[str, Any], argument: str, seen: set[tuple[str, str]]
    ) -> Iterator[_Leaf]:
        """The leaf inputs that input `argument` of the DAG `component` (called `name`) reaches."""
        if (name, argument) in seen:
            return
        seen.add((name, argument))
        for task_name, task in _tasks(component):
            for given, source in _given(task).items():
                if _map(source).get("componentInputParameter") == argument:
                    yield from self.into(task_name, task, given, seen)

    def into(
        self, task_name: str, task: dict[str, Any], given: str, seen: set[tuple[str, str]]
    ) -> Iterator[_Leaf]:
        """The leaf inputs that the task's input `given` reaches."""
        callee_name, callee = self._callee(task)
        declared = _map(_map(callee.get("inputDefinitions")).get("parameters"))
        names = [given] if given in declared else []
        names += [
            other
            for other, source in _given(task).items()
            if other != given
            and other in declared
            and _PLACEHOLDER % given in _constant_text(source)
        ]
        if "dag" in callee:  # a DAG's tasks may name an input it does not declare: followed too
            inner = list(dict.fromkeys([given, *names]))
            iterator = _map(task.get("parameterIterator"))
            if _map(iterator.get("items")).get("inputParameter") in inner and isinstance(
                iterator.get("itemInput"), str
            ):
                inner.append(iterator["itemInput"])
            for argument in inner:
                yield from self.leaves(callee_name, callee, argument, seen)
            return
        imported = self._imported(callee)
        for argument in names:
            yield _Leaf(task_name, argument, argument in READ_INPUTS or argument == imported)

    def constants(self) -> Iterator[tuple[_Leaf, Any]]:
        """Each constant (a task's, a component input's default) with a leaf input it reaches."""
        for component in (self.root, *map(_map, self.components.values())):
            for task_name, task in _tasks(component):
                given = _given(task)
                for argument, source in given.items():
                    runtime = _map(_map(source).get("runtimeValue"))
                    if "constant" in runtime:
                        for leaf in self.into(task_name, task, argument, set()):
                            yield leaf, runtime["constant"]
                declared = _map(
                    _map(self._callee(task)[1].get("inputDefinitions")).get("parameters")
                )
                for argument, declaration in declared.items():
                    if argument not in given and "defaultValue" in _map(declaration):
                        for leaf in self.into(task_name, task, argument, set()):
                            yield leaf, _map(declaration)["defaultValue"]

    def importers(self) -> Iterator[Read]:
        """The constant URI of each importer a task runs."""
        for component in (self.root, *map(_map, self.components.values())):
            for task_name, task in _tasks(component):
                executor = self._executor(self._callee(task)[1])
                uri = _map(_map(executor.get("importer")).get("artifactUri")).get("constant")
                if isinstance(uri, str) and uri.startswith("gs://"):
                    yield Read(f"{task_name}: artifact_uri", uri)

    def _imported(self, callee: dict[str, Any]) -> str:
        """The input whose value an importer imports ("" for a container)."""
        uri = _map(_map(self._executor(callee).get("importer")).get("artifactUri"))
        parameter = uri.get("runtimeParameter")
        return parameter if isinstance(parameter, str) else ""

    def _callee(self, task: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The name and spec of the component `task` runs ({} if it names none)."""
        name = _map(task.get("componentRef")).get("name")
        return (name, _map(self.components.get(name))) if isinstance(name, str) else ("", {})

    def _executor(self, component: dict[str, Any]) -> dict[str, Any]:
        label = component.get("executorLabel")
        return _map(self.executors.get(label)) if isinstance(label, str) else {}


def _read_fields(where: str, value: Any, depth: int = 0) -> Iterator[tuple[str, str]]:
    """The URIs under `READ_FIELDS` in the constant `value` of input `where`, by field path."""
    if depth > _DEEPEST:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            at = f"{where}.{key}"
            if key in READ_FIELDS:
                yield from _uris(at, item, depth + 1)
            else:
                yield from _read_fields(at, item, depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _read_fields(f"{where}[{index}]", item, depth + 1)


def _uris(where: str, value: Any, depth: int = 0) -> Iterator[tuple[str, str]]:
    """Every `gs://` string in `value` (a placeholder kfp fills is none), with its path under
    `where`."""
    if depth > _DEEPEST:
        return
    if isinstance(value, str) and value.startswith("gs://") and "{{$" not in value:
        yield where, value
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _uris(f"{where}[{index}]", item, depth + 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _uris(f"{where}.{key}" if where else str(key), item, depth + 1)


def _parsed(value: Any) -> Any:
    """A constant that is the JSON text of a list or object (a serialized worker pool), parsed."""
    if isinstance(value, str) and value and value[0] in "[{":
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _tasks(component: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, task in _map(_map(component.get("dag")).get("tasks")).items():
        if isinstance(task, dict):
            yield str(name), task


def _given(task: dict[str, Any]) -> dict[str, Any]:
    return _map(_map(task.get("inputs")).get("parameters"))


def _constant_text(source: Any) -> str:
    """A task input's constant as text, where kfp's placeholders can be found ("" for none)."""
    runtime = _map(_map(source).get("runtimeValue"))
    if "constant" not in runtime:
        return ""
    constant = runtime["constant"]
    if isinstance(constant, str):
        return constant
    try:
        return json.dumps(constant, default=str)
    except (ValueError, RecursionError):
        return ""


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
