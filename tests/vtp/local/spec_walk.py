"""Every field of a real compiled pipeline given a value of the wrong type, or dropped: the
create bodies the fuzz test sends to pipelineJobs and schedules (REST and gRPC), and the
descriptions it gives `vtp run --from-job`.

The pipeline (`walked_pipeline`) is small but holds what the engine reads: parameters of every
type with defaults, a task's outputs (a parameter and an artifact) taken by another, constants,
a condition, a loop, an exit handler (a final status), a retry policy, caching options, an
environment variable and an importer. kfp compiles it here, so the spec is what the installed
kfp writes.

Each body is valid but for one thing checked last, so nothing is ever stored or started: a job's
`pipelineJobId` (`BAD_ID`, checked after the job), a schedule's start time (`NEVER_STARTS`: its
cron has no time after it), a description's inputs (`MISSING_INPUT`, and the importer's URI).
A mutated body is answered 4xx, and a wrong type is refused naming its field (`names_field`)
unless `may_pass` says why the value fits (the contents of a LIST or STRUCT value, a null
default). A drop may pass (an optional part) or be refused, never 5xx.
"""

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.vtp.local.fuzz import PARENT

BAD_ID = "Not_An_Id"
"""The pipelineJobId every walked job is sent with: refused once the job itself has passed."""
NEVER_STARTS = "9999-12-31T23:59:00Z"
"""A schedule's start time its cron (03:00 daily) has no time after: refused last."""
MISSING_INPUT = "gs://fuzz-in/missing"
"""A parameter value naming an input no storage root has: `vtp run --from-job` refuses a
description once it has passed every other check (so does the importer's URI, the spec's)."""
PASSED_JOB = f"pipelineJobId {BAD_ID!r} is invalid"
PASSED_SCHEDULE = "does not fire after 9999-12-31"
PASSED_DESCRIPTION = "inputs missing from local Cloud Storage"
"""What the answer says when the body passed every check but the last."""
DROP = object()
"""Put in place of a field (`changed`): it is left out."""
_WRONG: dict[type, tuple[Any, ...]] = {
    bool: ("true", 1),
    dict: ("x", [1]),
    list: ("x", {"a": 1}),
    str: (True, []),
    int: ("x", {}),
    float: ("x", {}),
}
"""Values of other JSON types, by the type of the value they replace: a string, a list where an
object goes, an object where a list or a number goes... (`True` stands for a string's other
scalar: a number could be an enum's)."""
_FITS_ANY = (
    re.compile(r"\.defaultValue[.\[]"),  # inside a LIST or STRUCT default
    re.compile(r"\.runtimeValue\.constant[.\[]"),  # inside a LIST or STRUCT constant
    re.compile(r"\.importer\.metadata\."),  # inside a Struct
    re.compile(r"\.parameterValues\.[^.\[]+[.\[]"),  # inside a LIST or STRUCT value
    # A constant for an input kfp adds for a value used inside a constant: not declared.
    re.compile(r"\.inputs\.parameters\.pipelinechannel--[^.]+\.runtimeValue\.constant$"),
)
"""Where any JSON value may stand: google.protobuf.Value and Struct contents the component's
declarations do not type."""


@dataclass(frozen=True)
class Mutant:
    """One body with one field changed: `value` put at `path` (None: dropped, with `dropped`)."""

    path: tuple[str | int, ...]
    name: str
    """The field as the service names it (`pipelineJob.pipelineSpec.root.dag`)."""
    value: Any
    dropped: bool
    body: dict[str, Any]

    def label(self) -> str:
        """What a failure line names."""
        return f"{self.name} {'dropped' if self.dropped else '= ' + json.dumps(self.value)}"


def walked_pipeline() -> Any:
    """The pipeline the walk compiles (kfp's DSL, imported here: it takes a second)."""
    from kfp import dsl
    from kfp.dsl import Dataset, Input, Output, PipelineTaskFinalStatus

    @dsl.component(base_image="python:3.11")
    def make(
        n: int,
        data: Output[Dataset],
        rate: float = 0.5,
        on: bool = True,
        tags: list = ["a"],  # noqa: B006 (kfp's defaults are literals)
        config: dict = {"k": 1},  # noqa: B006
    ) -> str:
        return "made"

    @dsl.component(base_image="python:3.11")
    def use(text: str, data: Input[Dataset]) -> int:
        return len(text)

    @dsl.component(base_image="python:3.11")
    def report(status: PipelineTaskFinalStatus) -> None:
        print(status.state)

    @dsl.pipeline(name="fuzz-walk")
    def walk(n: int, name: str = "x", items: list = [1, 2]) -> None:  # noqa: B006
        with dsl.ExitHandler(report()):
            made = make(n=n).set_retry(num_retries=1, backoff_duration="1s")
            made.set_caching_options(False)
            with dsl.If(name == "x"):
                use(text=made.outputs["Output"], data=made.outputs["data"]).set_env_variable(
                    "K", "V"
                )
            with dsl.ParallelFor(items, parallelism=1) as item:
                make(n=item, rate=2.5)
            imported = dsl.importer(
                artifact_uri="gs://fuzz-in/x", artifact_class=Dataset, metadata={"k": "v"}
            )
            use(text="t", data=imported.output)

    return walk


def compiled_spec(folder: Path) -> dict[str, Any]:
    """`walked_pipeline` compiled by the installed kfp, as a dict."""
    from kfp import compiler

    package = folder / "walk.yaml"
    compiler.Compiler().compile(walked_pipeline(), str(package))
    return yaml.safe_load(package.read_text())


