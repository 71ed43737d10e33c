"""`vtp local fault`: arm a fault on a running `vtp local serve`, as `vtp.testing`'s helpers do.

    vtp local fault fail --exit-code 1           # the next custom job fails once it has logged
    vtp local fault oom --nth 2                  # the second job from now runs out of memory
    vtp local fault preempt                      # the next job is preempted once as it starts
    vtp local fault stockout --attempts 2        # two attempts find no machines, the third does
    vtp local fault stockout                     # none does: FAILED, RESOURCE_EXHAUSTED
    vtp local fault fail --trial                 # the next tuning trial's job fails
    vtp local fault list                         # what was armed, and what struck

A fault goes to jobs of one project and region (`--project`, `--region`, else gcloud's
environment, else `local` and us-central1), created by anyone: a script, `gcloud`, a pipeline's
task. The service's `customJobs:injectFault` method does the work (docs/testing.md). Not a
command group: `local.py` adds it.
"""

import argparse
import json
import sys
import urllib.error
import urllib.request

from vtp.cli import UsageError, local_clients, target

MAX_COUNT = 1000
"""The most `--nth` and `--attempts` take (the service's limit)."""
KINDS = ("fail", "oom", "preempt", "stockout", "list")
_WHAT = {
    "FAIL": "fails with exit status {code} once its primary replica has logged a line",
    "OOM": "runs out of memory (SIGKILL, status 137) once its primary replica has logged a line",
    "PREEMPT": "has its primary replica preempted once as it starts",
    "STOCKOUT": "finds no machines {attempts}",
}


def add_fault(commands: argparse._SubParsersAction) -> None:
    """Add `local fault`."""
    parser = local_clients.client_command(
        commands,
        "fault",
        help="arm a fault for a job to come on a running local service (fail, oom, stockout...)",
        description="Arms FAULT for the next custom job (or tuning trial) created in a project "
        "and region of a running `vtp local serve`; `list` shows those armed and what struck.",
    )
    add = parser.add_argument
    add("kind", metavar="FAULT", help=f"one of {', '.join(KINDS)}")
    add("--exit-code", help="fail: the status the replica exits with (default 1)")
    add(
        "--attempts",
        help="stockout: attempts that find no machines before one gets them "
        "(default: all, and the job fails as on Vertex)",
    )
    add("--nth", help="the Nth job created from now (default 1, the next)")
    add("--trial", action="store_true", help="a tuning trial's job rather than a custom job")
    add("--project", help="the jobs' project (default: gcloud's, else 'local')")
    add("--region", help="the jobs' region (default: $CLOUDSDK_AI_REGION, else us-central1)")
    parser.set_defaults(func=_fault, local=True)


def _fault(args: argparse.Namespace) -> int:
    body = _request_body(args)
    parent = f"projects/{target.project(args)}/locations/{target.region(args)}"
    endpoint = local_clients.service_url(args.endpoint, args.state_dir)
    if body is None:
        answer = _call(endpoint, "GET", f"{parent}/customJobs:faults")
        if answer is not None:
            _print_faults(parent, answer["faults"])
        return 0 if answer is not None else 1
    if _call(endpoint, "POST", f"{parent}/customJobs:injectFault", body) is None:
        return 1
    print(f"Armed: {_describe(body)} ({parent}).")
    return 0


def _request_body(args: argparse.Namespace) -> dict | None:
    """The `injectFault` body the flags ask for (None for `list`); UsageError naming a flag."""
    if args.kind not in KINDS:
        raise UsageError(f"FAULT must be one of {', '.join(KINDS)}, got {args.kind!r}")
    for flag, value, kind in (("--exit-code", args.exit_code, "fail"),
                              ("--attempts", args.attempts, "stockout")):  # fmt: skip
        if value is not None and args.kind != kind:
            raise UsageError(f"{flag} is for `vtp local fault {kind}` only")
    if args.kind == "list":
        if args.trial or args.nth is not None:
            raise UsageError(f"{'--trial' if args.trial else '--nth'} is not for `list`")
        return None
    body: dict[str, object] = {"fault": args.kind.upper(), "target": "JOB", "nth": 1}
    if args.trial:
        body["target"] = "TRIAL"
    for flag, value, key, most in (("--exit-code", args.exit_code, "exitCode", 255),
                                   ("--attempts", args.attempts, "attempts", MAX_COUNT),
                                   ("--nth", args.nth, "nth", MAX_COUNT)):  # fmt: skip
        if value is not None:
            body[key] = _whole_number(flag, value, most)
    return body


def _whole_number(flag: str, value: str, most: int) -> int:
    if not value.isdigit() or not 1 <= int(value) <= most:
        raise UsageError(f"{flag} must be a whole number from 1 to {most}, got {value!r}")
    return int(value)


def _describe(body: dict) -> str:
    """`the next custom job fails with ...`: what the armed fault will do."""
    nth = int(str(body["nth"]))
    which = "next" if nth == 1 else f"{_ordinal(nth)} (from now)"
    kind = "tuning trial's job" if body["target"] == "TRIAL" else "custom job"
    attempts = body.get("attempts")
    if attempts:
        tries = "attempt" if attempts == 1 else f"{attempts} attempts"
        when = f"in its first {tries}, then gets them"
    else:
        when = "in any attempt: it fails, RESOURCE_EXHAUSTED, as on Vertex"
    what = _WHAT[str(body["fault"])].format(code=body.get("exitCode", 1), attempts=when)
    return f"the {which} {kind} {what}"


def _print_faults(parent: str, faults: list[dict]) -> None:
    if not faults:
        print(f"No faults armed in {parent}.")
        return
    print(f"{'FAULT':<9} {'TARGET':<6} {'NTH':>3}  {'STRUCK':<6} JOB")
    for fault in faults:
        struck = "yes" if fault["struck"] else "no"
        job = fault["job"] or "(none yet)"
        print(f"{fault['fault']:<9} {fault['target']:<6} {fault['nth']:>3}  {struck:<6} {job}")


def _call(endpoint: str, method: str, path: str, body: dict | None = None) -> dict | None:
    """The service's JSON answer to `method /v1/path`; None, with one line on stderr, when it
    refuses or does not answer."""
    from vtp.vertex import local_auth

    request = urllib.request.Request(
        f"{endpoint}/v1/{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **local_auth.auth_headers(endpoint)},
        method=method,
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return json.loads(answer.read() or b"{}")
    except urllib.error.HTTPError as exc:
        print(f"vtp: {_error_message(exc)}", file=sys.stderr)
    except urllib.error.URLError as exc:
        print(f"vtp: no local Vertex service answers at {endpoint} ({exc.reason}); "
              "start one with `vtp local serve`", file=sys.stderr)  # fmt: skip
    return None


def _error_message(exc: urllib.error.HTTPError) -> str:
    try:
        return json.loads(exc.read())["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return f"HTTP {exc.code} {exc.reason}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
