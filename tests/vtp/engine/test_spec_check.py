"""The compiled pipeline's structural check (`vtp.engine.spec_check`), on its own: every real
compiled pipeline at hand passes it; what the engine could not run, or ran forever, does not.
(The walk over every field of a spec, through the service and the CLI, is in
`tests/vtp/local/test_fuzz.py` and `tests/vtp/cli/test_run_from_job_malformed.py`.)"""

import copy
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from vtp.engine import spec_check
from vtp.vertex.protodict import SpecError

REPO = Path(__file__).resolve().parents[3]
SITE = Path(yaml.__file__).resolve().parents[1]
REAL = sorted(
    [
        *REPO.glob("compiled/*.yaml"),
        *REPO.glob("compiled/components/*.yaml"),
        *SITE.glob("google_cloud_pipeline_components/**/*_pipeline.yaml"),
    ]
)
"""This project's compiled pipelines and components, and GCPC's compiled AutoML pipelines
(conditions, loops, exit handlers, importers: kfp's whole vocabulary)."""
TASK = {"componentRef": {"name": "comp-a"}}
SPEC: dict[str, Any] = {
    "pipelineInfo": {"name": "p"},
    "root": {"dag": {"tasks": {"a": TASK}}},
    "components": {"comp-a": {"executorLabel": "exec-a"}},
    "deploymentSpec": {"executors": {"exec-a": {"container": {"image": "i", "command": ["x"]}}}},
}


def refusal(spec: dict[str, Any]) -> str:
    with pytest.raises(SpecError) as refused:
        spec_check.check_pipeline_spec(spec, "pipelineSpec")
    return str(refused.value)


def changed(path: str, value: Any) -> dict[str, Any]:
    """SPEC with `value` at the dotted `path` (None: left out)."""
    spec = copy.deepcopy(SPEC)
    *parents, last = path.split(".")
    holder = spec
    for key in parents:
        holder = holder.setdefault(key, {})
    if value is None:
        del holder[last]
    else:
        holder[last] = value
    return spec


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_every_real_compiled_pipeline_passes(path: Path) -> None:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # GCPC's files are large
    spec = next(d for d in yaml.load_all(path.read_text(), Loader=loader) if d)
    spec_check.check_pipeline_spec(spec, "pipelineSpec")


def test_the_corpus_is_there() -> None:
    assert len(REAL) > 20


