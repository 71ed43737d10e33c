"""Next parameter sets for a study: GRID_SEARCH, RANDOM_SEARCH, and Bayesian (Optuna's TPE).

A `Suggester` holds nothing but the study spec, a seed and the list of trials so far, so the
service rebuilds it from its stored trials after a restart and gets the same next suggestions.
Every suggestion is a pure function of (spec, seed, trials): the random stream of suggestion n
is seeded with (seed, n), and the TPE model is refitted from the trials on every call (cheap at
the hundreds of trials a tuning job runs).

ALGORITHM_UNSPECIFIED is Vertex's default Bayesian optimization; locally it is multivariate TPE
with the constant-liar strategy, so trials still running steer parallel suggestions away from
each other.
"""

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

import numpy as np
import optuna
from google.cloud.aiplatform_v1 import StudySpec, Trial
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from vtp.local.tuning import space
from vtp.local.tuning.space import Dimension, Value

TPE_STARTUP_TRIALS = 5
"""Random trials before TPE models the objective (Optuna's default is 10)."""

State = Literal["PENDING", "COMPLETE", "FAILED"]


@dataclass(frozen=True)
class TrialRecord:
    """What the algorithms know of one trial: its parameters and, once done, its final metrics."""

    trial_id: str
    parameters: Mapping[str, Value]
    state: State = "PENDING"
    values: Mapping[str, float] = field(default_factory=dict)
    """The final measurement's metrics, for COMPLETE trials."""


def record_from_trial(trial: Trial, metric_ids: Sequence[str]) -> TrialRecord:
    """The TrialRecord of a stored aiplatform_v1 Trial."""
    params: dict[str, Value] = {}
    for p in trial.parameters:
        # proto-plus unwraps a struct Value to float or str; aiplatform's hints say struct Value.
        params[p.parameter_id] = cast(Value, p.value)
    values = {m.metric_id: m.value for m in trial.final_measurement.metrics}
    if trial.state in (Trial.State.ACTIVE, Trial.State.STOPPING, Trial.State.REQUESTED):
        state: State = "PENDING"
    elif trial.state == Trial.State.SUCCEEDED and all(m in values for m in metric_ids):
        state = "COMPLETE"
    else:
        state = "FAILED"
    return TrialRecord(trial.id, params, state, values if state == "COMPLETE" else {})


class Suggester:
    """Suggests parameter sets for a study and tracks its trials."""

    def __init__(self, spec: StudySpec, seed: int = 0, trials: Sequence[TrialRecord] = ()) -> None:
        self.spec = spec
        self.seed = seed
        self.trials: list[TrialRecord] = list(trials)
        self._dims = space.dimensions(spec)
        self._metric_ids = [m.metric_id for m in spec.metrics]

    def suggest(self, trial_id: str) -> dict[str, Value] | None:
        """Parameters for a new PENDING trial, or None when the search space is exhausted."""
        algorithm = self.spec.algorithm
        if algorithm == StudySpec.Algorithm.GRID_SEARCH:
            params = self._grid()
        elif algorithm == StudySpec.Algorithm.RANDOM_SEARCH:
            params = self._random()
        else:
            params = self._tpe()
        if params is not None:
            self.trials.append(TrialRecord(trial_id, params))
        return params

    def complete(self, trial_id: str, values: Mapping[str, float]) -> None:
        """Record a trial's final metrics (missing objectives make it FAILED)."""
        ok = all(m in values for m in self._metric_ids)
        self._replace(trial_id, "COMPLETE" if ok else "FAILED", values if ok else {})

    def fail(self, trial_id: str) -> None:
        """Record that a trial ended without a final measurement."""
        self._replace(trial_id, "FAILED", {})

    def _replace(self, trial_id: str, state: State, values: Mapping[str, float]) -> None:
        for index, record in enumerate(self.trials):
            if record.trial_id == trial_id:
                self.trials[index] = TrialRecord(trial_id, record.parameters, state, dict(values))
                return
        raise KeyError(f"no trial {trial_id!r} in this study")

    def _grid(self) -> dict[str, Value] | None:
        tried = {space.point_key(t.parameters) for t in self.trials}
        return next((p for p in space.grid(self._dims) if space.point_key(p) not in tried), None)

    def _random(self) -> dict[str, Value]:
        rng = np.random.default_rng([self.seed, len(self.trials)])
        return space.assign(self._dims, lambda dim: _random_value(dim, rng))

    def _tpe(self) -> dict[str, Value]:
        study = self._optuna_study()
        trial = study.ask()
        return space.assign(self._dims, lambda dim: _decode(dim, _suggest(trial, dim)))

    def _optuna_study(self) -> optuna.Study:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        seed = int(np.random.SeedSequence([self.seed, len(self.trials)]).generate_state(1)[0])
        with warnings.catch_warnings():  # multivariate/group/constant_liar are "experimental"
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            sampler = optuna.samplers.TPESampler(
                seed=seed,
                n_startup_trials=TPE_STARTUP_TRIALS,
                multivariate=True,
                group=True,
                constant_liar=True,
            )
        goals: dict[int, Literal["minimize", "maximize"]] = {
            StudySpec.MetricSpec.GoalType.MINIMIZE: "minimize"
        }
        directions = [goals.get(m.goal, "maximize") for m in self.spec.metrics]
        study = optuna.create_study(sampler=sampler, directions=directions)
        for record in self.trials:
            study.add_trial(self._frozen_trial(record))
        return study

    def _frozen_trial(self, record: TrialRecord) -> optuna.trial.FrozenTrial:
        dims = space.active_dimensions(self._dims, record.parameters)
        states = {
            "PENDING": optuna.trial.TrialState.RUNNING,
            "COMPLETE": optuna.trial.TrialState.COMPLETE,
            "FAILED": optuna.trial.TrialState.FAIL,
        }
        values = None
        if record.state == "COMPLETE":
            values = [record.values[m] for m in self._metric_ids]
        return optuna.trial.create_trial(
            params={d.key: _encode(d, record.parameters[d.parameter_id]) for d in dims},
            distributions={d.key: _distribution(d) for d in dims},
            values=values,
            state=states[record.state],
        )


