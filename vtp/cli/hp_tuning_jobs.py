"""`vtp hp-tuning-jobs create | describe | list | cancel`: gcloud's commands, plus `--dry-run`.

`create` takes gcloud's flags (`--config`, `--display-name`, `--max-trial-count`,
`--parallel-trial-count`, `--algorithm`, `--network`, `--service-account`, `--labels`,
`--enable-web-access`, `--enable-dashboard-access`, `--kms-key`) and validates the job before
anything is sent. `--dry-run` prints the request body gcloud would send; `--local` talks to the
local Vertex service at `$VTP_LOCAL_ENDPOINT` instead of Vertex AI; there `--config` may be a
tuning job as `describe` prints it (its output-only fields dropped, in one line), whose
`displayName` then stands in for `--display-name`.
"""

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from vtp.cli import UsageError, add_commands, command_group, failures, target


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `hp-tuning-jobs` command group."""
    commands = command_group(
        subparsers, "hp-tuning-jobs", "create and manage hyperparameter tuning jobs"
    )
    _add_create(commands)
    on_job = (
        ("describe", _describe, "print a job, its trials and their measurements"),
        ("cancel", _cancel, "cancel a running job"),
    )
    add_commands(commands, on_job, target.add_target_flags, target.JOB_OPERAND)
    listing = [("list", _list, "list the jobs of a region")]
    parsers = add_commands(commands, listing, target.add_target_flags)
    parsers["list"].add_argument("--format", choices=("table", "json"), default="table")


def _add_create(commands: argparse._SubParsersAction) -> None:
    from_gcloud = "as in `gcloud ai hp-tuning-jobs create`"
    create = commands.add_parser("create", help=f"create a tuning job ({from_gcloud})")
    create.add_argument(
        "--config",
        required=True,
        help="YAML HyperparameterTuningJob; with --local, also a describe output (gcloud's "
        "JSON or YAML, the SDK's to_dict()): output-only fields dropped",
    )
    create.add_argument(
        "--display-name", help="required, unless --local takes a describe output that has one"
    )
    create.add_argument("--max-trial-count", type=int, help="total trials (default 1)")
    create.add_argument("--parallel-trial-count", type=int, help="trials at once (default 1)")
    create.add_argument("--algorithm", help="algorithm-unspecified, grid-search or random-search")
    create.add_argument("--network", help="trialJobSpec.network")
    create.add_argument("--service-account", help="trialJobSpec.serviceAccount")
    create.add_argument("--enable-web-access", action="store_true")
    create.add_argument("--enable-dashboard-access", action="store_true")
    create.add_argument("--labels", action="append", default=[], metavar="KEY=VALUE,...")
    create.add_argument("--kms-key", help="projects/P/locations/L/keyRings/R/cryptoKeys/K")
    create.add_argument(
        "--dry-run", action="store_true", help="print the request body; submit nothing"
    )
    target.add_target_flags(create)
    create.set_defaults(func=_create)


def _create(args: argparse.Namespace) -> int:
    from vtp.vertex import describe
    from vtp.vertex.protodict import SpecError
    from vtp.vertex.tuning_request import TuningFlags, build_tuning_job, request_body

    region = target.region(args)
    described = describe.config_summary(args.config, describe.TUNING_JOB) if args.local else None
    if args.display_name is None and described is None:
        raise UsageError("--display-name is required")
    flags = TuningFlags(
        config=args.config,
        display_name=args.display_name,
        max_trial_count=args.max_trial_count,
        parallel_trial_count=args.parallel_trial_count,
        algorithm=args.algorithm,
        network=args.network,
        service_account=args.service_account,
        enable_web_access=args.enable_web_access,
        enable_dashboard_access=args.enable_dashboard_access,
        labels=tuple(args.labels),
        kms_key=args.kms_key,
        described_config=args.local,
    )
    try:
        job = build_tuning_job(flags)
    except SpecError as exc:
        raise UsageError(str(exc)) from None
    if described:
        print(described, file=sys.stderr)
    if args.dry_run:
        _print_json(request_body(job))
        return 0
    client, parent = _client(args, region)
    created = _call(
        args,
        lambda: client.create_hyperparameter_tuning_job(
            parent=parent, hyperparameter_tuning_job=job
        ),
    )
    print(f"Hyperparameter tuning job [{created.name}] submitted.", file=sys.stderr)
    _print_json(request_body(created))
    return 0


def _describe(args: argparse.Namespace) -> int:
    from vtp.vertex.tuning_request import request_body

    client, parent = _client(args, target.region(args))
    name = _job_name(parent, args.job)
    job = _call(args, lambda: client.get_hyperparameter_tuning_job(name=name))
    _print_json(request_body(job))
    return 0


def _cancel(args: argparse.Namespace) -> int:
    client, parent = _client(args, target.region(args))
    name = _job_name(parent, args.job)
    _call(args, lambda: client.cancel_hyperparameter_tuning_job(name=name))
    print(f"Request to cancel hyperparameter tuning job [{name}] has been sent.", file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    from vtp.vertex.tuning_request import request_body

    client, parent = _client(args, target.region(args))
    jobs = _call(args, lambda: list(client.list_hyperparameter_tuning_jobs(parent=parent)))
    if args.format == "json":
        _print_json([request_body(job) for job in jobs])
        return 0
    rows = [("JOB_ID", "DISPLAY_NAME", "STATE", "TRIALS")]
    for job in jobs:
        done = sum(1 for t in job.trials if t.end_time)
        rows.append(
            (
                job.name.rpartition("/")[2],
                job.display_name,
                job.state.name,
                f"{done}/{job.max_trial_count}",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return 0


def _client(args: argparse.Namespace, region: str) -> tuple[Any, str]:
    from vtp.vertex.client import job_client

    project = target.project(args)
    try:
        client = job_client(region, local=args.local)
    except ValueError as exc:  # a malformed $VTP_LOCAL_ENDPOINT
        raise UsageError(str(exc)) from None
    return client, f"projects/{project}/locations/{region}"


def _job_name(parent: str, job: str) -> str:
    if job.startswith("projects/"):
        return job
    if "/" in job:
        raise UsageError(f"JOB: {job!r} is neither a job ID nor projects/P/locations/L/...")
    return f"{parent}/hyperparameterTuningJobs/{job}"


def _call(args: argparse.Namespace, request: Callable[[], Any]) -> Any:
    """One service call; API, credential and connection errors become one line, exit 1."""
    from vtp.vertex.endpoint import local_endpoint

    return failures.call(request, local_endpoint() if args.local else "Vertex AI")


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True))
