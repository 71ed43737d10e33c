"""Trials the default (Bayesian, TPE) algorithm needs to reach a target, against random search.

Objectives are the standard global-optimization test functions with known optima: Hartmann-3
(3-D on [0, 1]^3, minimum -3.86278) and Branin (2-D on [-5, 10] x [0, 15], minimum 0.397887).
The targets (-3.5 and 1.0) are values that random search reaches in tens of trials (about 1.4%
and 1.1% of each domain lies below them). Each run drives the local service's `Suggester`
exactly as a tuning job does, one trial at a time, and stops at the first trial whose value
reaches the target (a run that never does counts as CAP + 1). The goal is a median at most 0.6
of random search's.

Wall time: the same four-trial grid over the digits trainer (`python -m vtp.trainer`, one torch
thread per trial) runs as a tuning job in an in-process local service, once with
parallelTrialCount 1 and once with 2; the figure is the jobs' create-to-end times and their ratio
(ideal 0.5; the trials share this machine's cores with anything else running).

Prints ONE JSON line.
"""

import json
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google.oauth2.credentials import Credentials

from vtp.local.app import running
from vtp.local.base.config import ServiceConfig
from vtp.local.tuning.suggest import Suggester
from vtp.vertex.study import DoubleParameter, Metric, Study, tuning_job

SEEDS = range(11)
CAP = 500
GOAL_RATIO = 0.6
TRIAL_JOB_SPEC = {
    "workerPoolSpecs": [
        {"machineSpec": {"machineType": "n1-standard-4"}, "containerSpec": {"imageUri": "x"}}
    ]
}

_ALPHA = (1.0, 1.2, 3.0, 3.2)
_A = ((3.0, 10, 30), (0.1, 10, 35), (3.0, 10, 30), (0.1, 10, 35))
_P = (
    (0.3689, 0.1170, 0.2673),
    (0.4699, 0.4387, 0.7470),
    (0.1091, 0.8732, 0.5547),
    (0.0381, 0.5743, 0.8828),
)


def hartmann3(p: Mapping[str, float]) -> float:
    """Hartmann-3; minimum -3.86278 at (0.1146, 0.5556, 0.8525)."""
    x = (p["x0"], p["x1"], p["x2"])
    return -sum(
        alpha * math.exp(-sum(a * (xi - pi) ** 2 for a, xi, pi in zip(row, x, prow, strict=True)))
        for alpha, row, prow in zip(_ALPHA, _A, _P, strict=True)
    )


def branin(p: Mapping[str, float]) -> float:
    """Branin; minimum 0.397887 at three points."""
    x1, x2 = p["x1"], p["x2"]
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


OBJECTIVES = {
    "hartmann3": (hartmann3, tuple(DoubleParameter(f"x{i}", 0.0, 1.0) for i in range(3)), -3.5),
    "branin": (branin, (DoubleParameter("x1", -5.0, 10.0), DoubleParameter("x2", 0.0, 15.0)), 1.0),
}


def trials_to_target(
    objective: Callable[[Mapping[str, float]], float],
    parameters: tuple[DoubleParameter, ...],
    target: float,
    algorithm: str,
    seed: int,
) -> int:
    """How many trials until one reaches `target` (CAP + 1 if none does)."""
    study = Study((Metric("y", "MINIMIZE"),), parameters, algorithm=algorithm)
    job = tuning_job("bench", study, TRIAL_JOB_SPEC, max_trial_count=CAP, parallel_trial_count=1)
    suggester = Suggester(job.study_spec, seed=seed)
    for n in range(1, CAP + 1):
        value = objective(suggester.suggest(str(n)))
        suggester.complete(str(n), {"y": value})
        if value <= target:
            return n
    return CAP + 1


