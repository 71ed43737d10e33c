"""`vtp submit`: run a compiled pipeline on Vertex AI Pipelines, or on the local service.

    vtp submit train|FILE.py[:function]|FILE.yaml --project P --region us-central1 \\
        --pipeline-root gs://B/root --param output_root=gs://B/train [--service-account SA] \\
        [--dry-run | --local] [--wait]
    vtp submit --local --from-job JOB.json [--param NAME=VALUE] [--wait]

The request is the one `aiplatform.PipelineJob(template_path=compiled/<name>.yaml, ...)` builds;
`--dry-run` prints it (REST JSON) and sends nothing. The pipeline's `project` and `location`
parameters default to `--project` and `--region`. Bad input exits 2 naming the flag, before
anything is sent. `--image` (default: the image `vtp image build` built last) replaces our image
wherever the pipeline names it and no other image (`vtp.vertex.image_rewrite`); for Vertex it
must be one Vertex can pull (`vtp.images.vertex_image`: a registry host, a tag or digest, not
the placeholder); with neither, a pipeline for Vertex that would run the placeholder image is
refused (`--local` pulls no image, and takes local images).
`--local` sends the same request to the local service ($VTP_LOCAL_ENDPOINT), which runs it as it
runs `vtp run`'s jobs; there `--project`, `--region` and `--pipeline-root` have defaults, and
`--wait` prints the run's log as `vtp run` does. `--[no-]enable-caching` sets every task's
`cachingOptions.enableCache` through the SDK (`vtp run --[no-]cache` applies the same function).
Unlike `PipelineJob.submit`, nothing creates the `--pipeline-root` bucket: it must exist.
`--from-job` submits, to the local service, the pipeline a PipelineJob description holds, with
its parameter values under `--param` (`vtp.run.from_job`, as `vtp run --from-job`).
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from vtp.cli import UsageError, add_param_flag, failures, preflight, target

TEMPLATE_SUFFIXES = (".yaml", ".yml", ".json")
"""What `vtp submit PIPELINE` takes as a compiled file rather than a shipped pipeline's name."""