def _random_value(dim: Dimension, rng: np.random.Generator) -> Value:
    if dim.kind in ("DISCRETE", "CATEGORICAL"):
        return dim.values[int(rng.integers(len(dim.values)))]
    return space.from_unit(dim, float(rng.random()))


# Optuna sees each dimension in its own coordinates: a reverse-log value v becomes
# low + high - v on a log scale, and a discrete value its index (so TPE keeps their order).


def _distribution(dim: Dimension) -> BaseDistribution:
    log = dim.scale != "LINEAR"
    if dim.kind == "DOUBLE":
        return FloatDistribution(dim.low, dim.high, log=log)
    if dim.kind == "INTEGER":
        return IntDistribution(int(dim.low), int(dim.high), log=log)
    if dim.kind == "DISCRETE":
        return IntDistribution(0, len(dim.values) - 1)
    return CategoricalDistribution(dim.values)


def _suggest(trial: optuna.Trial, dim: Dimension) -> Value:
    dist = _distribution(dim)
    if isinstance(dist, FloatDistribution):
        return trial.suggest_float(dim.key, dist.low, dist.high, log=dist.log)
    if isinstance(dist, IntDistribution):
        return trial.suggest_int(dim.key, dist.low, dist.high, log=dist.log)
    choice = trial.suggest_categorical(dim.key, dim.values)
    assert choice is not None  # one of dim.values
    return choice


def _decode(dim: Dimension, internal: Value) -> Value:
    if dim.kind == "DISCRETE":
        return dim.values[int(internal)]
    if dim.scale == "REVERSE_LOG":
        return _flip(dim, internal)
    return internal


def _encode(dim: Dimension, value: Value) -> Value:
    if dim.kind == "DISCRETE":
        # DISCRETE values are floats (space.dimensions)
        return min(range(len(dim.values)), key=lambda i: abs(float(dim.values[i]) - float(value)))
    if dim.kind == "INTEGER":
        value = int(value)
    if dim.scale == "REVERSE_LOG":
        return _flip(dim, value)
    return value


def _flip(dim: Dimension, value: Value) -> Value:
    """low + high - value, both ways between a reverse-log value and Optuna's coordinates."""
    # Only DOUBLE and INTEGER dimensions have a scale (study_rules refuses one on a CATEGORICAL).
    assert not isinstance(value, str), f"{dim.parameter_id}: a scale on a CATEGORICAL value"
    flipped = dim.low + dim.high - value
    return int(flipped) if dim.kind == "INTEGER" else min(max(flipped, dim.low), dim.high)
