"""A tuning trial whose behaviour the test chooses; it reports `score` with cloudml-hypertune.

    python objective_task.py --record DIR [--steps N] [--sleep S [--slow-above X]]
                             [--fail-above X] [--silent] --x=... [--y=...]  (the tuner adds these)

score at step s is `s / steps * (1 - (x - 0.3)^2 - y^2)`: the final score depends only on the
parameters, so a test can check which parameters a trial received. Each run writes
`DIR/<trial id>.json` with its argv, a few environment variables and its start and end times.
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import hypertune


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--sleep", type=float, default=0.0, help="seconds before each report")
    parser.add_argument("--slow-above", type=float, help="sleep only when x is above this")
    parser.add_argument("--fail-above", type=float, help="exit 3 when x is above this")
    parser.add_argument("--silent", action="store_true", help="report nothing")
    parser.add_argument("--x", type=float, default=0.0)
    parser.add_argument("--y", type=float, default=0.0)
    parser.add_argument("--optimizer", default="")
    parser.add_argument("--momentum", type=float)
    args = parser.parse_args()
    started = time.time()
    names = ("CLOUD_ML_TRIAL_ID", "CLOUD_ML_HP_METRIC_FILE", "AIP_MODEL_DIR", "AIP_CHECKPOINT_DIR")
    trial = os.environ["CLOUD_ML_TRIAL_ID"]
    record = {"argv": sys.argv[1:], "env": {n: os.environ.get(n) for n in names}}
    if args.fail_above is not None and args.x > args.fail_above:
        return 3
    slow = args.slow_above is None or args.x > args.slow_above
    tuner = hypertune.HyperTune()
    for step in range(1, args.steps + 1):
        time.sleep(args.sleep if slow else 0.0)
        if not args.silent:
            score = step / args.steps * (1 - (args.x - 0.3) ** 2 - args.y**2)
            tuner.report_hyperparameter_tuning_metric("score", score, global_step=step)
    record.update(start=started, end=time.time())
    (args.record / f"{trial}.json").write_text(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