def compare(name: str) -> dict:
    """Median trials-to-target of TPE and of random search on one objective."""
    objective, parameters, target = OBJECTIVES[name]
    runs = {
        algorithm: [trials_to_target(objective, parameters, target, algorithm, s) for s in SEEDS]
        for algorithm in ("ALGORITHM_UNSPECIFIED", "RANDOM_SEARCH")
    }
    tpe, random = (statistics.median(runs[a]) for a in ("ALGORITHM_UNSPECIFIED", "RANDOM_SEARCH"))
    return {
        "target": target,
        "default_median_trials": tpe,
        "random_median_trials": random,
        "ratio": round(tpe / random, 3),
        "default_trials_per_seed": runs["ALGORITHM_UNSPECIFIED"],
        "random_trials_per_seed": runs["RANDOM_SEARCH"],
    }


DIGITS_GRID = {
    "displayName": "bench-digits",
    "maxTrialCount": 4,
    "studySpec": {
        "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
        "parameters": [
            {
                "parameterId": "learning_rate",
                "discreteValueSpec": {"values": [1e-3, 3e-3, 1e-2, 3e-2]},
            }
        ],
        "algorithm": "GRID_SEARCH",
    },
    "trialJobSpec": {
        "workerPoolSpecs": [
            {
                "machineSpec": {"machineType": "n1-standard-4"},
                "replicaCount": "1",
                "containerSpec": {
                    "imageUri": "us-docker.pkg.dev/bench/vtp/trainer:latest",
                    "args": ["--epochs=1", "--max_steps=40", "--checkpoint_interval=0"],
                    "env": [{"name": "OMP_NUM_THREADS", "value": "1"}],
                },
            }
        ],
        "baseOutputDirectory": {"outputUriPrefix": "gs://bench/digits-hp"},
    },
}


def tuning_wall_time(parallel: int) -> float:
    """Seconds from create to end of the digits grid with `parallel` trials at once."""
    with tempfile.TemporaryDirectory() as state:
        config = ServiceConfig(state_dir=Path(state), port=0, poll_interval=0.05)
        with running(config) as service:
            client = aiplatform_v1.JobServiceClient(
                transport="rest",
                credentials=Credentials(service.token),
                client_options=ClientOptions(api_endpoint=service.url),
            )
            body = {**DIGITS_GRID, "parallelTrialCount": parallel}
            job = client.create_hyperparameter_tuning_job(
                parent="projects/bench/locations/us-central1",
                hyperparameter_tuning_job=aiplatform_v1.HyperparameterTuningJob.from_json(
                    json.dumps(body)
                ),
            )
            while job.state not in (4, 5, 7):  # SUCCEEDED, FAILED, CANCELLED
                time.sleep(0.2)
                job = client.get_hyperparameter_tuning_job(name=job.name)
            if job.state != aiplatform_v1.JobState.JOB_STATE_SUCCEEDED:
                raise RuntimeError(f"the bench tuning job ended {job.state.name}: {job.error}")
            return (job.end_time - job.create_time).total_seconds()


def wall_times() -> dict:
    """Wall time of the digits grid with 1 and with 2 parallel trials."""
    one, two = tuning_wall_time(1), tuning_wall_time(2)
    return {
        "digits_grid_4_trials_seconds_parallel_1": round(one, 2),
        "digits_grid_4_trials_seconds_parallel_2": round(two, 2),
        "parallel_2_vs_1_wall_time_ratio": round(two / one, 3),
    }


def main() -> None:
    """Print the figures as one JSON line."""
    start = time.perf_counter()
    results = {name: compare(name) for name in OBJECTIVES}
    primary = results["hartmann3"]
    line = {
        "bench": "tuning_efficiency",
        "objective": "hartmann3",
        "seeds": len(SEEDS),
        "cap": CAP,
        "default_median_trials": primary["default_median_trials"],
        "random_median_trials": primary["random_median_trials"],
        "ratio": primary["ratio"],
        "goal_ratio_at_most": GOAL_RATIO,
        "meets_goal": all(r["ratio"] <= GOAL_RATIO for r in results.values()),
        "objectives": results,
        **wall_times(),
        "bench_seconds": round(time.perf_counter() - start, 2),
    }
    print(json.dumps(line))


if __name__ == "__main__":
    sys.exit(main())
