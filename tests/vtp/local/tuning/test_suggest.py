"""Suggesters: grid covers the grid, random respects scales, TPE is seeded and rebuildable."""

import math

from google.cloud.aiplatform_v1 import StudySpec, Trial

from vtp.local.tuning.suggest import Suggester, TrialRecord, record_from_trial


def study(parameters: list[dict], algorithm: str = "ALGORITHM_UNSPECIFIED", **extra) -> StudySpec:
    metrics = extra.pop("metrics", [{"metric_id": "loss", "goal": "MINIMIZE"}])
    return StudySpec(metrics=metrics, parameters=parameters, algorithm=algorithm, **extra)


OPTIMIZER = {
    "parameter_id": "optimizer",
    "categorical_value_spec": {"values": ["sgd", "adam"]},
    "conditional_parameter_specs": [
        {
            "parent_categorical_values": {"values": ["sgd"]},
            "parameter_spec": {
                "parameter_id": "momentum",
                "discrete_value_spec": {"values": [0.0, 0.9]},
            },
        }
    ],
}
LAYERS = {"parameter_id": "layers", "integer_value_spec": {"min_value": 1, "max_value": 3}}
LR = {
    "parameter_id": "lr",
    "double_value_spec": {"min_value": 1e-4, "max_value": 1e-1},
    "scale_type": "UNIT_LOG_SCALE",
}


def drain(suggester: Suggester, limit: int = 100) -> list[dict]:
    points = []
    while len(points) < limit and (p := suggester.suggest(str(len(points) + 1))) is not None:
        points.append(p)
    return points


def test_grid_search_runs_exactly_the_grid_with_conditional_children():
    points = drain(Suggester(study([OPTIMIZER, LAYERS], "GRID_SEARCH")))
    expected = [
        {"optimizer": "sgd", "momentum": m, "layers": n} for m in (0.0, 0.9) for n in (1, 2, 3)
    ] + [{"optimizer": "adam", "layers": n} for n in (1, 2, 3)]
    assert points == expected


def test_grid_search_resumes_after_the_points_already_tried():
    spec = study([OPTIMIZER, LAYERS], "GRID_SEARCH")
    first = Suggester(spec)
    all_points = drain(Suggester(spec))
    tried = [
        TrialRecord(str(i), p, "COMPLETE", {"loss": 1.0}) for i, p in enumerate(all_points[:4])
    ]
    resumed = Suggester(spec, trials=tried)
    assert drain(resumed) == all_points[4:]
    assert first.suggest("1") == all_points[0]


def test_random_search_respects_bounds_and_scales():
    reverse = {**LR, "parameter_id": "beta", "scale_type": "UNIT_REVERSE_LOG_SCALE"}
    linear = {**LR, "parameter_id": "dropout", "scale_type": "UNIT_LINEAR_SCALE"}
    suggester = Suggester(study([LR, reverse, linear, LAYERS], "RANDOM_SEARCH"), seed=7)
    points = drain(suggester, limit=3000)
    for key in ("lr", "beta", "dropout"):
        assert all(1e-4 <= p[key] <= 1e-1 for p in points)
    # Log-uniform on [1e-4, 1e-1]: each decade holds a third of the samples.
    assert abs(sum(p["lr"] < 1e-3 for p in points) / len(points) - 1 / 3) < 0.04
    # Reverse log: the top (min + max - 1e-3, max] holds a third.
    assert abs(sum(p["beta"] > 0.1001 - 1e-3 for p in points) / len(points) - 1 / 3) < 0.04
    assert abs(sum(p["dropout"] < 0.05 for p in points) / len(points) - 0.05 / 0.0999) < 0.04
    counts = [sum(p["layers"] == n for p in points) for n in (1, 2, 3)]
    assert all(isinstance(p["layers"], int) for p in points)
    assert all(abs(c / len(points) - 1 / 3) < 0.04 for c in counts)


