"""`vtp custom-jobs`: gcloud's `ai custom-jobs` commands, on Vertex or on the local service.

`create` takes the flags of `gcloud ai custom-jobs create` (plus scheduling and output flags
gcloud lacks), builds and validates the CustomJob before anything is sent, and then prints it
(`--dry-run`), submits it to the local service (`--local`) or submits it to Vertex. Local code
in pool 0 (`local-package-path`) is packaged as a Python source distribution, not a Docker
image (`vtp.vertex.autopackage`), and staged before the job is submitted. `describe`,
`list`, `cancel` and `stream-logs` go through the same aiplatform client. The spec library and
the client are imported when a command runs, so `vtp --help` stays fast.
"""

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from vtp.cli import UsageError, add_commands, add_repeatable, command_group, failures, target

if TYPE_CHECKING:  # imported when a command runs, so that `vtp --help` stays fast
    from vtp.vertex.jobspec import JobFlags

LOCAL_STAGING = "gs://vtp-local-staging"
"""Where `--local` stages autopackaged code when neither --staging-bucket nor --base-output-dir
is given (uploaded to the service, which makes the bucket on first use)."""
STRATEGIES = ("STANDARD", "SPOT", "FLEX_START", "ON_DEMAND", "LOW_COST")


CREATE_DESCRIPTION = """\
Create a custom job from gcloud-style flags and/or a --config file.

Autopackaging: pool 0 may name local code as in gcloud, e.g.
  --worker-pool-spec=machine-type=n1-standard-4,executor-image-uri=IMAGE,\\
local-package-path=DIR,python-module=mytask.train[,requirements=A;B][,extra-dirs=D]
(or script=PATH instead of python-module). Unlike gcloud, no Docker image is built:
DIR becomes a reproducible Python source distribution, staged at
STAGING/vtp-packages/<sha256>/<name>-0.0.0.tar.gz, and every pool runs it as a
pythonPackageSpec on the prebuilt executor image IMAGE (later pools give machines only).
STAGING is --staging-bucket, else --base-output-dir (with --local, else
gs://vtp-local-staging; --local uploads to the service). --dry-run builds the archive and
prints the request but stages nothing.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `custom-jobs` and its commands."""
    commands = command_group(
        subparsers,
        "custom-jobs",
        "create and manage Vertex AI custom jobs (as gcloud ai custom-jobs)",
    )
    _add_create(commands)
    on_job = (
        ("describe", _describe, "print a custom job as JSON"),
        ("cancel", _cancel, "cancel a custom job"),
        ("stream-logs", _stream_logs, "follow a custom job's state and logs until it ends"),
    )
    parsers = add_commands(commands, on_job, target.add_target_flags, target.JOB_OPERAND)
    parsers["stream-logs"].add_argument(
        "--polling-interval",
        type=float,
        help="seconds between polls (default: 60 on Vertex, 1 locally)",
    )
    add_commands(commands, [("list", _list, "list custom jobs")], target.add_target_flags)


