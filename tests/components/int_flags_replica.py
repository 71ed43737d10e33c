"""A replica whose argparse takes its numbers as a user's script would: `type=int` and `type=float`.

    python int_flags_replica.py --record DIR [--epochs N] [--hidden_size N] [--lr F] [--x F]

`--epochs=3.0` fails here as it fails in such a script. Writes `DIR/<trial id or "job">.json`
with its argv and the parsed values; in a tuning trial it reports `score` = hidden_size + x.
"""

import argparse
import json
import os
import sys
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--record", type=Path, required=True)
parser.add_argument("--epochs", type=int, default=0)
parser.add_argument("--hidden_size", type=int, default=0)
parser.add_argument("--lr", type=float, default=0.0)
parser.add_argument("--x", type=float, default=0.0)
args = parser.parse_args()
trial = os.environ.get("CLOUD_ML_TRIAL_ID", "job")
parsed = {k: v for k, v in vars(args).items() if k != "record"}
(args.record / f"{trial}.json").write_text(json.dumps({"argv": sys.argv[1:], "parsed": parsed}))
if "CLOUD_ML_HP_METRIC_FILE" in os.environ:
    import hypertune

    hypertune.HyperTune().report_hyperparameter_tuning_metric("score", args.hidden_size + args.x)
