"""The cache never serves a task whose resolved inputs changed, and serves every task whose
inputs did not: as a team runs it, `vtp run` of their own pipeline file from a folder outside
the repository, one state directory across runs.

First the minimal case that once returned another input's output (an upstream output inside a
dict constant), then a property test over generated pipelines: random DAGs of components whose
inputs are built from upstream outputs and parameters (directly, inside a dict, inside a list,
in an f-string), under conditions and in loops. Each is run with caching on (A), then with one
parameter changed (B, the cache warm from A), then the same as B with caching off (C, the
truth). Every task of B must have C's outputs (no stale hit), and a task is served from the
cache in B exactly when it ran in A with the inputs it has in C.
"""

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

REPRO = """
from kfp import dsl

@dsl.component
def make(n: int) -> str:
    return f"--epochs={n}"

@dsl.component
def use(spec: dict) -> str:
    return str(spec)

@dsl.pipeline(name="cache-repro")
def repro(n: int = 1):
    use(spec={"args": make(n=n).output})
"""


def vtp_run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vtp", "run", *args], cwd=folder, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


def _tasks(folder: Path) -> dict[str, dict]:
    """The last run's executor tasks by path, from the journal `vtp run` left in the state."""
    runs = sorted((folder / ".vtp" / "run" / "pipelines").glob("*/tasks.jsonl"))
    latest = max(runs, key=lambda p: p.stat().st_mtime)
    records: dict[int, dict] = {}
    for line in latest.read_text().splitlines():
        record = json.loads(line)
        records[record["id"]] = record
    return {r["path"]: r for r in records.values() if r.get("kind") == "executor"}


@pytest.mark.slow
def test_an_upstream_output_inside_a_dict_is_never_served_stale(tmp_path: Path) -> None:
    (tmp_path / "repro.py").write_text(REPRO)
    first = vtp_run(tmp_path, "repro.py", "--param", "n=1")
    assert first.returncode == 0, first.stderr
    second = vtp_run(tmp_path, "repro.py", "--param", "n=2")
    assert second.returncode == 0, second.stderr
    tasks = _tasks(tmp_path)
    assert tasks["make"]["outputs"] == {"Output": "--epochs=2"}
    assert not tasks["use"].get("cached")
    assert tasks["use"]["outputs"] == {"Output": "{'args': '--epochs=2'}"}
    said = second.stdout + second.stderr
    assert "[use] not from the cache: inputParameterValues.pipelinechannel--make-Output" in said
    third = vtp_run(tmp_path, "repro.py", "--param", "n=2")
    assert third.returncode == 0, third.stderr
    again = _tasks(tmp_path)
    assert again["make"].get("cached") and again["use"].get("cached")
    assert again["use"]["outputs"] == {"Output": "{'args': '--epochs=2'}"}


COMPONENTS = """
from kfp import dsl

@dsl.component
def text(a: str, b: str) -> str:
    return f"text({a},{b})"

@dsl.component
def pair(d: dict) -> str:
    return "pair(" + ",".join(f"{k}={d[k]}" for k in sorted(d)) + ")"

@dsl.component
def items(xs: list) -> str:
    return "items(" + ",".join(str(x) for x in xs) + ")"
"""


def generate(seed: int) -> tuple[str, dict[str, str]]:
    """A pipeline file of random tasks over parameters p0..p2, and its default arguments."""
    rng = random.Random(seed)
    params = {f"p{i}": rng.choice(["a", "b"]) for i in range(3)}
    lines = [COMPONENTS, f'@dsl.pipeline(name="generated-{seed}")']
    lines.append(
        "def generated(" + ", ".join(f'{p}: str = "{v}"' for p, v in params.items()) + "):"
    )
    values = list(params)  # expressions of values a task may use
    numbers = itertools.count()

    def pick() -> str:
        return rng.choice(values)

    def emit(indent: str, count: int) -> None:
        for _ in range(count):
            name = f"t{next(numbers)}"
            shape = rng.choice(["direct", "dict", "list", "fstring"])
            if shape == "direct":
                call = f"text(a={pick()}, b={pick()})"
            elif shape == "dict":
                call = f'pair(d={{"x": {pick()}, "y": {pick()}}})'
            elif shape == "list":
                call = f'items(xs=[{pick()}, "k", {pick()}])'
            else:
                call = f'text(a=f"pre-{{{pick()}}}", b={pick()})'
            lines.append(f"{indent}{name} = {call}.set_caching_options(True).output")
            values.append(name)

    emit("    ", rng.randint(2, 3))
    condition = rng.choice(list(params))
    outer = len(values)  # what runs under a condition or in a loop is not visible after it
    lines.append(f'    with dsl.If({condition} == "a"):')
    emit("        ", 2)
    del values[outer:]
    lines.append('    with dsl.ParallelFor(["i1", "i2"]) as item:')
    values.append("item")
    emit("        ", 2)
    del values[outer:]
    emit("    ", 1)
    return "\n".join(lines) + "\n", params


def _outputs(tasks: dict[str, dict]) -> dict[str, dict]:
    return {p: t.get("outputs", {}) for p, t in tasks.items() if t.get("state") == "SUCCEEDED"}


def _inputs(tasks: dict[str, dict]) -> dict[str, dict]:
    return {p: t.get("inputs", {}) for p, t in tasks.items() if t.get("state") == "SUCCEEDED"}


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_changed_parameter_reruns_exactly_the_tasks_whose_inputs_changed(
    tmp_path: Path, seed: int
) -> None:
    source, params = generate(seed)
    changed = random.Random(seed).choice(list(params))
    flipped = {"a": "b", "b": "a"}[params[changed]]
    for name in ("warm", "truth"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "generated.py").write_text(source)
    warm, truth = tmp_path / "warm", tmp_path / "truth"
    assert vtp_run(warm, "generated.py").returncode == 0  # A
    before = _tasks(warm)
    run_b = vtp_run(warm, "generated.py", "--param", f"{changed}={flipped}")  # B
    assert run_b.returncode == 0, run_b.stderr
    after = _tasks(warm)
    run_c = vtp_run(truth, "generated.py", "--param", f"{changed}={flipped}", "--no-cache")  # C
    assert run_c.returncode == 0, run_c.stderr
    fresh = _tasks(truth)
    assert _outputs(after) == _outputs(fresh), source  # nothing stale was served
    ran_before, now = _inputs(before), _inputs(fresh)
    for path in now:
        expected = path in ran_before and ran_before[path] == now[path]
        assert bool(after[path].get("cached")) == expected, (path, source)
    assert any(t.get("cached") for t in after.values()) or not ran_before, source
