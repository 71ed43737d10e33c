"""Automated early stopping of trials, from their intermediate measurements (StudySpec's rules).

Pure functions: a running trial's measurements and the completed trials' measurements in, a
decision out. The x-axis of every curve is the step, or the elapsed time with
`useElapsedDuration`. Only the study's first metric is used. The rules, as Vertex documents them:

- median: stop when the trial's best value so far is strictly worse than the median, over the
  completed trials, of their running-average value up to the trial's last x.
- decay curve: a Gaussian process, fitted on the completed trials, predicts the final value
  from the value at the trial's last x; stop when the chance to beat the best final is very low.
- convex: extrapolate the trial's curve linearly with its latest slope to maxStepCount (an
  overestimate for the concave curves training produces); stop when even that cannot beat the
  best completed trial, and give the trial that prediction as its final measurement.
"""

import math
import statistics
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from google.cloud.aiplatform_v1 import StudySpec

from vtp.local.tuning.metrics import Measurement

MIN_COMPLETED_TRIALS = 3
"""Completed trials the median and decay-curve rules wait for (Vertex does not say how many)."""

DECAY_CURVE_MIN_PROBABILITY = 0.05
"""Stop when the predicted chance of beating the best final value is below this."""

CONVEX_DEFAULT_MIN_MEASUREMENTS = 5
"""ConvexAutomatedStoppingSpec's documented default for min_measurement_count."""


@dataclass(frozen=True)
class Curve:
    """One trial's objective as (x, value) points in x order, plus its final value if done."""

    points: tuple[tuple[float, float], ...]
    final: float | None = None


@dataclass(frozen=True)
class Stop:
    """A decision to stop a trial; `final` replaces its final measurement when set."""

    reason: str
    final: Measurement | None = None


def curve(
    measurements: Sequence[Measurement],
    metric_id: str,
    use_elapsed: bool,
    final: Measurement | None = None,
) -> Curve:
    """The objective curve of one trial's measurements."""
    points = tuple(
        (m.elapsed_seconds if use_elapsed else float(m.step), m.metrics[metric_id])
        for m in measurements
        if metric_id in m.metrics
    )
    value = final.metrics.get(metric_id) if final is not None else None
    return Curve(tuple(sorted(points, key=lambda p: p[0])), value)


def should_stop(
    spec: StudySpec, trial: Sequence[Measurement], completed: Sequence[Curve]
) -> Stop | None:
    """The study's stopping rule applied to a running trial; None to let it go on."""
    rule = type(spec).pb(spec).WhichOneof("automated_stopping_spec")
    if rule is None:
        return None
    options = getattr(spec, rule)
    objective = spec.metrics[0]
    sign = -1.0 if objective.goal == StudySpec.MetricSpec.GoalType.MINIMIZE else 1.0
    mine = curve(trial, objective.metric_id, options.use_elapsed_duration)
    if not mine.points:
        return None
    if rule == "median_automated_stopping_spec":
        return median_rule(mine, completed, sign)
    if rule == "decay_curve_stopping_spec":
        return decay_curve_rule(mine, completed, sign)
    return convex_rule(mine, completed, sign, options, objective.metric_id, trial[-1])


def median_rule(trial: Curve, completed: Sequence[Curve], sign: float) -> Stop | None:
    """Vizier's median stopping rule; `sign` is +1 to maximize, -1 to minimize."""
    x = trial.points[-1][0]
    averages = [a for a in (_running_average(c, x) for c in completed) if a is not None]
    if len(averages) < MIN_COMPLETED_TRIALS:
        return None
    best = max(sign * v for _, v in trial.points)
    median = statistics.median(sign * a for a in averages)
    if best < median:
        return Stop(
            f"best value {sign * best:g} is worse than the median {sign * median:g} "
            f"of {len(averages)} completed trials at {x:g}"
        )
    return None


