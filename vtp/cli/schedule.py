"""`vtp schedule`: run a compiled pipeline on a cron, with Vertex schedules or Cloud Scheduler.

    vtp schedule create nightly --pipeline train --cron '0 3 * * *' --time-zone Europe/Paris \\
        --project P --region us-central1 --pipeline-root gs://B/root --param output_root=gs://B/o \\
        [--via vertex | --via cloud-scheduler --service-account SA] [--dry-run | --local]
    vtp schedule list|pause|resume|delete [NAME] [--via ...] [--project P --region R | --local]

`--via vertex` (default) creates a Vertex AI Schedule; `--via cloud-scheduler` a Cloud Scheduler
HTTP job that POSTs the PipelineJob to Vertex AI with the service account's OAuth token.
`--dry-run` prints the request (REST JSON) and sends nothing; `--local` sends Vertex schedules
to the local service, which runs them on their cron. For Vertex schedules, NAME is the display
name (or the schedule ID); for Cloud Scheduler, the job ID.
"""

import argparse
import json
import sys
from typing import Any

from vtp.cli import UsageError, add_commands, command_group, failures
from vtp.cli.submit import add_pipeline_job_flags, build_job, where
from vtp.cli.target import project, region

VIAS = ("vertex", "cloud-scheduler")
_VERTEX_ONLY = ("max_run_count", "start_time", "end_time", "allow_queueing")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `schedule` and its commands."""
    commands = command_group(
        subparsers, "schedule", "run a pipeline on a cron (Vertex schedules or Cloud Scheduler)"
    )
    _add_create(commands)
    add_commands(commands, [("list", _list, "list pipeline schedules")], _add_target_flags)
    on_schedule = (
        ("pause", _pause, "pause a schedule"),
        ("resume", _resume, "resume a paused schedule"),
        ("delete", _delete, "delete a schedule (runs it started go on)"),
    )
    operand = ("NAME", "display name, ID or resource name")
    parsers = add_commands(commands, on_schedule, _add_target_flags, operand)
    parsers["resume"].add_argument(
        "--catch-up", action="store_true", help="start the runs missed while paused"
    )


def _add_target_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--via", choices=VIAS, default="vertex", help="default: vertex")
    parser.add_argument("--project", help="Google Cloud project ('local' with --local)")
    parser.add_argument("--region", help="region (us-central1 with --local)")
    parser.add_argument("--local", action="store_true", help="the local Vertex service")


def _add_create(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "create", help="schedule a compiled pipeline on a cron", allow_abbrev=False
    )
    add = parser.add_argument
    add("name", metavar="NAME", help="schedule display name (Vertex) or job ID (Cloud Scheduler)")
    add("--pipeline", required=True, help="train, tune, export, or a compiled .yaml/.json file")
    add("--cron", required=True, help="five-field unix cron, e.g. '0 3 * * *'")
    add("--time-zone", default="UTC", help="IANA time zone of the cron (default UTC)")
    add("--via", choices=VIAS, default="vertex", help="default: vertex")
    add_pipeline_job_flags(parser)
    add("--max-concurrent-run-count", type=int, default=1, help="vertex: runs at once (default 1)")
    add("--max-run-count", type=int, default=0, help="vertex: complete after N runs")
    add("--start-time", default="", help="vertex: RFC 3339 time of the first possible run")
    add("--end-time", default="", help="vertex: RFC 3339 time after which no run starts")
    add("--allow-queueing", action="store_true", help="vertex: queue runs over the limit")
    add("--dry-run", action="store_true", help="print the request, send nothing")
    parser.set_defaults(func=_create)


def _create(args: argparse.Namespace) -> int:
    from vtp.vertex import scheduling
    from vtp.vertex.pipeline_job import SubmitError, request_body

    _check_via(args)
    try:
        cadence = scheduling.Cadence(args.cron, args.time_zone)
        limits = scheduling.Limits(
            args.max_concurrent_run_count,
            args.max_run_count,
            args.start_time,
            args.end_time,
            args.allow_queueing,
        )
        scheduling.check_name(args.via, args.name)
        scheduling.check_service_account(args.via, args.service_account)
    except SubmitError as exc:
        raise UsageError(str(exc)) from None
    job = build_job(args)
    if args.via == "vertex":
        request = scheduling.vertex_schedule(job, args.name, cadence, limits)
    else:
        description = f"vtp: runs pipeline {args.pipeline} on Vertex AI Pipelines"
        request = scheduling.cloud_scheduler_job(
            job, args.name, cadence, args.service_account, description
        )
    if args.dry_run:
        print(json.dumps(request_body(request), indent=2))
        return 0
    created = _send_create(args, job, request)
    print(f"Schedule [{created.name}] is created.", file=sys.stderr)
    print(created.name)
    return 0


def _check_via(args: argparse.Namespace) -> None:
    if args.via != "cloud-scheduler":
        return
    if args.local:
        raise UsageError(
            "--local: Cloud Scheduler has no local counterpart; use --via vertex locally, or "
            "send the --dry-run request's HTTP call to the local service yourself"
        )
    for name in _VERTEX_ONLY:
        if getattr(args, name) not in (0, "", False):
            flag = "--" + name.replace("_", "-")
            raise UsageError(f"{flag} applies to --via vertex only (Cloud Scheduler has no limit)")


def _send_create(args: argparse.Namespace, job: Any, request: Any) -> Any:
    from google.cloud import aiplatform_v1

    from vtp.vertex import pipeline_clients

    if args.via == "vertex":
        client = _vertex(args, aiplatform_v1.ScheduleServiceClient, job.location)
        return failures.call(
            lambda: client.create_schedule(parent=job._parent, schedule=request), where(args)
        )
    client = failures.call(pipeline_clients.scheduler_client, "Cloud Scheduler")
    parent = f"projects/{job.project}/locations/{job.location}"
    return failures.call(lambda: client.create_job(parent=parent, job=request), "Cloud Scheduler")


def _list(args: argparse.Namespace) -> int:

    parent, client = _target(args)
    rows = [("NAME", "DISPLAY_NAME/TARGET", "STATE", "CRON")]
    if args.via == "vertex":
        found = failures.call(lambda: list(client.list_schedules(parent=parent)), where(args))
        rows += [
            (s.name, s.display_name, s.state.name, s.cron)
            for s in found
            if "create_pipeline_job_request" in s
        ]
    else:
        found = failures.call(lambda: list(client.list_jobs(parent=parent)), "Cloud Scheduler")
        rows += [
            (j.name, j.http_target.uri, j.state.name, f"{j.schedule} ({j.time_zone})")
            for j in found
            if j.http_target.uri.endswith("/pipelineJobs")
        ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[3]]))
    return 0


def _pause(args: argparse.Namespace) -> int:
    return _act(args, "pause_schedule", "pause_job", "Paused")


def _resume(args: argparse.Namespace) -> int:
    if args.catch_up and args.via != "vertex":
        raise UsageError("--catch-up applies to --via vertex only")
    return _act(args, "resume_schedule", "resume_job", "Resumed", catch_up=args.catch_up)


def _delete(args: argparse.Namespace) -> int:

    if args.via == "vertex":
        parent, client = _target(args)
        name = _vertex_name(args, client, parent)
        operation = failures.call(lambda: client.delete_schedule(name=name), where(args))
        failures.call(lambda: operation.result(timeout=120), where(args))
        print(f"Deleted schedule [{name}].", file=sys.stderr)
        return 0
    return _act(args, "", "delete_job", "Deleted")


def _act(args: argparse.Namespace, vertex: str, scheduler: str, done: str, **extra: Any) -> int:

    parent, client = _target(args)
    if args.via == "vertex":
        name = _vertex_name(args, client, parent)
        failures.call(lambda: getattr(client, vertex)(name=name, **extra), where(args))
    else:
        name = f"{parent}/jobs/{args.name}"
        failures.call(lambda: getattr(client, scheduler)(name=name), "Cloud Scheduler")
    print(f"{done} schedule [{name}].", file=sys.stderr)
    return 0


def _target(args: argparse.Namespace) -> tuple[str, Any]:
    """The parent location and the client for --via."""
    from google.cloud import aiplatform_v1

    from vtp.vertex import pipeline_clients

    if args.via == "cloud-scheduler" and args.local:
        raise UsageError("--local: Cloud Scheduler has no local counterpart; use --via vertex")
    location = region(args)
    parent = f"projects/{project(args)}/locations/{location}"
    if args.via == "vertex":
        return parent, _vertex(args, aiplatform_v1.ScheduleServiceClient, location)
    return parent, failures.call(pipeline_clients.scheduler_client, "Cloud Scheduler")


def _vertex_name(args: argparse.Namespace, client: Any, parent: str) -> str:
    """NAME as a schedule resource name: given whole, an ID, or the one with that display name."""

    if args.name.startswith("projects/"):
        return args.name
    if args.name.isdigit():
        return f"{parent}/schedules/{args.name}"
    query = {"parent": parent, "filter": f'display_name="{args.name}"'}
    found = failures.call(lambda: list(client.list_schedules(request=query)), where(args))
    if len(found) != 1:
        what = "no schedule" if not found else f"{len(found)} schedules"
        raise failures.Failed(
            f"{what} named {args.name!r} in {parent}; give the schedule ID instead"
        )
    return found[0].name


def _vertex(args: argparse.Namespace, client_class: type, location: str) -> Any:
    from vtp.vertex import pipeline_clients

    try:
        return pipeline_clients.vertex_client(client_class, location, local=args.local)
    except ValueError as exc:  # a bad --region or VTP_LOCAL_ENDPOINT
        raise UsageError(str(exc) if args.local else f"--region: {exc}") from None