def job_body(spec: dict[str, Any]) -> dict[str, Any]:
    """A PipelineJob create body (REST JSON) that runs `spec`."""
    values = {"n": 3, "name": MISSING_INPUT}
    runtime = {"gcsOutputDirectory": "gs://fuzz-out/root", "parameterValues": values}
    return {"displayName": "walk", "pipelineSpec": spec, "runtimeConfig": runtime}


def schedule_body(spec: dict[str, Any]) -> dict[str, Any]:
    """A Schedule create body (REST JSON) whose runs run `spec`, refused only for its start."""
    return {
        "displayName": "walk",
        "cron": "0 3 * * *",
        "startTime": NEVER_STARTS,
        "maxConcurrentRunCount": "1",
        "createPipelineJobRequest": {"parent": PARENT, "pipelineJob": job_body(spec)},
    }


def description(spec: dict[str, Any]) -> dict[str, Any]:
    """A PipelineJob as `PipelineJob.to_dict()` describes one, for `vtp run --from-job`."""
    return {"name": f"{PARENT}/pipelineJobs/walked", **job_body(spec)}


def mutants(
    body: dict[str, Any], where: str, *, every_kind: bool = True, free: tuple[str, ...] = ()
) -> Iterator[Mutant]:
    """`body` with each field, at every depth, replaced by values of other JSON types (all of
    `_WRONG`'s, or one per field, in turn, without `every_kind`), and null where protobuf's
    JSON takes null as a value rather than as unset: under a `free` key (a Struct, such as
    `pipelineSpec`; `parameterValues`' Values). Named under `where` (`pipelineJob`; "": none)."""
    for index, (path, value) in enumerate(_fields(body)):
        under_free = any(key in free for key in path[:-1])
        replacements = list(_WRONG[type(value)])
        if not every_kind:
            replacements = [replacements[index % len(replacements)]]
        if under_free:
            replacements.append(None)
        for replacement in replacements:
            yield changed(body, where, path, replacement)


def changed(body: dict[str, Any], where: str, path: tuple[str | int, ...], value: Any) -> Mutant:
    """`body` with `value` at `path` (`DROP`: the field left out)."""
    dropped = value is DROP
    return Mutant(
        path, _name(where, path), None if dropped else value, dropped, _put(body, path, value)
    )


def drops(body: dict[str, Any], where: str) -> Iterator[Mutant]:
    """`body` with each field, at every depth, left out."""
    for path, _ in _fields(body):
        yield changed(body, where, path, DROP)


def only_under(found: Iterator[Mutant], *keys: str) -> Iterator[Mutant]:
    """The mutants whose field lies under one of `keys` (`pipelineSpec`, `parameterValues`):
    what a gRPC request can carry of the wrong type, as a Struct or a Value."""
    return (m for m in found if any(key in m.path[:-1] for key in keys))


def may_pass(mutant: Mutant) -> bool:
    """Whether the mutated value may be accepted: any JSON value fits there (a Value's or a
    Struct's contents, the constant of an input the component does not declare), or it is a
    null default or constant (an unset one)."""
    name = mutant.name
    if mutant.value is None and name.endswith((".defaultValue", ".runtimeValue.constant")):
        return True
    return any(pattern.search(name) for pattern in _FITS_ANY)


def names_field(message: str, name: str) -> bool:
    """Whether `message` names the field `name` (or a field inside it), as a JSON path:
    `parameterValues['n']` counts as `parameterValues.n`; a longer name does not count
    (`comp-make-2` is not `comp-make`)."""
    plain = re.sub(r"\['([^']*)'\]", r".\1", message)
    return re.search(re.escape(name) + r"(?![\w-])", plain) is not None


def grpc_job_request(body: dict[str, Any]) -> bytes:
    """CreatePipelineJobRequest bytes for a (REST JSON) job body, with `BAD_ID`."""
    from google.cloud import aiplatform_v1
    from google.protobuf import json_format

    request = {"parent": PARENT, "pipelineJob": body, "pipelineJobId": BAD_ID}
    message = json_format.ParseDict(request, aiplatform_v1.CreatePipelineJobRequest.pb()())
    return bytes(message.SerializeToString())


def grpc_schedule_request(body: dict[str, Any]) -> bytes:
    """CreateScheduleRequest bytes for a (REST JSON) schedule body."""
    from google.cloud import aiplatform_v1
    from google.protobuf import json_format

    request = {"parent": PARENT, "schedule": body}
    message = json_format.ParseDict(request, aiplatform_v1.CreateScheduleRequest.pb()())
    return bytes(message.SerializeToString())


def _fields(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple, Any]]:
    """(path, value) of every field and list item below `value`, depth first."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        yield (*path, key), item
        if isinstance(item, dict | list):
            yield from _fields(item, (*path, key))


def _put(body: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A copy of `body` with `value` at `path` (`DROP`: left out)."""
    changed = copy.deepcopy(body)
    parent: Any = changed
    for key in path[:-1]:
        parent = parent[key]
    if value is DROP:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return changed


def _name(where: str, path: tuple[str | int, ...]) -> str:
    """`where.a.b[2].c`: the field at `path` as the service names it."""
    name = where
    for key in path:
        if isinstance(key, int):
            name += f"[{key}]"
        else:
            name = f"{name}.{key}" if name else key
    return name