def _add_create(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "create",
        help="create a custom job from gcloud-style flags and/or a --config file",
        description=CREATE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    target.add_target_flags(parser)
    parser.add_argument(
        "--dry-run", action="store_true", help="print the request body, submit nothing"
    )
    add = parser.add_argument
    add("--display-name", help="display name (required unless the --config file has displayName)")
    add_repeatable(
        parser, "--worker-pool-spec", "SPEC",
        "one worker pool, e.g. machine-type=n1-standard-8,replica-count=1,"
        "container-image-uri=IMAGE; repeat per pool; '' skips a pool",
        dest="worker_pool_specs",
    )  # fmt: skip
    add(
        "--config",
        help="YAML: CustomJobSpec fields (as gcloud) or a whole CustomJob; with --local, also "
        "a describe output (gcloud's JSON or YAML, the SDK's to_dict()): output-only fields "
        "dropped",
    )
    add("--args", action="append", default=[], help="comma-separated args for every pool")
    add("--command", action="append", default=[], help="comma-separated command for containers")
    add("--python-package-uris", help="comma-separated gs:// packages for executor-image pools")
    add("--service-account", help="service account the replicas run as")
    add("--network", help="projects/PROJECT_NUMBER/global/networks/NETWORK to peer with")
    add("--enable-web-access", action="store_true", help="interactive shell into replicas")
    add("--enable-dashboard-access", action="store_true", help="dashboard access to replicas")
    add("--persistent-resource-id", help="run on this persistent resource")
    add("--labels", action="append", default=[], metavar="KEY=VALUE,...", help="job labels")
    add("--kms-key", help="customer-managed encryption key (full resource name)")
    add("--timeout", help="maximum run time, e.g. 90m, 2h30m, 7d or 3600s")
    add(
        "--restart-job-on-worker-restart",
        action="store_true",
        help="restart all workers whenever one restarts",
    )
    add(
        "--scheduling-strategy",
        type=str.upper,
        choices=STRATEGIES,
        help="how Vertex gets capacity: STANDARD, SPOT (preemptible) or FLEX_START",
    )
    add("--max-wait-duration", help="how long a FLEX_START job waits for capacity, e.g. 2h")
    add("--disable-retries", action="store_true", help="fail instead of retrying the job")
    add("--base-output-dir", help="gs:// prefix for AIP_MODEL_DIR, checkpoints and logs")
    add(
        "--staging-bucket",
        metavar="GS_URI",
        help="gs://BUCKET[/PATH] for packages built from local-package-path "
        "(default: --base-output-dir)",
    )
    parser.set_defaults(func=_create)


def _create(args: argparse.Namespace) -> int:
    from vtp.vertex.jobspec import build_packaged_job, request_body
    from vtp.vertex.protodict import SpecError

    if args.dry_run and args.local:
        raise UsageError("--dry-run and --local: choose one (--dry-run submits nothing)")
    if args.region:
        _client_endpoint(args.region)  # a bad --region is an error even for --dry-run
    flags = dataclasses.replace(_job_flags(args), described_config=args.local)
    try:
        job, package = build_packaged_job(flags, LOCAL_STAGING if args.local else None)
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    if flags.described_config and flags.config:  # a describe output: say what was dropped
        from vtp.vertex import describe

        line = describe.config_summary(flags.config, describe.CUSTOM_JOB)
        if line:
            print(line, file=sys.stderr)
    if args.dry_run:
        for uri in package.package_uris if package else ():
            print(f"vtp: --dry-run: built {uri}; not staged", file=sys.stderr)
        print(json.dumps(request_body(job), indent=2))
        return 0
    project, region = target.project(args), target.region(args)
    client, parent = _client(args, region), _parent(project, region)
    if package:
        _stage(args, flags, package)
    created = _call(args, lambda: client.create_custom_job(parent=parent, custom_job=job))
    print(f"CustomJob [{created.name}] is submitted successfully.", file=sys.stderr)
    print(created.name)
    return 0


def _stage(args: argparse.Namespace, flags: Any, package: Any) -> None:
    """Put the autopackaged archives at their URIs: with --local through the service's Cloud
    Storage API, as gcloud uploads them (a bucket made there on first use is a line in the
    service's log), else where `vtp.vertex.staging` puts them."""
    from vtp.vertex.jobspec import staging_location
    from vtp.vertex.staging import StagingError, stage

    flag, _ = staging_location(flags, LOCAL_STAGING if args.local else None)
    try:
        if args.local:
            written = _call(args, lambda: _upload_to_service(package.files))
        else:
            written = stage(package.files)
    except StagingError as exc:
        raise failures.Failed(f"{flag}: {exc}") from None
    for uri in package.package_uris:
        state = "staged" if uri in written else "already staged"
        print(f"Python package [{uri}] is {state} for your custom job.", file=sys.stderr)


def _upload_to_service(files: Any) -> list[str]:
    """Upload each `(uri, data)` to the local service's storage JSON API unless the object is
    there (`ifGenerationMatch=0`: the URIs are content-addressed, so it holds these bytes);
    return the URIs written. StagingError for an upload the service refuses."""
    from urllib.parse import quote

    from vtp.storage import split_gcs_uri
    from vtp.vertex.endpoint import local_endpoint
    from vtp.vertex.local_auth import local_session
    from vtp.vertex.staging import StagingError

    url = local_endpoint()
    session = local_session(url)
    written = []
    for uri, data in files:
        bucket, name = split_gcs_uri(uri)
        response = session.post(
            f"{url}/upload/storage/v1/b/{quote(bucket, safe='')}/o",
            params={"uploadType": "media", "name": name, "ifGenerationMatch": "0"},
            data=data,
            headers={"Content-Type": "application/gzip"},
            timeout=600,
        )
        if response.status_code == 412:  # staged before: same URI, same bytes
            continue
        if not response.ok:
            message = response.json().get("error", {}).get("message", "") if response.text else ""
            raise StagingError(f"cannot upload {uri}: {response.status_code} {message}".strip())
        written.append(uri)
    return written


def _job_flags(args: argparse.Namespace) -> "JobFlags":
    """The parsed flags as `JobFlags` (repeated flags as tuples, in order)."""
    from vtp.vertex.jobspec import JobFlags

    values: dict[str, Any] = {}
    for field in dataclasses.fields(JobFlags):
        value = getattr(args, field.name, field.default)
        values[field.name] = tuple(value) if isinstance(value, list) else value
    return JobFlags(**values)


def _describe(args: argparse.Namespace) -> int:
    from vtp.vertex.jobspec import request_body

    client, name = _job_target(args)
    job = _call(args, lambda: client.get_custom_job(name=name))
    print(json.dumps(request_body(job), indent=2))
    return 0


def _list(args: argparse.Namespace) -> int:
    project, region = target.project(args), target.region(args)
    client = _client(args, region)
    parent = _parent(project, region)
    jobs = _call(args, lambda: list(client.list_custom_jobs(parent=parent)))
    rows = [("ID", "DISPLAY_NAME", "STATE", "CREATE_TIME")]
    for job in jobs:
        created = job.create_time.isoformat() if job.create_time else ""
        rows.append((job.name.rsplit("/", 1)[-1], job.display_name, job.state.name, created))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[3]]))
    return 0


