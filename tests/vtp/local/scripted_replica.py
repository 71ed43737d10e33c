"""A replica whose behaviour the test chooses: how it ends, when, and what it does on SIGTERM.

    python scripted_replica.py --record DIR [--wait-starts R=N] [--in-step-with R]
                               [--wait-file PATH] [--sleep S] [--exit CODE | --signal NAME]
                               [--times N] [--on-sigterm CODE | --ignore-sigterm]

Every start appends a line to `DIR/<replica>.starts` and writes `DIR/<replica>.env.json`, so a
test can count restarts and read what Vertex's environment looked like. `--times N` applies the
sleep and the exit code or signal to the first N starts only; later starts exit 0 at once.
"""

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path


def replica_name() -> str:
    """`workerpool<i>-<j>` from CLUSTER_SPEC, as Vertex names the replica."""
    task = json.loads(os.environ["CLUSTER_SPEC"])["task"]
    return f"{task['type']}-{task['index']}"


def starts(record: Path, replica: str) -> int:
    """How many times `replica` has started so far."""
    path = record / f"{replica}.starts"
    return len(path.read_text().splitlines()) if path.exists() else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument(
        "--wait-starts", action="append", default=[], help="REPLICA=N: wait for N starts of it"
    )
    parser.add_argument(
        "--in-step-with", default="", help="REPLICA: wait until it started as often"
    )
    parser.add_argument("--wait-file", type=Path, help="wait until this file exists")
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--signal", default="")
    parser.add_argument("--times", type=int, default=0)
    parser.add_argument("--on-sigterm", type=int)
    parser.add_argument("--ignore-sigterm", action="store_true")
    args = parser.parse_args()

    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif args.on_sigterm is not None:
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(args.on_sigterm))
    me = replica_name()
    (args.record / f"{me}.env.json").write_text(json.dumps(dict(os.environ)))
    # Whether this start found what an earlier start left in its working directory.
    with open(args.record / f"{me}.leftovers", "a") as seen:
        seen.write(f"{Path('left-by-an-earlier-start').exists()}\n")
    Path("left-by-an-earlier-start").touch()
    with open(args.record / f"{me}.starts", "a") as log:
        log.write(f"{os.getpid()}\n")
    print(f"{me} started (start {starts(args.record, me)})", flush=True)

    for wanted in args.wait_starts:
        other, count = wanted.split("=")
        while starts(args.record, other) < int(count):
            time.sleep(0.02)
    while args.in_step_with and starts(args.record, args.in_step_with) < starts(args.record, me):
        time.sleep(0.02)
    while args.wait_file and not args.wait_file.exists():
        time.sleep(0.02)
    if args.times and starts(args.record, me) > args.times:
        return 0
    time.sleep(args.sleep)
    if args.signal:
        signum = getattr(signal, f"SIG{args.signal}")
        if signum != signal.SIGKILL:
            signal.signal(signum, signal.SIG_DFL)  # Python catches some (SIGSEGV) itself
        os.kill(os.getpid(), signum)
    return args.exit


if __name__ == "__main__":
    sys.exit(main())
