"""`vtp local env`, `exec` and `console`: what points clients and a browser at a running service.

    eval "$(vtp local env --export)"      # a shell: endpoint overrides, the token file
    vtp local exec -- python my_script.py  # one program: the same, the token, the storage root
    vtp local console [--open]             # a browser: a new one-time sign-in address

All find the service by its URL (`--endpoint`, else $VTP_LOCAL_ENDPOINT, else the default
port), or by the state directory it holds (`--state-dir`, as `vtp local serve` and `vtp run`
take it), and its runtime file (`vtp.vertex.local_auth`). env and exec also give gcloud a project
(`CLOUDSDK_CORE_PROJECT`, see `gcloud_settings`), so the follow-up commands gcloud prints itself
(`gcloud ai custom-jobs stream-logs ...`) run as printed, and point gsutil at the service: it
runs each command as `gcloud storage`, never against Cloud Storage
(`vtp.vertex.local_auth.gsutil_settings`). Not a command group: `local.py` adds them.
"""

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from vtp.cli import UsageError
from vtp.cli.target import LOCAL_PROJECT, PROJECT_ENVS
from vtp.vertex.endpoint import DEFAULT_LOCAL_ENDPOINT
from vtp.vertex.endpoint import LOCAL_ENDPOINT_ENV as ENDPOINT_ENV


def client_command(
    commands: argparse._SubParsersAction, name: str, help: str, description: str = ""
) -> argparse.ArgumentParser:
    """Add `local NAME`, a command that talks to a running service: it takes `--endpoint` or
    `--state-dir`."""
    parser = commands.add_parser(
        name, help=help, description=description or None, allow_abbrev=False
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--endpoint", help=f"service URL (default ${ENDPOINT_ENV} or {DEFAULT_LOCAL_ENDPOINT})"
    )
    where.add_argument(
        "--state-dir", help="the state directory of the `vtp local serve` to talk to, instead"
    )
    return parser


def add_exec(commands: argparse._SubParsersAction) -> None:
    """Add `local exec`."""
    parser = client_command(
        commands,
        "exec",
        help="run a command with gcloud and our clients pointed at a running service",
        description="vtp local exec -- CMD ARGS...: CMD gets `vtp local env`'s settings, the "
        "service's token and its storage root (gs:// paths resolve there).",
    )
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD ARGS...")
    parser.set_defaults(func=_exec)


def _exec(args: argparse.Namespace) -> int:
    from vtp.storage import GCS_ROOT_ENV
    from vtp.vertex.local_auth import TOKEN_ENV, find_token, published, shell_settings

    argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not argv:
        raise UsageError(
            "CMD: give the command to run after --, e.g. vtp local exec -- python x.py"
        )
    url = service_url(args.endpoint, args.state_dir)
    info = published(url)
    if info is None:
        raise UsageError(f"no running local service published for {url}; start `vtp local serve`")
    env = {**os.environ, **shell_settings(url), **gcloud_settings(os.environ)}
    env[TOKEN_ENV] = find_token(url) or ""
    env[GCS_ROOT_ENV] = info.get("storage_root", "")
    try:
        os.execvpe(argv[0], argv, env)
    except OSError as exc:
        raise UsageError(f"CMD {argv[0]!r}: {exc.strerror}") from None
    return 0  # not reached: exec replaced this process


def gcloud_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """What gcloud needs beyond the endpoints to run its own next steps against the service:
    a project (`--local`'s, `local`, unless $CLOUDSDK_CORE_PROJECT or $GOOGLE_CLOUD_PROJECT
    names one; a project the environment already gives gcloud is left as it is).

    No log polling interval: `gcloud ai ... stream-logs` takes it only as `--polling-interval`
    (default 60 s); the `ml_engine/polling_interval` property is read by `gcloud ai-platform`
    alone."""
    if environ.get("CLOUDSDK_CORE_PROJECT"):
        return {}
    project = next((environ[e] for e in PROJECT_ENVS if environ.get(e)), LOCAL_PROJECT)
    return {"CLOUDSDK_CORE_PROJECT": project}


def service_url(endpoint: str | None, state_dir: str | None = None) -> str:
    """The URL of the `vtp local serve` holding `state_dir` when given, else --endpoint, else
    $VTP_LOCAL_ENDPOINT, else the default port; UsageError naming the flag at fault."""
    from vtp.vertex.endpoint import local_endpoint

    if state_dir is not None:
        from vtp.run.target import served

        holder = served(Path(state_dir))
        if holder is None:
            raise UsageError(
                f"--state-dir {state_dir}: no running `vtp local serve` holds it; start one "
                f"with `vtp local serve --state-dir {state_dir}`"
            )
        return holder.url
    try:
        return local_endpoint({ENDPOINT_ENV: endpoint} if endpoint else os.environ)
    except ValueError as exc:
        raise UsageError(f"--endpoint: {exc}") from None


def add_env(commands: argparse._SubParsersAction) -> None:
    """Add `local env`."""
    parser = client_command(
        commands,
        "env",
        help="print the settings that point gcloud and Python clients at a running service",
        description='Prints KEY=VALUE lines; `eval "$(vtp local env --export)"` in a shell.',
    )
    parser.add_argument("--export", action="store_true", help="prefix each line with `export `")
    parser.set_defaults(func=_env)


def _env(args: argparse.Namespace) -> int:
    import shlex

    from vtp.vertex.local_auth import shell_settings

    url = service_url(args.endpoint, args.state_dir)
    settings = {**shell_settings(url), **gcloud_settings(os.environ)}
    if "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE" not in settings:
        print(f"vtp: no running local service published for {url}; the token file is "
              "<state-dir>/token once `vtp local serve` runs", file=sys.stderr)  # fmt: skip
    prefix = "export " if args.export else ""
    for key, value in settings.items():
        print(f"{prefix}{key}={shlex.quote(value)}")
    return 0


def add_console(commands: argparse._SubParsersAction) -> None:
    """Add `local console`."""
    parser = client_command(
        commands,
        "console",
        help="print (or open) a new sign-in address for a running service's console",
        description="Each address signs one browser tab in, once, within 12 hours; the address "
        "a browser keeps in its history is then spent.",
    )
    parser.add_argument("--page", default="", help="the console page to show, e.g. /runs/ID")
    parser.add_argument("--open", action="store_true", help="open it in the default browser")
    parser.set_defaults(func=_console)


def _console(args: argparse.Namespace) -> int:
    from vtp.local.console import console_url
    from vtp.vertex.local_auth import find_token, published

    if args.page and not args.page.startswith("/"):
        raise UsageError(f"--page must start with /, e.g. /runs/ID, got {args.page!r}")
    url = service_url(args.endpoint, args.state_dir)
    info, token = published(url), find_token(url)
    if info is None or not token:
        raise UsageError(f"no running local service published for {url}; start `vtp local serve`")
    address = console_url(url, token, args.page)
    if args.open:
        from vtp.run.local_run import open_in_browser

        open_in_browser(address, Path(info["state_dir"]))
        print(f"Opened the console of {url} in the default browser.")
    else:
        print(address)
    return 0
