"""`vtp run` (a pipeline on this machine) and `vtp compile` (the YAML for Vertex Pipelines).

vtp run train [--param threshold=0.9 --param trainer_args='["--epochs=10"]']
vtp run my_pipeline.py[:function] | package.module:function | my_pipeline.yaml
vtp compile [--check] [--image REGISTRY/IMAGE:TAG]
"""

import argparse
import contextlib
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from vtp.cli import UsageError, preflight

DEFAULT_RUN_DIR = ".vtp/run"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `run` and `compile`."""
    run = subparsers.add_parser("run", help="run a pipeline locally against a local Vertex")
    run.add_argument(
        "pipeline",
        metavar="PIPELINE",
        help="train, tune, export, FILE.py[:function], package.module:function or FILE.yaml",
    )
    run.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="pipeline parameter, parsed by its declared type (LIST/STRUCT as JSON); repeatable",
    )
    run.add_argument(
        "--state-dir",
        type=Path,
        default=Path(DEFAULT_RUN_DIR),
        help=f"local service state, storage and pipeline outputs (default {DEFAULT_RUN_DIR})",
    )
    run.add_argument(
        "--open",
        action="store_true",
        help="open the local console in a browser; it stays up after the run until Ctrl-C",
    )
    run.set_defaults(func=_run)
    comp = subparsers.add_parser("compile", help="compile the pipelines to compiled/*.yaml")
    comp.add_argument("pipelines", nargs="*", metavar="PIPELINE", help="default: all")
    comp.add_argument("--check", action="store_true", help="fail if compiled/ is out of date")
    comp.add_argument("--image", help="the project's image to use in the compiled pipelines")
    comp.add_argument("--output-dir", type=Path, help="default: the repository's compiled/")
    comp.set_defaults(func=_compile)


def run_params(
    pipeline: Any, name: str, flags: list[str], implied: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The run's arguments: `--param NAME=VALUE` flags typed as pipeline `name` declares them
    (as `vtp submit` does) over the `implied` local defaults; every required one present."""
    from google.protobuf import json_format

    from vtp.vertex import pipeline_job

    declared = pipeline_job.parameters(json_format.MessageToDict(pipeline.pipeline_spec))
    try:
        values = pipeline_job.typed_values(name, pipeline_job.parse_param_flags(flags), declared)
        pipeline_job.check_values(values, on_vertex=False)
        values = {**(implied or {}), **values}
        pipeline_job.check_required(name, declared, values)
    except pipeline_job.SubmitError as exc:
        raise UsageError(str(exc)) from None
    preflight.check({**_defaults(declared), **values})
    return values


def _defaults(declared: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {n: d["defaultValue"] for n, d in declared.items() if "defaultValue" in d}


def _run(args: argparse.Namespace) -> int:
    from vtp.engine import fork_tasks
    from vtp.run import sources
    from vtp.run.local_run import run_pipeline
    from vtp.run.summary import summarize

    # Tasks fork from a server that imports kfp, the SDK and torch while the file loads.
    with fork_tasks.serving():
        try:
            source = sources.load(args.pipeline)
        except sources.SourceError as exc:
            raise UsageError(str(exc)) from None
        pipeline = source.pipeline
        arguments = run_params(pipeline, source.name, args.param, source.local_params)
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
        result = run_pipeline(
            args.pipeline,
            pipeline,
            arguments,
            args.state_dir.resolve(),
            open_console=args.open,
            after=_linger if args.open else lambda: None,
        )
    print(summarize(result))
    return 0 if result.succeeded else 1


def _linger() -> None:
    """Keep the console up after the run until Ctrl-C."""
    print("The run has ended; the console stays up until Ctrl-C.", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        threading.Event().wait()


def _compile(args: argparse.Namespace) -> int:
    from pipelines import catalog
    from pipelines.compile import compile_all
    from vtp.images import COMPONENT_IMAGE

    unknown = [name for name in args.pipelines if name not in catalog.PIPELINES]
    if unknown:
        choices = ", ".join(catalog.PIPELINES)
        raise UsageError(f"unknown pipeline {unknown[0]!r}; choose from {choices}")
    from vtp.vertex.image_build import last_built

    # Writing takes the last built image by default; a check compares with each file's own.
    image = args.image or (None if args.check else last_built())
    outcomes = compile_all(
        args.output_dir, image=image, names=args.pipelines or None, check=args.check
    )
    for outcome in outcomes:
        verb = ("out of date" if args.check else "written") if outcome.changed else "up to date"
        for_image = "" if outcome.image == COMPONENT_IMAGE else f" (for image {outcome.image})"
        print(f"{outcome.path}: {verb}{for_image}")
        if args.check and outcome.diff:
            print(outcome.diff, file=sys.stderr)
    return 1 if args.check and any(o.changed for o in outcomes) else 0
