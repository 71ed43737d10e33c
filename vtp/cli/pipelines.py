"""`vtp run` (a pipeline on this machine) and `vtp compile` (the YAML for Vertex Pipelines).

vtp run train [--param threshold=0.9 --param trainer_args='["--epochs=10"]'] [--no-cache]
    [--experiment NAME]
vtp run my_pipeline.py[:function] | package.module:function | my_pipeline.yaml
vtp run my_components.py:component --param a=1
vtp run --from-job JOB.json [--param name=value]   # a described PipelineJob, run again here
vtp run --from-job JOB.json [--args=A,B] [--command=C] [--container-image-uri=IMAGE]
    # a described CustomJob, HyperparameterTuningJob or TrainingPipeline (`vtp.cli.replay`)
vtp compile [--check] [--image REGISTRY/IMAGE:TAG]

`vtp run` compiles what it is given to a PipelineSpec, creates a pipeline job on the local
service of its state directory (`vtp.run.local_run`), prints the run's log while it runs and a
summary at the end; Ctrl-C cancels the job and exits 130. Expected refusals (an unknown
pipeline, a file that does not load, a bad --param, a state directory another `vtp run` holds)
are one line, exit 2, before any job exists.
"""

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from vtp import import_gc
from vtp.cli import UsageError, add_param_flag, preflight, replay

DEFAULT_RUN_DIR = ".vtp/run"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `run` and `compile`."""
    run = subparsers.add_parser(
        "run", help="run a pipeline locally: a pipeline job on the local Vertex service"
    )
    run.add_argument(
        "pipeline",
        metavar="PIPELINE",
        nargs="?",
        help="train, tune, export, FILE.py[:function], package.module:function or FILE.yaml; "
        "the function may be a @dsl.component, run alone",
    )
    run.add_argument(
        "--from-job",
        type=Path,
        metavar="JOB.json",
        help="instead of PIPELINE: a PipelineJob, CustomJob, HyperparameterTuningJob or "
        "TrainingPipeline as Vertex, gcloud (describe --format=json|yaml) or the SDK "
        "(to_dict()) describes it, run again here: a pipeline with its parameter values, "
        "--param overriding them, its gs:// inputs existing locally; a job with its specs, "
        "--args, --command and --container-image-uri overriding its pools'",
    )
    add_param_flag(run)
    replay.add_flags(run)
    run.add_argument(
        "--state-dir",
        type=Path,
        default=Path(DEFAULT_RUN_DIR),
        help=f"local service state, storage and pipeline outputs (default {DEFAULT_RUN_DIR}); "
        "when a `vtp local serve` holds it, the run is submitted to that service",
    )
    run.add_argument(
        "--open",
        action="store_true",
        help="open the local console in a browser; it stays up after the run until Ctrl-C",
    )
    run.add_argument(
        "--cache",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="turn caching on or off for every task, as `vtp submit --[no-]enable-caching` does "
        "(default: as compiled; a task whose component and inputs ran before reuses its outputs)",
    )
    run.add_argument(
        "--experiment",
        default="",
        help="a Vertex AI experiment the run joins (created if need be), as "
        "PipelineJob.submit(experiment=...) joins one: aiplatform.get_experiment_df lists it "
        "with its parameters and metrics",
    )
    run.set_defaults(func=_run)
    comp = subparsers.add_parser("compile", help="compile the pipelines to compiled/*.yaml")
    comp.add_argument("pipelines", nargs="*", metavar="PIPELINE", help="default: all")
    comp.add_argument("--check", action="store_true", help="fail if compiled/ is out of date")
    comp.add_argument(
        "--image",
        metavar="REGISTRY/PATH:TAG",
        help="the project's image to use in the compiled pipelines: one Vertex can pull, e.g. "
        "us-central1-docker.pkg.dev/PROJECT/REPO/vtp:TAG "
        "(default: the last `vtp image build`, else the placeholder)",
    )
    comp.add_argument("--output-dir", type=Path, help="default: the repository's compiled/")
    comp.set_defaults(func=_compile)


def run_params(
    spec: dict[str, Any], name: str, flags: list[str], implied: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The run's arguments: `--param NAME=VALUE` flags typed as the compiled pipeline `spec`
    (called `name`) declares them (as `vtp submit` does) over the `implied` local defaults;
    every required one present; checked as the tasks would check them, a trainer task
    importable from here, the folder the run's tasks start in."""
    from vtp.vertex import pipeline_job

    declared = pipeline_job.parameters(spec)
    try:
        values = pipeline_job.typed_values(name, pipeline_job.parse_param_flags(flags), declared)
        pipeline_job.check_values(values, on_vertex=False)
        values = {**(implied or {}), **values}
        pipeline_job.check_required(name, declared, values)
    except pipeline_job.SubmitError as exc:
        raise UsageError(str(exc)) from None
    preflight.check({**_defaults(declared), **values}, folder=Path.cwd())
    return values