@pytest.mark.parametrize(
    ("path", "value", "says"),
    [
        ("deploymentSpec.executors.exec-a.container.command", "x", ".command: expected a list"),
        ("deploymentSpec.executors.exec-a.container.command", [None], ".command[0]: expected a"),
        ("deploymentSpec.executors.exec-a.container", None, "exec-a: has no container or"),
        ("deploymentSpec.executors.exec-a.container", {"image": "i"}, "no command or args"),
        ("deploymentSpec", [], "deploymentSpec: expected a mapping"),
        ("components.comp-a.executorLabel", None, "comp-a: needs a dag or an executorLabel"),
        ("components.comp-a.executorLabel", "exec-b", "'exec-b' names no executor"),
        ("root.dag.tasks.a.componentRef", None, "a.componentRef.name: is required"),
        ("root.dag.tasks.a.componentRef.name", "comp-b", "'comp-b' names no component"),
        ("root.dag.tasks.a.dependentTasks", ["b"], "dependentTasks[0]: 'b' names no task"),
        ("root.dag.tasks.a.retryPolicy", {"maxRetryCount": 1e20}, "maxRetryCount: 1e+20 is out"),
        ("root.dag.tasks.a.parameterIterator", {"items": {"raw": "{}"}}, "expected a JSON list"),
        ("root.dag", None, None),  # a root that runs nothing runs
        ("pipelineInfo.name", None, "pipelineSpec.pipelineInfo.name: is required"),
        ("pipelineInfo", None, "pipelineSpec.pipelineInfo.name: is required"),
        ("root", None, "pipelineSpec.root: is required"),
        ("deployment_spec", {}, "write it 'deploymentSpec'"),  # the engine would read it
        ("pipelineInfo.description", "a pipeline", None),
        ("futureField", {"any": ["thing"]}, None),  # a newer kfp's: skipped, as the engine does
        ("root.dag.tasks", None, None),
    ],
)
def test_what_the_engine_reads_is_checked_naming_the_field(path, value, says) -> None:
    spec = changed(path, value)
    if says is None:
        spec_check.check_pipeline_spec(spec, "pipelineSpec")
    else:
        assert says in refusal(spec)


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("STRING", "x", 1),
        ("NUMBER_INTEGER", 3.0, "3"),
        ("NUMBER_DOUBLE", 1, True),
        ("BOOLEAN", False, 0),
        ("LIST", [], {}),
        ("STRUCT", {}, []),
        (4, False, "no"),  # BOOLEAN by its enum number
    ],
)
def test_defaults_and_declared_constants_fit_the_parameter_type(kind, good, bad) -> None:
    declared = {"parameters": {"x": {"parameterType": kind}}}
    for where in ("root", "components.comp-a"):
        spec = changed(f"{where}.inputDefinitions", copy.deepcopy(declared))
        holder: Any = spec
        for key in where.split("."):
            holder = holder[key]
        parameter = holder["inputDefinitions"]["parameters"]["x"]
        parameter["defaultValue"] = good
        spec_check.check_pipeline_spec(spec, "pipelineSpec")
        parameter["defaultValue"] = bad
        field = f"pipelineSpec.{where}.inputDefinitions.parameters.x.defaultValue"
        assert f"{field}: expected a" in refusal(spec)
    spec = changed("components.comp-a.inputDefinitions", copy.deepcopy(declared))
    inputs = spec["root"]["dag"]["tasks"]["a"].setdefault("inputs", {"parameters": {}})
    inputs["parameters"]["x"] = {"runtimeValue": {"constant": good}}
    spec_check.check_pipeline_spec(spec, "pipelineSpec")
    inputs["parameters"]["x"] = {"runtimeValue": {"constant": bad}}
    assert "tasks.a.inputs.parameters.x.runtimeValue.constant: expected a" in refusal(spec)


def test_a_component_that_runs_inside_itself_is_refused() -> None:
    """It recursed until the worker died."""
    spec = changed("components.comp-a", {"dag": {"tasks": {"again": TASK}}})
    assert "again.componentRef.name: 'comp-a' runs inside itself" in refusal(spec)


def test_dags_nest_at_most_so_deep_and_each_is_measured_once() -> None:
    """A chain of MAX_DAG_DEPTH DAGs passes, one more does not; DAGs whose every task shares
    the next DAG (2**200 paths through them) are checked in a moment, not walked path by path."""

    def chain(depth: int, fan: int) -> dict[str, Any]:
        spec = copy.deepcopy(SPEC)
        for level in range(depth):
            inner = f"comp-d{level + 1}" if level + 1 < depth else "comp-a"
            tasks = {f"t{i}": {"componentRef": {"name": inner}} for i in range(fan)}
            spec["components"][f"comp-d{level}"] = {"dag": {"tasks": tasks}}
        spec["root"]["dag"]["tasks"]["a"]["componentRef"]["name"] = "comp-d0"
        return spec

    spec_check.check_pipeline_spec(chain(spec_check.MAX_DAG_DEPTH, 1), "pipelineSpec")
    assert "nests DAGs more than" in refusal(chain(spec_check.MAX_DAG_DEPTH + 1, 1))
    started = time.monotonic()
    spec_check.check_pipeline_spec(chain(50, 4), "pipelineSpec")  # 4**50 paths
    assert time.monotonic() - started < 2


def test_a_huge_value_is_not_repeated_whole() -> None:
    message = refusal(changed("pipelineInfo.name", ["x" * 1_000_000]))
    assert "pipelineInfo.name: expected a string" in message and len(message) < 300