def _cancel(args: argparse.Namespace) -> int:
    client, name = _job_target(args)
    _call(args, lambda: client.cancel_custom_job(name=name))
    print(f"Request to cancel CustomJob [{name}] has been sent.", file=sys.stderr)
    return 0


def _stream_logs(args: argparse.Namespace) -> int:
    from vtp.vertex import joblogs

    client, name = _job_target(args)
    interval = args.polling_interval
    if interval is None:
        interval = 1.0 if args.local else 60.0
    if interval <= 0:
        raise UsageError("--polling-interval must be a positive number of seconds")
    read_logs = _log_reader(args, name)
    job = None
    for event in joblogs.follow(
        lambda: _call(args, lambda: client.get_custom_job(name=name)), read_logs, interval
    ):
        if isinstance(event, dict):
            print("\n".join(joblogs.format_entry(event)), flush=True)
        else:
            job = event
            print(f"CustomJob [{name}] is {job.state.name}.", file=sys.stderr, flush=True)
    if job is not None and job.state != joblogs.JobState.JOB_STATE_SUCCEEDED:
        if job.error.message:
            print(f"vtp: job failed: {job.error.message}", file=sys.stderr)
        return 1
    return 0


def _log_reader(args: argparse.Namespace, name: str) -> Any:
    """A callable returning new log entries; [] for good once the service has no log route."""

    from vtp.vertex import joblogs
    from vtp.vertex.endpoint import local_endpoint
    from vtp.vertex.local_auth import local_session

    project, job_id = name.split("/")[1], name.rsplit("/", 1)[-1]
    if args.local:
        url = local_endpoint()
        reader = joblogs.LogReader(local_session(url), project, job_id, url)
    else:
        import google.auth
        from google.auth.transport.requests import AuthorizedSession

        credentials, _ = _call(
            args,
            lambda: google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"]),
        )
        reader = joblogs.LogReader(AuthorizedSession(credentials), project, job_id)
    available = True

    def read() -> list[dict[str, Any]]:
        nonlocal available
        if available:
            try:
                return _call(args, reader.read)
            except joblogs.LogsUnavailable as exc:
                print(f"vtp: {exc}; showing state changes only", file=sys.stderr)
                available = False
        return []

    return read


def _job_target(args: argparse.Namespace) -> tuple[Any, str]:
    """The client for JOB's region and JOB's resource name (an ID takes --project/--region)."""
    if args.job.startswith("projects/"):
        parts = args.job.split("/")
        if len(parts) != 6 or parts[2] != "locations" or parts[4] != "customJobs":
            raise UsageError(f"JOB {args.job!r} is not projects/P/locations/L/customJobs/ID")
        return _client(args, parts[3]), args.job
    if not args.job.isdigit():
        raise UsageError(f"JOB {args.job!r} is neither a numeric job ID nor a resource name")
    region = target.region(args)
    return _client(args, region), f"{_parent(target.project(args), region)}/customJobs/{args.job}"


def _parent(project: str, region: str) -> str:
    return f"projects/{project}/locations/{region}"


def _client_endpoint(region: str) -> str:
    from vtp.vertex.endpoint import api_endpoint

    try:
        return api_endpoint(region)
    except ValueError as exc:
        raise UsageError(f"--region: {exc}") from None


def _client(args: argparse.Namespace, region: str) -> Any:
    from vtp.vertex.client import job_client

    try:
        return job_client(region, local=args.local)
    except ValueError as exc:  # a bad region or VTP_LOCAL_ENDPOINT
        raise UsageError(str(exc)) from None


def _call(args: argparse.Namespace, request: Callable[[], Any]) -> Any:
    """One service call; API, credential and connection errors become one line, exit 1."""
    from vtp.vertex.endpoint import local_endpoint

    return failures.call(request, local_endpoint() if args.local else "Vertex AI")