def _defaults(declared: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {n: d["defaultValue"] for n, d in declared.items() if "defaultValue" in d}


def _run(args: argparse.Namespace) -> int:
    # Until the run's job exists, this process imports (the pipeline, kfp, the service, the
    # clients): without the collector, which the run resumes then (`vtp.import_gc`).
    import_gc.pause()
    try:
        return _run_paused(args)
    finally:
        import_gc.resume()


def _run_paused(args: argparse.Namespace) -> int:
    from vtp.run import target

    # A description is read and checked whole before the run's worker is spawned: a bad one
    # is one line (exit 2) with nothing started. A described job runs as a job.
    kind, document = replay.read(args) if args.from_job else (None, None)
    if kind is not None and kind.name != "PipelineJob":
        return replay.run_job(args, kind, document)
    replay.check_pipeline_flags(args)
    described = _described(args, document) if args.from_job else None
    target.prepare(args.state_dir, args.cache)  # the run's worker imports while this does
    from vtp.engine import vertex_tasks
    from vtp.run import job, sources
    from vtp.run.follow import write
    from vtp.run.local_run import run_pipeline
    from vtp.run.summary import summarize
    from vtp.vertex import compiled

    if described is not None:
        spec, arguments = described
        args.pipeline = str(args.from_job)
        platform: dict[str, Any] = {}  # a described job carries no platform spec
    else:
        if not args.pipeline:
            raise UsageError("PIPELINE: name the pipeline to run, or give --from-job JOB.json")
        try:
            source = sources.load(args.pipeline)
            spec = source.spec()
            platform = source.platform()
        except sources.SourceError as exc:
            raise UsageError(str(exc)) from None
        arguments = run_params(spec, source.name, args.param, source.local_params)
    if args.experiment:
        try:
            job.check_experiment(args.experiment)
        except job.ExperimentError as exc:
            raise UsageError(f"--experiment: {exc}") from None
    try:
        vertex_tasks.check_runnable(spec)
    except (ValueError, RuntimeError) as exc:  # a component this machine cannot run
        raise UsageError(f"PIPELINE {args.pipeline!r}: {exc}") from None
    try:  # the workspace its platform spec asks for, in the state directory
        compiled.check_workspace(platform, args.state_dir)
    except ValueError as exc:
        raise UsageError(f"PIPELINE {args.pipeline!r}: {exc}") from None
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if described is not None:
        write(sys.stderr, replay.pipeline_line(args, document))
    try:
        result = run_pipeline(
            args.pipeline,
            spec,
            arguments,
            args.state_dir,
            report=lambda ended: write(sys.stdout, summarize(ended) + "\n"),
            cache=args.cache,
            open_console=args.open,
            experiment=args.experiment,
        )
    except target.StateDirBusy as exc:
        raise UsageError(f"--state-dir: {exc}") from None
    except job.ExperimentError as exc:
        raise UsageError(f"--experiment: {exc}") from None
    if result is None or result.interrupted:
        write(sys.stderr, f"vtp: interrupted: {_what_stopped(result)}\n")
        return 130
    return 0 if result.succeeded else 1


def _described(args: argparse.Namespace, document: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The spec and arguments of the PipelineJob `--from-job` describes, --param over its
    values; UsageError naming its inputs that local Cloud Storage lacks, before anything runs."""
    from vtp.run import from_job, target

    if args.pipeline:
        raise UsageError(
            "PIPELINE and --from-job: give one (the description holds the pipeline to run)"
        )
    try:
        described = from_job.load(args.from_job, document)
    except from_job.JobFileError as exc:
        raise UsageError(f"--from-job: {exc}") from None
    arguments = run_params(described.spec, described.name, args.param, described.values)
    root = target.storage_root(args.state_dir)
    missing = from_job.missing_inputs(described, arguments, root)
    if missing:
        raise UsageError(f"--from-job: {from_job.refusal(missing, root)}")
    return described.spec, arguments


def _what_stopped(result: Any) -> str:
    """One line: what an interrupted `vtp run` cancelled (a RunResult, or None)."""
    from vtp.vertex.states import PIPELINE_ENDED

    if result is None:
        return "nothing was started"
    if result.job.state not in PIPELINE_ENDED:
        return (
            f"stopped waiting for {result.job.name} ({result.job.state.name}); "
            "the service stops what it started"
        )
    with_it = f"; with it: {', '.join(result.notes)}" if result.notes else ""
    return f"cancelled {result.job.name}{with_it}"


def _compile(args: argparse.Namespace) -> int:
    from vtp.images import COMPONENT_IMAGE, vertex_image
    from vtp.pipelines import catalog
    from vtp.pipelines.compile import compile_all

    if args.image is not None:  # compiled pipelines are for Vertex, which pulls the image
        try:
            vertex_image(args.image)
        except ValueError as exc:
            raise UsageError(f"--image: {exc}") from None
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
