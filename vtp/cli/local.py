"""`vtp local`: run the local Vertex service, and inject faults into the jobs it runs.

    vtp local serve --port 8765 --state-dir .vtp/local
    vtp local preempt JOB --replica workerpool1-0 [--grace 5]
    vtp local fault fail|oom|preempt|stockout [--exit-code 1] [--attempts 2] [--trial] [--nth 2]

`serve` runs in the foreground on 127.0.0.1 only and prints its URL on the first line of stdout.
Ctrl-C or SIGTERM stops it: replicas are stopped and their jobs run again on the next start.
`preempt` stops one replica of a running job the way a maintenance event or SPOT reclaim would
(SIGTERM, the grace period, SIGKILL); the job then follows Vertex's restart rules. `fault`
arms a fault for a job to come, as `vtp.testing`'s helpers do (`local_faults.py`).
"""

import argparse
import json
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

from vtp.cli import UsageError, add_repeatable, command_group, local_clients, local_faults
from vtp.stop_signals import StopSignals

DEFAULT_PORT = 8765
DEFAULT_STATE_DIR = ".vtp/local"
_REPLICA = re.compile(r"workerpool[0-3]-\d+")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `local serve`, `env`, `exec`, `console`, `preempt` and `fault`."""
    commands = command_group(
        subparsers, "local", "the local Vertex service (serve, env, exec, console, preempt, fault)"
    )
    _add_serve(commands)
    local_clients.add_env(commands)
    local_clients.add_exec(commands)
    local_clients.add_console(commands)
    _add_preempt(commands)
    local_faults.add_fault(commands)


def _add_serve(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "serve", help="run the local Vertex service in the foreground", allow_abbrev=False
    )
    add = parser.add_argument
    add(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port on 127.0.0.1 (default {DEFAULT_PORT}; 0: any free port)",
    )
    add(
        "--tls-port",
        type=int,
        help="port of the TLS endpoint the aiplatform SDK uses, gRPC and REST "
        "(default: --port + 1; 0: any free port)",
    )
    add(
        "--state-dir",
        type=Path,
        default=Path(DEFAULT_STATE_DIR),
        help=f"jobs, logs and packages live here across restarts (default {DEFAULT_STATE_DIR})",
    )
    add(
        "--gcs-root",
        type=Path,
        help="local directory standing in for Cloud Storage (default STATE_DIR/gcs)",
    )
    add(
        "--poll-interval",
        type=float,
        help="seconds between checks of replica processes (default 0.5; $VTP_LOCAL_POLL_INTERVAL)",
    )
    add(
        "--grace-period",
        type=float,
        help="seconds between SIGTERM and SIGKILL when stopping a replica "
        "(default 10; $VTP_LOCAL_GRACE_PERIOD)",
    )
    add(
        "--max-replicas",
        type=int,
        help="replica processes that may run at once; other jobs wait in JOB_STATE_QUEUED "
        "(default: two per core, at most one per GiB of memory, at least two)",
    )
    add(
        "--gpus",
        default="auto",
        help="GPUs to hand out: 'auto' (nvidia-smi), 'none', or indices such as 0,1",
    )
    add(
        "--strict-accelerators",
        action="store_true",
        help="refuse jobs that ask for more GPUs than the machine has (default: they run on "
        "CPU, with a warning in the job's log)",
    )
    # The default since accelerator pools run on CPU without it; kept so old commands still run.
    add("--ignore-accelerators", action="store_true", help=argparse.SUPPRESS)
    add(
        "--strict-buckets",
        action="store_true",
        help="a write to a bucket never created is Cloud Storage's 404 (default: the bucket is "
        "created on first use, with one line in this log)",
    )
    add_repeatable(
        parser, "--project-image", "PREFIX",
        "image prefix that counts as this project's image (repeatable; $VTP_PROJECT_IMAGE)",
    )  # fmt: skip
    add_repeatable(
        parser, "--pass-env", "NAME",
        "also give replicas this variable of the service's environment (repeatable); "
        "by default they get only what a container on Vertex would have",
    )  # fmt: skip
    add(
        "--prepare-runs",
        action="store_true",
        help="keep a pipeline run's worker ready, its imports done, so that a run starts about "
        "a second sooner (it holds about 0.9 GB of memory while it waits)",
    )
    add("--verbose", action="store_true", help="log every request")
    parser.set_defaults(func=_serve)


def _add_preempt(commands: argparse._SubParsersAction) -> None:
    parser = local_clients.client_command(
        commands, "preempt", help="preempt a replica of a running local job"
    )
    parser.add_argument("job", metavar="JOB", help="job ID or full resource name")
    parser.add_argument("--replica", required=True, help="replica to preempt, e.g. workerpool1-0")
    parser.add_argument(
        "--grace",
        type=float,
        help="seconds between SIGTERM and SIGKILL (default: the service's grace period)",
    )
    parser.set_defaults(func=_preempt)


def _serve(args: argparse.Namespace) -> int:
    import logging

    from vtp.local.app import running
    from vtp.local.base.config import ServiceConfig
    from vtp.local.base.state_dir import StateDirInUse
    from vtp.local.console import console_url
    from vtp.local.runtime.capacity import detect_gpus

    config = ServiceConfig.from_env(
        args.state_dir,
        port=_checked_port(args.port),
        tls_port=None if args.tls_port is None else _checked_port(args.tls_port, "--tls-port"),
        gcs_root=args.gcs_root,
        poll_interval=_positive(args.poll_interval, "--poll-interval"),
        grace_period=_non_negative(args.grace_period, "--grace-period"),
        max_replicas=_non_negative(args.max_replicas, "--max-replicas"),
        gpus=_gpus(args.gpus, detect_gpus),
        strict_accelerators=_strict_accelerators(args),
        strict_buckets=args.strict_buckets,
        project_images=tuple(args.project_image),
        pass_env=tuple(_variable_name(name) for name in args.pass_env),
        prepare_runs=args.prepare_runs,
    )
    level = logging.DEBUG if args.verbose else logging.INFO
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    with StopSignals() as stop:  # taken by whichever thread the kernel picks (vtp.stop_signals)
        try:
            service = running(config)
        except StateDirInUse as exc:
            raise UsageError(f"--state-dir: {exc}") from None
        except OSError as exc:  # most often: the port is taken
            if exc.filename:  # the gRPC front end's port
                raise UsageError(f"--tls-port: {exc.strerror}") from None
            raise UsageError(f"--port {config.port}: {exc.strerror}") from None
        with service:
            print(
                f"Serving the local Vertex API at {service.url} (state in {config.state_dir})\n"
                "aiplatform SDK endpoint (gRPC and REST over TLS, CA in "
                f"{config.state_dir / 'tls'}): api_endpoint={service.api_endpoint!r}\n"
                f"Bearer token in {config.state_dir / 'token'}: vtp commands find it themselves; "
                "`vtp local env` prints what gcloud and Python clients need.\n"
                f"Console: {console_url(service.url, service.token)}",
                flush=True,
            )
            stop.wait()
    return 0


def _strict_accelerators(args: argparse.Namespace) -> bool:
    if args.ignore_accelerators and args.strict_accelerators:
        raise UsageError(
            "--ignore-accelerators contradicts --strict-accelerators (and is the default now: "
            "drop it)"
        )
    return bool(args.strict_accelerators)


def _variable_name(name: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise UsageError(f"--pass-env takes an environment variable name, got {name!r}")
    return name


def _preempt(args: argparse.Namespace) -> int:
    from vtp.vertex import local_auth

    if not _REPLICA.fullmatch(args.replica):
        raise UsageError(
            f"--replica must name a replica such as workerpool1-0, got {args.replica!r}"
        )
    grace = _non_negative(args.grace, "--grace")
    name = args.job if "/" in args.job else f"projects/-/locations/-/customJobs/{args.job}"
    if not re.fullmatch(r"projects/[^/]+/locations/[^/]+/customJobs/[^/:]+", name):
        raise UsageError(
            f"JOB must be a job ID or projects/P/locations/L/customJobs/ID, got {args.job!r}"
        )
    endpoint = local_clients.service_url(args.endpoint, args.state_dir)
    body: dict[str, object] = {"replica": args.replica}
    if grace is not None:
        body["gracePeriod"] = f"{grace:g}s"
    request = urllib.request.Request(
        f"{endpoint}/v1/{name}:preempt",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **local_auth.auth_headers(endpoint)},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=120):
            pass
    except urllib.error.HTTPError as exc:
        print(f"vtp: {_error_message(exc)}", file=sys.stderr)
        return 1
    except urllib.error.URLError as exc:
        print(
            f"vtp: no local Vertex service answers at {endpoint} ({exc.reason}); "
            "start one with `vtp local serve`",
            file=sys.stderr,
        )
        return 1
    print(f"Preempted {args.replica} of {name}.")
    return 0


def _error_message(exc: urllib.error.HTTPError) -> str:
    try:
        return json.loads(exc.read())["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return f"HTTP {exc.code} {exc.reason}"


def _gpus(value: str, detect) -> tuple[str, ...]:
    if value == "auto":
        return detect()
    if value == "none":
        return ()
    indices = tuple(v.strip() for v in value.split(","))
    if not all(i.isdigit() for i in indices):
        raise UsageError(f"--gpus must be 'auto', 'none' or GPU indices such as 0,1; got {value!r}")
    return indices


def _checked_port(port: int, flag: str = "--port") -> int:
    if not 0 <= port < 65536:
        raise UsageError(f"{flag} must be in 0..65535, got {port}")
    return port


def _positive(value: float | None, flag: str) -> float | None:
    if value is not None and value <= 0:
        raise UsageError(f"{flag} must be > 0, got {value:g}")
    return value


def _non_negative(value, flag: str):
    if value is not None and value < 0:
        raise UsageError(f"{flag} must be >= 0, got {value:g}")
    return value
