"""`vtp run --from-job` with malformed descriptions: every field of a real compiled pipeline's
description (`tests/vtp/local/spec_walk.py`) given a value of another JSON type, or dropped.
Each ends before anything starts, in one line naming the field, exit 2 (the CLI's usage error),
never "internal error: AttributeError" nor a run whose engine fails with IndexError.

The walk calls the CLI's entry point in this process (about 800 descriptions: a process each
would take minutes), with the run's worker and service replaced by a failure, so a description
that got that far would fail the test instead of starting; a sample of the same descriptions,
the four that failed inside the engine with IndexError among them, runs as the `vtp` command.
"""

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures import run_vtp
from tests.vtp.local import spec_walk
from tests.vtp.local.spec_walk import Mutant

FREE = ("pipelineSpec", "parameterValues")
"""Where null is a value, not an unset field."""
SAMPLE = {
    "pipelineSpec.deploymentSpec.executors.exec-make.container.command": "x",
    "runtimeConfig.parameterValues": [1],
    "pipelineSpec.components.comp-make.inputDefinitions.parameters.n.parameterType": True,
    "pipelineSpec.root.dag.tasks": "x",
}
"""Wrong types the issue found (a list, a map, an enum, an object of tasks), as `vtp` runs."""
ENGINE_INDEX_ERRORS = (
    "pipelineSpec.deploymentSpec.executors.exec-make.container",
    "pipelineSpec.components.comp-make.executorLabel",
    "pipelineSpec.components.comp-exit-handler-1.dag.tasks.make.componentRef",
)
"""Parts whose absence the engine met with IndexError inside the run (the fourth: an
executorLabel naming no executor, `test_an_executor_label_naming_none_is_one_line`)."""


@pytest.fixture(scope="module")
def described(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A description of a run of the walk's pipeline, as `PipelineJob.to_dict()` writes one."""
    return spec_walk.description(spec_walk.compiled_spec(tmp_path_factory.mktemp("walk")))


def walked(description: dict[str, Any]) -> Iterator[Mutant]:
    """Every field under pipelineSpec and runtimeConfig wrong-typed (one JSON type per field,
    in turn), then dropped."""
    found = [
        *spec_walk.mutants(description, "", every_kind=False, free=FREE),
        *spec_walk.drops(description, ""),
    ]
    return (m for m in found if m.path[0] in ("pipelineSpec", "runtimeConfig"))


def verdict(mutant: Mutant, code: int, err: str) -> str:
    """ "" when `vtp run` answered `mutant` as it should; otherwise what it did."""
    if code != 2 or err.count("\n") != 1:
        return f"exit {code}: {err[-300:]!r}"
    if mutant.dropped:
        return ""  # an optional part may go (its inputs are refused then), a required one not
    if spec_walk.PASSED_DESCRIPTION in err:
        return "" if spec_walk.may_pass(mutant) else "accepted"
    return "" if spec_walk.names_field(err, mutant.name) else f"does not name it: {err!r}"


def test_every_malformed_field_is_one_line_naming_it(
    described: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from vtp.run import local_run, target

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run was started")

    monkeypatch.setattr(target, "prepare", started)
    monkeypatch.setattr(local_run, "run_pipeline", started)
    monkeypatch.chdir(tmp_path)
    state, job = tmp_path / "replay", tmp_path / "job.json"
    job.write_text(json.dumps(described))
    assert spec_walk.PASSED_DESCRIPTION in run_vtp(capsys, *run_args(job, state))[2]
    failures, count = [], 0
    for mutant in walked(described):
        job.write_text(json.dumps(mutant.body))
        code, _, err = run_vtp(capsys, *run_args(job, state))
        count += 1
        if problem := verdict(mutant, code, err):
            failures.append(f"{mutant.label()}: {problem}")
    assert failures == [], "\n".join(failures[:40])
    assert count > 700 and not state.exists()  # the whole walk; nothing started


@pytest.mark.parametrize("name", [*SAMPLE, *ENGINE_INDEX_ERRORS])
def test_the_vtp_command_refuses_a_malformed_description_in_one_line(
    described: dict[str, Any], tmp_path: Path, name: str
) -> None:
    """The issue's findings, as a user meets them: the `vtp` command, in a folder of its own."""
    path = tuple(name.split("."))
    mutant = spec_walk.changed(described, "", path, SAMPLE.get(name, spec_walk.DROP))
    result = vtp_run(tmp_path, mutant.body)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and "internal error" not in result.stderr
    named = name if name in SAMPLE else name.rpartition(".")[0]  # a part gone: where it was
    assert spec_walk.names_field(result.stderr, named), result.stderr
    assert not (tmp_path / "replay").exists()  # nothing started


def test_an_executor_label_naming_none_is_one_line(
    described: dict[str, Any], tmp_path: Path
) -> None:
    """A label of the right type naming no executor: the engine found no container to run and
    failed with IndexError; now it is refused before anything starts."""
    body = json.loads(json.dumps(described))
    body["pipelineSpec"]["components"]["comp-make"]["executorLabel"] = "exec-none"
    result = vtp_run(tmp_path, body)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr[-2000:]
    assert "pipelineSpec.components.comp-make.executorLabel: 'exec-none' names no executor" in (
        result.stderr
    )


def run_args(job: Path, state: Path) -> tuple[str, ...]:
    return ("run", "--from-job", str(job), "--state-dir", str(state))


def vtp_run(folder: Path, body: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """`vtp run --from-job` of `body` from `folder`, in a shell not pointed at any service."""
    (folder / "job.json").write_text(json.dumps(body))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VTP_LOCAL", "STORAGE_"))}
    return subprocess.run(
        [sys.executable, "-m", "vtp", *run_args(Path("job.json"), folder / "replay")],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