def _running_average(c: Curve, x: float) -> float | None:
    values = [v for px, v in c.points if px <= x]
    return sum(values) / len(values) if values else None


def decay_curve_rule(trial: Curve, completed: Sequence[Curve], sign: float) -> Stop | None:
    """Stop when a GP on (value at x -> final value) of completed trials says "hopeless"."""
    x, value = trial.points[-1]
    pairs = [
        (v, c.final)
        for c in completed
        if c.final is not None and (v := _value_at(c, x)) is not None
    ]
    if len(pairs) < MIN_COMPLETED_TRIALS:
        return None
    xs, ys = [sign * v for v, _ in pairs], [sign * f for _, f in pairs]
    mean, std = _gp_predict(xs, ys, sign * value)
    best = max(ys)
    chance = float(mean > best)
    if std > 0:
        chance = 0.5 * math.erfc((best - mean) / (std * math.sqrt(2)))
    if chance < DECAY_CURVE_MIN_PROBABILITY:
        return Stop(
            f"predicted final value {sign * mean:g} has a {chance:.1%} chance to beat "
            f"the best {sign * best:g}"
        )
    return None


def _value_at(c: Curve, x: float) -> float | None:
    """The curve's value at x, linearly interpolated; None if x is beyond its last point."""
    if not c.points or x > c.points[-1][0]:
        return None
    previous = c.points[0]
    for point in c.points:
        if point[0] >= x:
            if point[0] == previous[0]:
                return point[1]
            t = (x - previous[0]) / (point[0] - previous[0])
            return previous[1] + t * (point[1] - previous[1])
        previous = point
    return c.points[-1][1]


def _gp_predict(xs: list[float], ys: list[float], at: float) -> tuple[float, float]:
    # Imported here: scikit-learn is only needed by studies that use this rule.
    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    kernel = ConstantKernel() * RBF() + WhiteKernel(noise_level=1e-2)
    gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=0)
    with warnings.catch_warnings():  # near-noiseless curves push the noise to its bound
        warnings.simplefilter("ignore", ConvergenceWarning)
        gp.fit(np.array(xs).reshape(-1, 1), np.array(ys))
    mean, std = gp.predict(np.array([[at]]), return_std=True)
    return float(mean[0]), float(std[0])


def convex_rule(
    trial: Curve,
    completed: Sequence[Curve],
    sign: float,
    options: StudySpec.ConvexAutomatedStoppingSpec,
    metric_id: str,
    last: Measurement,
) -> Stop | None:
    """ConvexAutomatedStoppingSpec: stop if an optimistic extrapolation cannot beat the best."""
    min_measurements = options.min_measurement_count or CONVEX_DEFAULT_MIN_MEASUREMENTS
    finals = [c.final for c in completed if c.final is not None]
    if len(finals) < min_measurements + 1 or len(trial.points) < max(min_measurements, 2):
        return None
    max_x = float(options.max_step_count) or max(c.points[-1][0] for c in completed if c.points)
    min_x = float(options.min_step_count) if options.min_step_count else max_x / 10
    (x0, v0), (x1, v1) = trial.points[-2], trial.points[-1]
    if x1 <= min_x or x1 >= max_x or x1 == x0 or len({v for _, v in trial.points}) == 1:
        return None  # too early, already at the end, or flat: no prediction
    slope = max(sign * (v1 - v0) / (x1 - x0), 0.0)
    predicted = sign * v1 + slope * (max_x - x1)
    best = max(sign * f for f in finals)
    if predicted >= best:
        return None
    step, elapsed = int(max_x), last.elapsed_seconds
    if options.use_elapsed_duration:
        step, elapsed = last.step, max_x
    final = Measurement(step, elapsed, {**last.metrics, metric_id: sign * predicted})
    return Stop(
        f"extrapolated value {sign * predicted:g} at {max_x:g} cannot beat the best "
        f"{sign * best:g}",
        final,
    )
