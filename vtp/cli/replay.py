"""`vtp run --from-job FILE`: which resource FILE describes, and the run of a described job.

    vtp run --from-job job.json                          # a CustomJob, tuning job, PipelineJob
    vtp run --from-job job.yaml --args=--epochs=1        # or TrainingPipeline; gcloud's flags
    vtp run --from-job job.json --command=python,-c,'print(1)' --container-image-uri=IMAGE

FILE is a description as Vertex, gcloud or the SDK prints one (`vtp.vertex.describe`: JSON or
YAML, camelCase or snake_case). A PipelineJob goes on to `vtp run`'s pipeline path
(`vtp.run.from_job`, `--param` over its values); a CustomJob, HyperparameterTuningJob or a
TrainingPipeline's custom task runs as a job on the state directory's service
(`vtp.run.replay`), with gcloud's `--args`, `--command` and `--container-image-uri` over every
pool. Either way one line on stderr says what the file is and which output-only fields were
dropped, once everything is checked; a refusal is one line, exit 2, with nothing started.
"""

import argparse
import sys
from typing import Any

from vtp.cli import UsageError

JOB_FLAGS = ("--args", "--command", "--container-image-uri")
"""The flags that override a described job's pools (gcloud's `custom-jobs create` names)."""
PIPELINE_FLAGS = (("--param", "param"), ("--experiment", "experiment"), ("--cache", "cache"))
"""`vtp run`'s flags for a pipeline, which a described job has no use for."""


def add_flags(parser: argparse.ArgumentParser) -> None:
    """Add the job overrides to `vtp run`."""
    add = parser.add_argument
    for_job = "with --from-job of a CustomJob, tuning job or TrainingPipeline: "
    add(
        "--args",
        action="append",
        default=[],
        help=f"{for_job}comma-separated args for every pool, as gcloud's (repeats add up)",
    )
    add(
        "--command",
        action="append",
        default=[],
        help=f"{for_job}comma-separated command for every container pool, as gcloud's",
    )
    add(
        "--container-image-uri",
        metavar="IMAGE",
        help=f"{for_job}the image of every container pool (gcloud's worker-pool-spec key)",
    )


def read(args: argparse.Namespace) -> tuple[Any, Any]:
    """The kind (`vtp.vertex.describe.Kind`) and document of `--from-job`; UsageError when
    it is no description of one of the four."""
    from vtp.vertex import describe

    if args.pipeline:
        raise UsageError("PIPELINE and --from-job: give one (the description holds what to run)")
    try:
        document = describe.read(args.from_job)
    except describe.DescriptionError as exc:
        raise UsageError(f"--from-job: {exc}") from None
    kind = describe.kind_of(document)
    if kind is None:
        raise UsageError(
            f"--from-job: {args.from_job} describes no CustomJob, HyperparameterTuningJob, "
            "PipelineJob or TrainingPipeline: its name is in none of their collections and it "
            "has none of jobSpec, trialJobSpec and studySpec, pipelineSpec, "
            "trainingTaskDefinition"
        )
    return kind, document


def check_pipeline_flags(args: argparse.Namespace) -> None:
    """UsageError when a pipeline run is given a job's overrides."""
    if args.args or args.command or args.container_image_uri is not None:
        raise UsageError(
            f"{', '.join(JOB_FLAGS)}: for --from-job of a described job; a pipeline takes --param"
        )


def pipeline_line(args: argparse.Namespace, document: Any) -> str:
    """The one line for a described PipelineJob: what it is, which output-only fields go."""
    from vtp.vertex import describe

    kind = describe.PIPELINE_JOB
    dropped = describe.dropped_fields(document, kind)
    return describe.summary(str(args.from_job), kind, describe.name_of(document), dropped) + "\n"


def run_job(args: argparse.Namespace, kind: Any, document: Any) -> int:
    """Run the job `document` describes on the state directory's service, followed to its end;
    its exit status (`vtp.run.replay`)."""
    from vtp.run import replay, target

    for flag, attribute in PIPELINE_FLAGS:
        if getattr(args, attribute) not in (None, [], ""):
            raise UsageError(
                f"{flag}: for a pipeline run; a described {kind.name} takes {', '.join(JOB_FLAGS)}"
            )
    if args.open:
        raise UsageError(f"--open: for a pipeline run, not a described {kind.name}")
    overrides = replay.Overrides(tuple(args.args), tuple(args.command), args.container_image_uri)
    try:
        prepared = replay.prepare(args.from_job, document, overrides)
        return replay.run(prepared, args.state_dir)
    except replay.ReplayError as exc:
        raise UsageError(str(exc)) from None
    except target.StateDirBusy as exc:
        raise UsageError(f"--state-dir: {exc}") from None
    finally:
        sys.stdout.flush()