_DONE = ("PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED", "PIPELINE_STATE_CANCELLED")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `submit`."""
    parser = subparsers.add_parser(
        "submit",
        help="submit a compiled pipeline to Vertex AI Pipelines (or the local service)",
        allow_abbrev=False,
    )
    parser.add_argument(
        "pipeline",
        metavar="PIPELINE",
        nargs="?",
        help="train, tune, export, FILE.py[:function], package.module:function (compiled as "
        "`vtp run` compiles them), or a compiled .yaml/.json file",
    )
    parser.add_argument(
        "--from-job",
        type=Path,
        metavar="JOB.json",
        help="with --local, instead of PIPELINE: the pipeline and parameter values of a "
        "described PipelineJob (`PipelineJob.to_dict()`, the REST resource), --param over them",
    )
    add_pipeline_job_flags(parser)
    parser.add_argument(
        "--dry-run", action="store_true", help="print the PipelineJob request, send nothing"
    )
    parser.add_argument("--wait", action="store_true", help="follow the run until it ends")
    parser.set_defaults(func=_submit)


def add_pipeline_job_flags(parser: argparse.ArgumentParser) -> None:
    """The flags that describe a PipelineJob (shared with `vtp schedule create`)."""
    add = parser.add_argument
    add("--project", help="Google Cloud project (default $CLOUDSDK_CORE_PROJECT; 'local' locally)")
    add("--region", help=f"Vertex AI region (default ${target.REGION_ENV}; us-central1 locally)")
    add("--pipeline-root", help="gs:// prefix for the run's outputs (required on Vertex)")
    add_param_flag(parser)
    add("--display-name", default="", help="display name (default: the pipeline's name)")
    add("--service-account", default="", help="service account the pipeline runs as")
    add(
        "--enable-caching",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="turn caching on or off for every task, as `vtp run --[no-]cache` does "
        "(default: as compiled)",
    )
    add("--local", action="store_true", help="use the local Vertex service ($VTP_LOCAL_ENDPOINT)")
    add(
        "--image",
        metavar="REGISTRY/PATH:TAG",
        help="the project image: replaces ours in every task and worker pool, no other image "
        "(default: the last `vtp image build`; on Vertex, one of the two is needed, an image "
        "Vertex can pull, e.g. us-central1-docker.pkg.dev/PROJECT/REPO/vtp:TAG)",
    )


def submission(args: argparse.Namespace) -> Any:
    """The Submission the flags describe, with project, region and root defaults applied."""
    from vtp.vertex.pipeline_job import (
        LOCAL_PIPELINE_ROOT,
        Submission,
        SubmitError,
        parse_param_flags,
    )

    if args.pipeline_root is None and not args.local:
        raise UsageError("--pipeline-root gs://BUCKET/PATH is required (where the run writes)")
    try:
        params = parse_param_flags(args.param)
    except SubmitError as exc:
        raise UsageError(str(exc)) from None
    return Submission(
        pipeline=args.pipeline,
        local_params=getattr(args, "described_values", None) or _catalog_params(args.pipeline),
        project=target.project(args),
        region=target.region(args),
        pipeline_root=args.pipeline_root or LOCAL_PIPELINE_ROOT,
        params=params,
        display_name=args.display_name,
        service_account=args.service_account,
        enable_caching=args.enable_caching,
        local=args.local,
    )


def build_job(args: argparse.Namespace) -> Any:
    """The checked SDK PipelineJob (built offline); UsageError naming the flag otherwise."""
    from vtp.vertex import pipeline_clients
    from vtp.vertex.pipeline_job import SubmitError, check, pipeline_job

    if args.dry_run and args.local:
        raise UsageError("--dry-run and --local: choose one (--dry-run sends nothing)")
    try:
        submitted = submission(args)  # flag errors first, then the image
        image = chosen_image(args.image, args.local)
        checked = check(submitted, template(args.pipeline, image, args.local))
    except SubmitError as exc:
        raise UsageError(str(exc)) from None
    preflight.check(checked.values)
    if args.dry_run or args.local:  # nothing to authenticate: anonymous
        from google.auth.credentials import AnonymousCredentials

        return pipeline_job(checked, AnonymousCredentials())
    return pipeline_job(checked, failures.call(pipeline_clients.default_credentials, "Vertex AI"))


def chosen_image(flag: str | None, local: bool = False) -> str | None:
    """--image (checked: for Vertex, an image it can pull, `vtp.images.vertex_image`; for the
    local service, which runs local images, any name a worker pool spec can hold), else the
    image `vtp image build` built last, else None (as compiled)."""
    from vtp.images import vertex_image
    from vtp.vertex.image_build import last_built
    from vtp.vertex.image_rewrite import check_image

    if flag is None:
        return last_built()
    try:
        return check_image(flag) if local else vertex_image(flag)
    except ValueError as exc:
        raise UsageError(f"--image: {exc}") from None


def template(pipeline: str, image: str | None = None, local: bool = False) -> Path:
    """The compiled pipeline (a shipped one's by name, from any install, or a file named), with
    our image replaced by `image` when one is given. Without one, a pipeline for Vertex that
    would run the placeholder is refused: Vertex could not pull it, and every task would fail
    after the run was paid for. Locally no image is pulled, so the placeholder is fine."""
    from vtp.images import COMPONENT_IMAGE
    from vtp.vertex.image_rewrite import names_placeholder

    path = _compiled(pipeline)
    if image:
        return _retargeted(path, image, shipped=pipeline in _shipped())
    if not local and names_placeholder(path.read_text()):
        raise UsageError(
            f"--image: the pipeline would run the placeholder image {COMPONENT_IMAGE}; "
            "run `vtp image build` or pass --image"
        )
    return path


def _shipped() -> tuple[str, ...]:
    """The names of the pipelines this project ships (compiled for whatever image)."""
    from vtp.pipelines import catalog

    return tuple(catalog.PIPELINES)


def _retargeted(path: Path, image: str, shipped: bool) -> Path:
    """A copy of the compiled file with our images (see `image_rewrite`) replaced by `image`;
    a shipped pipeline's executors all run ours, whatever image it was compiled for."""
    import tempfile

    from vtp.pipelines.compile import compiled_image
    from vtp.vertex.image_build import last_built
    from vtp.vertex.image_rewrite import project_prefixes, retarget

    text = path.read_text()
    also = tuple(i for i in (last_built(), compiled_image(text) if shipped else None) if i)
    changed = retarget(text, image, project_prefixes(), also)
    if changed == text:
        return path
    copy = Path(tempfile.mkdtemp(prefix="vtp-submit-")) / path.name
    copy.write_text(changed)
    return copy


def _compiled(pipeline: str) -> Path:
    from vtp.pipelines import catalog
    from vtp.pipelines.compile import compiled_dir
    from vtp.vertex.pipeline_job import SubmitError, template_path

    try:
        if pipeline.endswith(TEMPLATE_SUFFIXES):
            return template_path(pipeline)
    except SubmitError as exc:
        raise UsageError(str(exc)) from None
    if pipeline not in catalog.PIPELINES and (
        ":" in pipeline or pipeline.partition(":")[0].endswith(".py")
    ):
        return _compiled_source(pipeline)
    try:
        catalog.entry(pipeline)
    except ValueError as exc:
        raise UsageError(f"PIPELINE: {exc}, or a compiled pipeline .yaml/.json file") from None
    path = compiled_dir() / f"{pipeline}.yaml"
    if not path.is_file():
        raise UsageError(f"PIPELINE: {path} does not exist; run `vtp compile {pipeline}`")
    return path


def _compiled_source(ref: str) -> Path:
    """A user's FILE.py[:function] or package.module:function, loaded as `vtp run` loads it
    (the file's folder on the import path) and compiled by kfp's compiler to a temporary
    YAML file: what the user would otherwise compile by hand before submitting."""
    import tempfile

    from kfp import compiler

    from vtp.run import sources

    try:
        source = sources.load(ref)
    except sources.SourceError as exc:
        raise UsageError(str(exc)) from None
    name = Path(ref.partition(":")[0]).stem.replace(".", "_") or "pipeline"
    path = Path(tempfile.mkdtemp(prefix="vtp-submit-")) / f"{name}.yaml"
    compiler.Compiler().compile(source.pipeline, str(path))
    return path


def _catalog_params(pipeline: str) -> dict[str, Any]:
    from vtp.pipelines import catalog

    return dict(catalog.PIPELINES[pipeline].local_params) if pipeline in catalog.PIPELINES else {}


def where(args: argparse.Namespace) -> str:
    """What the API calls go to, for error messages."""
    from vtp.vertex.endpoint import local_endpoint

    return local_endpoint() if args.local else "Vertex AI"


def _submit(args: argparse.Namespace) -> int:
    from google.cloud import aiplatform_v1

    from vtp.vertex.pipeline_job import request_body

    if getattr(args, "from_job", None):
        _use_description(args)
    elif not args.pipeline:
        raise UsageError("PIPELINE: name the pipeline to submit, or --local --from-job JOB.json")
    job = build_job(args)
    if args.dry_run:
        print(json.dumps(request_body(job._gca_resource), indent=2))
        return 0
    client = _client(args, aiplatform_v1.PipelineServiceClient, job.location)
    created = failures.call(lambda: _create(client, job, args.local), where(args))
    print(f"PipelineJob [{created.name}] is submitted successfully.", file=sys.stderr)
    print(created.name, flush=True)
    return _follow(args, client, created.name) if args.wait else 0


def _create(client: Any, job: Any, local: bool) -> Any:
    """Create `job` with the SDK's ID; locally, one created in the same second as another of the
    same pipeline takes the next free ID (`-2`, `-3`, ...), as `vtp run`'s do."""
    from vtp.vertex.pipeline_job import create_with_free_id

    def create(wanted: str) -> Any:
        return client.create_pipeline_job(
            parent=job._parent, pipeline_job=job._gca_resource, pipeline_job_id=wanted
        )

    return create_with_free_id(create, job.job_id) if local else create(job.job_id)


def _use_description(args: argparse.Namespace) -> None:
    """Make `args` submit what `--from-job` describes: its spec as the template, its values as
    the defaults of --param; UsageError naming inputs the local storage root lacks."""
    import tempfile

    from vtp.run import from_job
    from vtp.vertex.endpoint import local_endpoint
    from vtp.vertex.local_auth import published
    from vtp.vertex.pipeline_job import SubmitError, parameters, parse_param_flags, typed_values

    if not args.local:
        raise UsageError("--from-job runs a described job on the local service: add --local")
    if args.pipeline:
        raise UsageError("PIPELINE and --from-job: give one (the description holds the pipeline)")
    try:
        described = from_job.load(args.from_job)
    except from_job.JobFileError as exc:
        raise UsageError(f"--from-job: {exc}") from None
    declared = parameters(described.spec)
    try:
        given = typed_values(described.name, parse_param_flags(args.param), declared)
    except SubmitError as exc:
        raise UsageError(str(exc)) from None
    info = published(local_endpoint())
    if info and info.get("storage_root"):
        root = Path(info["storage_root"])
        missing = from_job.missing_inputs(described, {**described.values, **given}, root)
        if missing:
            raise UsageError(f"--from-job: {from_job.refusal(missing, root)}")
    template = Path(tempfile.mkdtemp(prefix="vtp-submit-")) / "pipeline.json"
    template.write_text(json.dumps(described.spec))
    args.pipeline, args.described_values = str(template), described.values


def _follow(args: argparse.Namespace, client: Any, name: str) -> int:
    """Poll the run until it ends, reporting each state on stderr (and, locally, printing its
    log as `vtp run` does); 0 only if it succeeded."""
    interval, seen = (0.5 if args.local else 30.0), ""
    logs = _local_log(name) if args.local else None
    while True:
        job = failures.call(lambda: client.get_pipeline_job(name=name), where(args))
        if logs:
            _print_log(logs, final=False)
        if job.state.name != seen:
            seen = job.state.name
            print(f"PipelineJob [{name}] is {seen}.", file=sys.stderr, flush=True)
        if seen in _DONE:
            break
        time.sleep(interval)
    if logs:
        _print_log(logs, final=True)
    if seen != "PIPELINE_STATE_SUCCEEDED":
        if job.error.message:
            print(f"vtp: pipeline failed: {job.error.message}", file=sys.stderr)
        return 1
    return 0


def _local_log(name: str) -> Any:
    """The local run's log (the pipelineJobs `:logs` route), read and shown as `vtp run`
    shows it: (the reader, the per-task filter)."""
    from vtp.run.follow import LogReader, TaskLines
    from vtp.run.job import RunClient
    from vtp.vertex.endpoint import local_endpoint
    from vtp.vertex.local_auth import find_token

    url = local_endpoint()
    return LogReader(RunClient(url, find_token(url) or ""), name), TaskLines()


def _print_log(logs: Any, final: bool) -> None:
    """Print the lines written since the last call, without colour codes off a terminal."""
    from vtp.run.follow import write

    reader, tasks = logs
    lines = failures.call(lambda: reader.new_lines(final), reader.client.url)
    text = "".join(tasks.shown(lines, final))
    write(sys.stdout, text if sys.stdout.isatty() else _ANSI.sub("", text))


def _client(args: argparse.Namespace, client_class: type, location: str) -> Any:
    from vtp.vertex import pipeline_clients

    try:
        return pipeline_clients.vertex_client(client_class, location, local=args.local)
    except ValueError as exc:  # a bad VTP_LOCAL_ENDPOINT
        raise UsageError(str(exc)) from None
