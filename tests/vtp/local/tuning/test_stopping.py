"""Early stopping rules on intermediate measurements."""

from google.cloud.aiplatform_v1 import StudySpec

from vtp.local.tuning.metrics import Measurement
from vtp.local.tuning.stopping import Curve, curve, should_stop


def measurements(values: list[float], start_step: int = 1, seconds_per_step: float = 1.0):
    return [
        Measurement(start_step + i, (start_step + i) * seconds_per_step, {"acc": v})
        for i, v in enumerate(values)
    ]


def completed(curves: list[list[float]], seconds_per_step: float = 1.0) -> list[Curve]:
    out = []
    for values in curves:
        ms = measurements(values, seconds_per_step=seconds_per_step)
        out.append(curve(ms, "acc", use_elapsed=False, final=ms[-1]))
    return out


def spec(goal: str = "MAXIMIZE", **stopping) -> StudySpec:
    return StudySpec(metrics=[{"metric_id": "acc", "goal": goal}], **stopping)


MEDIAN = {"median_automated_stopping_spec": {}}
GOOD = [[0.5, 0.7, 0.8, 0.85, 0.9], [0.4, 0.6, 0.75, 0.8, 0.85], [0.55, 0.7, 0.8, 0.86, 0.88]]


def test_median_stops_a_trial_lagging_the_median():
    stop = should_stop(spec(**MEDIAN), measurements([0.1, 0.2, 0.3]), completed(GOOD))
    assert stop is not None and "median" in stop.reason
    assert stop.final is None


def test_median_lets_a_trial_at_or_above_the_median_run():
    assert should_stop(spec(**MEDIAN), measurements([0.5, 0.7, 0.8]), completed(GOOD)) is None


def test_median_compares_running_averages_up_to_the_trials_last_step():
    # At step 1 the completed trials average 0.4..0.55 (median 0.5): 0.45 lags, 0.5 does not.
    assert should_stop(spec(**MEDIAN), measurements([0.45]), completed(GOOD)) is not None
    assert should_stop(spec(**MEDIAN), measurements([0.5]), completed(GOOD)) is None


def test_median_waits_for_enough_completed_trials():
    assert should_stop(spec(**MEDIAN), measurements([0.1]), completed(GOOD[:2])) is None


def test_median_minimize_goal():
    losses = [[1 - v for v in c] for c in GOOD]
    lagging = measurements([0.9, 0.85, 0.8])
    assert should_stop(spec("MINIMIZE", **MEDIAN), lagging, completed(losses)) is not None
    assert should_stop(spec("MINIMIZE", **MEDIAN), measurements([0.3]), completed(losses)) is None


def test_median_on_elapsed_duration():
    # Completed trials took 10 s a step. The trial is at step 5 but only 10 s in: compared with
    # the completed trials' first step (median 0.5), 0.52 is fine; by step it would lag.
    trial = measurements([0.3, 0.4, 0.45, 0.5, 0.52], seconds_per_step=2.0)
    by_time = {"median_automated_stopping_spec": {"use_elapsed_duration": True}}
    slow = []
    for values in GOOD:
        ms = measurements(values, seconds_per_step=10.0)
        slow.append(curve(ms, "acc", use_elapsed=True, final=ms[-1]))
    assert should_stop(spec(**by_time), trial, slow) is None
    assert should_stop(spec(**MEDIAN), trial, completed(GOOD)) is not None


DECAY = {"decay_curve_stopping_spec": {}}
# Final accuracy tracks accuracy at step 2 closely across completed trials.
CURVES = [[0.2 + d, 0.3 + d, 0.4 + d, 0.5 + d] for d in (0.0, 0.1, 0.2, 0.3, 0.4)]


def test_decay_curve_stops_a_hopeless_trial():
    stop = should_stop(spec(**DECAY), measurements([0.1, 0.2]), completed(CURVES))
    assert stop is not None and "chance" in stop.reason


def test_decay_curve_keeps_a_promising_trial():
    assert should_stop(spec(**DECAY), measurements([0.6, 0.7]), completed(CURVES)) is None


CONVEX = {"convex_automated_stopping_spec": {"min_measurement_count": 2, "max_step_count": 10}}
TEN_STEPS = [[0.1 * (i + 1) * f for i in range(10)] for f in (0.8, 0.9, 1.0)]


def test_convex_stops_a_flattening_trial_and_predicts_its_final():
    trial = measurements([0.1, 0.2, 0.25, 0.26])  # slope 0.01: 0.26 + 6 * 0.01 < 1.0
    stop = should_stop(spec(**CONVEX), trial, completed(TEN_STEPS))
    assert stop is not None
    assert stop.final.step == 10 and abs(stop.final.metrics["acc"] - 0.32) < 1e-9


def test_convex_keeps_a_steep_trial():
    trial = measurements([0.1, 0.2, 0.3, 0.4])  # 0.4 + 6 * 0.1 = 1.0 reaches the best
    assert should_stop(spec(**CONVEX), trial, completed(TEN_STEPS)) is None


def test_no_rule_no_stop():
    assert should_stop(spec(), measurements([0.0]), completed(GOOD)) is None