def test_random_integer_log_scale_covers_every_decade():
    wide = {"parameter_id": "units", "integer_value_spec": {"min_value": 1, "max_value": 1000}}
    points = drain(Suggester(study([{**wide, "scale_type": "UNIT_LOG_SCALE"}], "RANDOM_SEARCH")))
    values = sorted(p["units"] for p in points)
    assert values[0] >= 1 and values[-1] <= 1000
    assert 10 < values[len(values) // 2] < 60  # log-uniform median ~ sqrt(1000)


def test_conditional_parameter_only_when_parent_matches():
    for algorithm in ("RANDOM_SEARCH", "ALGORITHM_UNSPECIFIED"):
        suggester = Suggester(study([OPTIMIZER, LR], algorithm), seed=3)
        for i in range(30):
            params = suggester.suggest(str(i))
            assert ("momentum" in params) == (params["optimizer"] == "sgd")
            suggester.complete(str(i), {"loss": params["lr"] + params.get("momentum", 0.5)})


def run_tpe(suggester: Suggester, count: int) -> None:
    for i in range(len(suggester.trials), len(suggester.trials) + count):
        params = suggester.suggest(str(i + 1))
        suggester.complete(str(i + 1), {"loss": (math.log10(params["lr"]) + 2) ** 2})


def test_tpe_is_deterministic_per_seed():
    spec = study([OPTIMIZER, LR])
    a, b, c = Suggester(spec, seed=1), Suggester(spec, seed=1), Suggester(spec, seed=2)
    for s in (a, b, c):
        run_tpe(s, 12)
    assert [t.parameters for t in a.trials] == [t.parameters for t in b.trials]
    assert [t.parameters for t in a.trials] != [t.parameters for t in c.trials]


def as_stored_trial(record: TrialRecord) -> Trial:
    trial = Trial(id=record.trial_id, state=Trial.State.ACTIVE)
    for key, value in record.parameters.items():
        trial.parameters.append(Trial.Parameter(parameter_id=key, value=value))
    if record.state == "COMPLETE":
        trial.state = Trial.State.SUCCEEDED
        trial.final_measurement.metrics.append(
            {"metric_id": "loss", "value": record.values["loss"]}
        )
    return trial


def test_rebuilt_from_stored_trials_gives_the_same_next_suggestions():
    spec = study([OPTIMIZER, LR, LAYERS])
    live = Suggester(spec, seed=5)
    run_tpe(live, 15)
    live.suggest("16")  # still running when the service restarts
    stored = [as_stored_trial(t) for t in live.trials]
    rebuilt = Suggester(spec, seed=5, trials=[record_from_trial(t, ["loss"]) for t in stored])
    assert [t.state for t in rebuilt.trials] == ["COMPLETE"] * 15 + ["PENDING"]
    assert rebuilt.suggest("17") == live.suggest("17")
    assert rebuilt.suggest("18") == live.suggest("18")


def test_tpe_concentrates_on_the_optimum():
    suggester = Suggester(study([LR]), seed=0)
    run_tpe(suggester, 40)
    late = [math.log10(t.parameters["lr"]) for t in suggester.trials[-15:]]
    assert sum(abs(x + 2) < 0.5 for x in late) >= 10  # most late trials near lr = 1e-2


def test_failed_and_pending_trials_are_tracked():
    suggester = Suggester(study([LR]), seed=0)
    suggester.suggest("1")
    suggester.suggest("2")
    suggester.fail("1")
    suggester.complete("2", {"other": 1.0})  # the objective is missing: not a result
    assert [t.state for t in suggester.trials] == ["FAILED", "FAILED"]
    assert suggester.suggest("3") is not None


def test_multi_objective_study_suggests_with_tpe():
    metrics = [{"metric_id": "loss", "goal": "MINIMIZE"}, {"metric_id": "acc", "goal": "MAXIMIZE"}]
    suggester = Suggester(study([LR], metrics=metrics), seed=0)
    for i in range(8):
        params = suggester.suggest(str(i))
        suggester.complete(str(i), {"loss": params["lr"], "acc": 1 - params["lr"]})
    assert len({t.parameters["lr"] for t in suggester.trials}) == 8
