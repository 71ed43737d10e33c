"""The engine runs compiled pipelines as Vertex does: each test compiles a small pipeline, runs
it in a real worker process (`python -m vtp.engine.worker RUN_DIR`, its tasks real processes)
and reads the journal the service would read."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kfp import dsl
from kfp.dsl import Dataset, Input, Output

from tests.fixtures import run_in_worker as run
from vtp.engine import fork_tasks, journal, worker


@dsl.component(base_image="python:3.11")
def flip(side: str) -> str:
    return side


@dsl.component(base_image="python:3.11")
def shout(text: str) -> str:
    return text.upper()


@dsl.component(base_image="python:3.11")
def total(values: list) -> int:
    return sum(values)


@dsl.component(base_image="python:3.11")
def square(x: int) -> int:
    return x * x


@dsl.component(base_image="python:3.11")
def fail(message: str):
    raise ValueError(message)


@dsl.component(base_image="python:3.11")
def report(status: dsl.PipelineTaskFinalStatus) -> str:
    return f"{status.state}:{status.pipeline_task_name}"


@dsl.component(base_image="python:3.11")
def write(text: str, data: Output[Dataset]):
    with open(data.path, "w") as f:
        f.write(text)


@dsl.component(base_image="python:3.11")
def read(data: Input[Dataset]) -> str:
    with open(data.path) as f:
        return f.read()


@dsl.pipeline
def branches(side: str = "heads") -> str:
    coin = flip(side=side)
    with dsl.If(coin.output == "heads"):
        heads = shout(text="heads won")
    with dsl.Else():
        tails = shout(text="tails won")
    return dsl.OneOf(heads.output, tails.output)


@dsl.pipeline
def squares(items: list = [1, 2, 3]) -> int:  # noqa: B006 (a KFP default, never mutated)
    with dsl.ParallelFor(items, parallelism=2) as x:
        sq = square(x=x)
    return total(values=dsl.Collected(sq.output)).output


@dsl.pipeline
def with_exit_handler(message: str = "boom"):
    final = report()
    with dsl.ExitHandler(final):
        fail(message=message)


@dsl.pipeline
def artifacts(text: str = "hello") -> str:
    return read(data=write(text=text).outputs["data"]).output


def test_a_condition_runs_one_branch_and_one_of_takes_its_output(tmp_path: Path) -> None:
    result, tasks = run(branches, tmp_path, side="tails")
    assert result["succeeded"], result
    assert tasks["condition-branches-1/condition-2"]["state"] == "SKIPPED"
    assert tasks["condition-branches-1/condition-3/shout-2"]["outputs"] == {"Output": "TAILS WON"}
    assert tasks[""]["state"] == "SUCCEEDED"


def test_a_loop_runs_each_item_and_collects_their_outputs(tmp_path: Path) -> None:
    result, tasks = run(squares, tmp_path, items=[2, 3, 4])
    assert result["succeeded"], result
    iterations = sorted(r["item"] for r in tasks.values() if r.get("kind") == "iteration")
    assert iterations == [2, 3, 4]
    assert tasks["total"]["outputs"] == {"Output": 29}


def test_the_exit_task_runs_after_a_failure_and_sees_it(tmp_path: Path) -> None:
    result, tasks = run(with_exit_handler, tmp_path)
    assert not result["succeeded"]
    assert "exit-handler-1/fail" in result["error"] and "boom" in result["error"]
    assert tasks["report"]["outputs"] == {"Output": "FAILED:exit-handler-1"}


def test_artifacts_pass_between_tasks(tmp_path: Path) -> None:
    result, tasks = run(artifacts, tmp_path, text="data")
    assert result["succeeded"], result
    assert tasks["read"]["outputs"] == {"Output": "data"}
    assert tasks["write"]["artifacts"]["data"][0]["schema"] == "system.Dataset"


def test_a_second_identical_run_is_served_from_the_cache(tmp_path: Path) -> None:
    run(artifacts, tmp_path, text="once")
    result, tasks = run(artifacts, tmp_path, text="once")
    assert result["succeeded"], result
    assert tasks["write"].get("cached") and tasks["read"].get("cached")
    _, changed = run(artifacts, tmp_path, text="twice")
    assert not changed["write"].get("cached") and not changed["read"].get("cached")
    assert changed["read"]["outputs"] == {"Output": "twice"}


@dsl.component(base_image="python:3.11")
def epochs_flag(n: int) -> str:
    return f"--epochs={n}"


@dsl.component(base_image="python:3.11")
def show(spec: dict) -> str:
    return str(spec)


@dsl.pipeline(name="channel-in-a-constant")
def channel_in_a_constant(n: int = 1):
    show(spec={"args": epochs_flag(n=n).output})


def test_an_upstream_output_inside_a_constant_is_part_of_the_cache_key(tmp_path: Path) -> None:
    """kfp passes an output used inside a dict as an extra `pipelinechannel--*` input that the
    component does not declare: a changed one is a miss, an unchanged one a hit."""
    run(channel_in_a_constant, tmp_path, n=1)
    _, changed = run(channel_in_a_constant, tmp_path, n=2)
    assert not changed["show"].get("cached")
    assert changed["show"]["outputs"] == {"Output": "{'args': '--epochs=2'}"}
    _, again = run(channel_in_a_constant, tmp_path, n=2)
    assert again["epochs-flag"].get("cached") and again["show"].get("cached")
    assert again["show"]["outputs"] == {"Output": "{'args': '--epochs=2'}"}


def test_caching_off_runs_everything(tmp_path: Path) -> None:
    run(artifacts, tmp_path)
    spec = yaml.safe_load((tmp_path / "pipeline.yaml").read_text())
    run_dir = tmp_path / "pipelines" / "off"
    run_dir.mkdir(parents=True)
    request = {**worker.request(spec, {}, tmp_path / "gcs" / "root"), "enableCaching": False}
    (run_dir / worker.REQUEST).write_text(json.dumps(request))
    env = {**os.environ, "VTP_GCS_ROOT": str(tmp_path / "gcs")}
    subprocess.run([sys.executable, "-m", "vtp.engine.worker", str(run_dir)], env=env, check=True)
    assert journal.read(run_dir) and not any(r.get("cached") for r in journal.read(run_dir))


UNEVALUABLE = 'foo; python_version ~= "x"'
"""A requirement whose marker compares a version with something that is none."""


@dsl.component(base_image="python:3.11", packages_to_install=[UNEVALUABLE])
def odd_install(x: int) -> int:
    return x


@dsl.pipeline
def with_odd_install() -> int:
    return odd_install(x=1).output


@pytest.mark.parametrize("fork", ["1", "0"], ids=["forked", "fresh"])
def test_a_requirement_whose_marker_cannot_be_evaluated_fails_its_task_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fork: str
) -> None:
    """Forked, the engine crashed on it ("the local engine failed: UndefinedComparison"); in a
    fresh interpreter pip did, with a traceback: either way the task fails saying what."""
    monkeypatch.setenv(fork_tasks.FORK_ENV, fork)
    result, tasks = run(with_odd_install, tmp_path)
    assert not result["succeeded"]
    error = tasks["odd-install"]["error"]
    assert error.startswith("task odd-install failed: its packages_to_install requirement"), error
    assert repr(UNEVALUABLE) in error and "'python_version ~= \"x\"'" in error, error
    assert "cannot be evaluated on this interpreter" in error and "engine failed" not in error
    assert "odd-install" in result["error"]


@dsl.component(base_image="python:3.11", packages_to_install=["six==1.16.0"])
def built_from_source() -> str:
    import six

    return f"{six.__version__} {six.__file__}"


@dsl.pipeline
def with_a_source_build() -> str:
    return built_from_source().output


def test_a_package_to_install_built_from_source_goes_to_the_tasks_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pip builds it in an isolated environment (`pip install --prefix`), which a target set
    for the task used to refuse ("Cannot set --home and --prefix together"); the service's own
    six, another version, is left as it is."""
    import six

    before = (six.__version__, six.__file__)
    monkeypatch.setenv("PIP_NO_BINARY", "six")  # an sdist: pip builds it, as for a C extension
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")  # every time (not a wheel built before)
    result, tasks = run(with_a_source_build, tmp_path)
    assert result["succeeded"], tasks["built-from-source"].get("error")
    version, where = tasks["built-from-source"]["outputs"]["Output"].split()
    assert version == "1.16.0" and "/.packages/" in where, where
    ran = subprocess.run(
        [sys.executable, "-c", "import six; print(six.__version__, six.__file__)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert tuple(ran.stdout.split()) == before
