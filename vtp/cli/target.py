"""Where a command's API calls go: the project, the region, and Vertex or the local service.

Resolved the way gcloud resolves them: the flag, else gcloud's environment; with `--local`,
the local service's defaults. Shared by `custom-jobs`, `hp-tuning-jobs`, `submit` and
`schedule` (not a command group itself: it has no `register`).
"""

import argparse
import os

from vtp.cli import UsageError

PROJECT_ENVS = ("CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT")
"""Where gcloud (and the Google client libraries) find the default project."""
REGION_ENV = "CLOUDSDK_AI_REGION"
"""What `gcloud config set ai/region` sets."""
LOCAL_PROJECT, LOCAL_REGION = "local", "us-central1"
"""What `--local` uses when no project or region is given."""
JOB_OPERAND = ("JOB", "job ID or full resource name")
"""The positional argument of the commands that act on one job (describe, cancel, ...)."""


def add_target_flags(parser: argparse.ArgumentParser) -> None:
    """--region, --project and --local."""
    parser.add_argument("--region", help=f"Vertex AI region (default: ${REGION_ENV})")
    parser.add_argument(
        "--project",
        help="Google Cloud project (default: $CLOUDSDK_CORE_PROJECT or $GOOGLE_CLOUD_PROJECT; "
        f"'{LOCAL_PROJECT}' with --local)",
    )
    parser.add_argument(
        "--local",
        action="store_true",
        help="talk to the local Vertex service at $VTP_LOCAL_ENDPOINT (http://127.0.0.1:8765)",
    )


def project(args: argparse.Namespace) -> str:
    """--project, else the gcloud environment, else 'local' with --local."""
    found = args.project or next((os.environ[e] for e in PROJECT_ENVS if os.environ.get(e)), None)
    if found:
        return found
    if getattr(args, "local", False):
        return LOCAL_PROJECT
    raise UsageError(
        "no project: pass --project or set CLOUDSDK_CORE_PROJECT (gcloud config set project P)"
    )


def region(args: argparse.Namespace) -> str:
    """--region, else $CLOUDSDK_AI_REGION, else us-central1 with --local; checked."""
    from vtp.vertex.endpoint import api_endpoint

    found = args.region or os.environ.get(REGION_ENV)
    if not found and getattr(args, "local", False):
        found = LOCAL_REGION
    if not found:
        raise UsageError(f"no region: pass --region (e.g. us-central1) or set {REGION_ENV}")
    try:
        api_endpoint(found)
    except ValueError as exc:
        raise UsageError(f"--region: {exc}") from None
    return found
