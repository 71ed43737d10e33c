"""Hyperparameter tuning jobs from YAML (gcloud's `--config` form) or Python, validated before use.

Both roads end in `tuning_job_from_dict`, which checks a REST-form dict field by field
(`protodict`), applies Vertex's rules (`study_rules`) and returns an
`aiplatform_v1.HyperparameterTuningJob`. The dataclasses below are the Python road: they write the
same dict a user would write in YAML, so one validator serves both.

    study = Study(
        metrics=(Metric("accuracy", "MAXIMIZE"),),
        parameters=(
            DoubleParameter("learning_rate", 1e-4, 1e-1, scale="UNIT_LOG_SCALE"),
            DiscreteParameter("batch_size", (32, 64, 128)),
        ),
    )
    job = tuning_job("digits-hp", study, trial_job_spec, max_trial_count=20, parallel_trial_count=2)
"""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from google.cloud.aiplatform_v1 import HyperparameterTuningJob, StudySpec

from vtp.vertex import study_rules, validation
from vtp.vertex.protodict import SpecError, join, parse

Goal = Literal["MAXIMIZE", "MINIMIZE"]
Scale = Literal["UNIT_LINEAR_SCALE", "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE"]
Algorithm = Literal["ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH"]
Selection = Literal["LAST_MEASUREMENT", "BEST_MEASUREMENT"]

_OUTPUT_ONLY = (
    *("name", "trials", "state", "error", "satisfiesPzs", "satisfiesPzi"),
    *("createTime", "startTime", "endTime", "updateTime"),
)
_JOB_FIELDS_IN_STUDY = ("maxTrialCount", "parallelTrialCount", "maxFailedTrialCount")


@dataclass(frozen=True)
class Metric:
    """An objective the trainer reports with cloudml-hypertune."""

    metric_id: str
    """The metric tag passed to `report_hyperparameter_tuning_metric`."""
    goal: Goal
    """Whether larger (MAXIMIZE) or smaller (MINIMIZE) values are better."""

    def to_dict(self) -> dict[str, Any]:
        """The REST `MetricSpec`."""
        return {"metricId": self.metric_id, "goal": self.goal}


@dataclass(frozen=True)
class Conditional:
    """A parameter tuned only in trials where its parent takes one of `parent_values`."""

    parent_values: tuple[float | int | str, ...]
    """Values of the parent (same type as the parent) that switch this parameter on."""
    parameter: "Parameter"
    """The conditional parameter itself."""


@dataclass(frozen=True)
class DoubleParameter:
    """A real-valued parameter in [min_value, max_value]."""

    parameter_id: str
    """The name a trial's command line gets it by (`--ID=VALUE`); unique in the study."""
    min_value: float
    max_value: float
    scale: Scale = "UNIT_LINEAR_SCALE"

    def to_dict(self) -> dict[str, Any]:
        """The REST `ParameterSpec`."""
        spec = {"minValue": self.min_value, "maxValue": self.max_value}
        return {"parameterId": self.parameter_id, "doubleValueSpec": spec, "scaleType": self.scale}


@dataclass(frozen=True)
class IntegerParameter:
    """An integer parameter in [min_value, max_value]."""

    parameter_id: str
    min_value: int
    max_value: int
    scale: Scale = "UNIT_LINEAR_SCALE"
    conditionals: tuple[Conditional, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The REST `ParameterSpec`."""
        spec = {"minValue": str(self.min_value), "maxValue": str(self.max_value)}
        return _with_children(
            {"parameterId": self.parameter_id, "integerValueSpec": spec, "scaleType": self.scale},
            self.conditionals,
            "parentIntValues",
        )


@dataclass(frozen=True)
class DiscreteParameter:
    """A numeric parameter taking one of a few increasing values (e.g. batch sizes)."""

    parameter_id: str
    values: tuple[float, ...]
    scale: Scale = "UNIT_LINEAR_SCALE"
    conditionals: tuple[Conditional, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The REST `ParameterSpec`."""
        spec = {"values": [float(v) for v in self.values]}
        return _with_children(
            {"parameterId": self.parameter_id, "discreteValueSpec": spec, "scaleType": self.scale},
            self.conditionals,
            "parentDiscreteValues",
        )


@dataclass(frozen=True)
class CategoricalParameter:
    """A parameter taking one of a few unordered strings (e.g. optimizer names)."""

    parameter_id: str
    values: tuple[str, ...]
    conditionals: tuple[Conditional, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The REST `ParameterSpec`."""
        spec = {"values": list(self.values)}
        return _with_children(
            {"parameterId": self.parameter_id, "categoricalValueSpec": spec},
            self.conditionals,
            "parentCategoricalValues",
        )


Parameter = DoubleParameter | IntegerParameter | DiscreteParameter | CategoricalParameter


def _with_children(spec: dict, conditionals: tuple[Conditional, ...], key: str) -> dict:
    if conditionals:
        spec["conditionalParameterSpecs"] = [
            {key: {"values": list(c.parent_values)}, "parameterSpec": c.parameter.to_dict()}
            for c in conditionals
        ]
    return spec


@dataclass(frozen=True)
class MedianStopping:
    """Stop a trial whose best value is worse than the median running average of completed ones."""

    use_elapsed_duration: bool = False
    """Compare at equal elapsed time instead of equal step."""

    def to_dict(self) -> dict[str, Any]:
        """The REST `studySpec` entry."""
        return {"medianAutomatedStoppingSpec": {"useElapsedDuration": self.use_elapsed_duration}}


@dataclass(frozen=True)
class DecayCurveStopping:
    """Stop a trial whose predicted final value is very unlikely to beat the best so far."""

    use_elapsed_duration: bool = False
    """Use elapsed time, not steps, as the curves' x-axis."""

    def to_dict(self) -> dict[str, Any]:
        """The REST `studySpec` entry."""
        return {"decayCurveStoppingSpec": {"useElapsedDuration": self.use_elapsed_duration}}


@dataclass(frozen=True)
class ConvexStopping:
    """Stop a trial whose optimistic extrapolation to max_step_count cannot beat the best."""

    max_step_count: int = 0
    min_step_count: int = 0
    min_measurement_count: int = 0
    learning_rate_parameter_name: str = ""
    use_elapsed_duration: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The REST `studySpec` entry."""
        return {
            "convexAutomatedStoppingSpec": {
                "maxStepCount": str(self.max_step_count),
                "minStepCount": str(self.min_step_count),
                "minMeasurementCount": str(self.min_measurement_count),
                "learningRateParameterName": self.learning_rate_parameter_name,
                "useElapsedDuration": self.use_elapsed_duration,
            }
        }


Stopping = MedianStopping | DecayCurveStopping | ConvexStopping


@dataclass(frozen=True)
class Study:
    """What to tune and how: the `studySpec` of a tuning job."""

    metrics: tuple[Metric, ...]
    parameters: tuple[Parameter, ...]
    algorithm: Algorithm = "ALGORITHM_UNSPECIFIED"
    """ALGORITHM_UNSPECIFIED is Vertex's Bayesian optimization."""
    measurement_selection: Selection = "LAST_MEASUREMENT"
    """Which reported measurement becomes a trial's final one."""
    early_stopping: Stopping | None = None

    def to_dict(self) -> dict[str, Any]:
        """The REST `StudySpec`."""
        spec: dict[str, Any] = {
            "metrics": [m.to_dict() for m in self.metrics],
            "parameters": [p.to_dict() for p in self.parameters],
            "algorithm": self.algorithm,
            "measurementSelectionType": self.measurement_selection,
        }
        if self.early_stopping is not None:
            spec.update(self.early_stopping.to_dict())
        return spec


def tuning_job(
    display_name: str,
    study: Study,
    trial_job_spec: Mapping[str, Any],
    *,
    max_trial_count: int,
    parallel_trial_count: int,
    max_failed_trial_count: int = 0,
    labels: Mapping[str, str] | None = None,
) -> HyperparameterTuningJob:
    """A validated HyperparameterTuningJob; `trial_job_spec` is a REST-form CustomJobSpec dict."""
    data: dict[str, Any] = {
        "displayName": display_name,
        "studySpec": study.to_dict(),
        "maxTrialCount": max_trial_count,
        "parallelTrialCount": parallel_trial_count,
        "maxFailedTrialCount": max_failed_trial_count,
        "trialJobSpec": dict(trial_job_spec),
    }
    if labels:
        data["labels"] = dict(labels)
    return tuning_job_from_dict(data)


def load_config(path: str | Path) -> dict[str, Any]:
    """The mapping in a `--config` YAML (or JSON) file; SpecError naming the file if not one."""
    where = f"--config {path}"
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise SpecError(where, f"cannot read the file: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise SpecError(where, f"not valid YAML{at}: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SpecError(
            where, "expected a mapping of HyperparameterTuningJob fields (studySpec, trialJobSpec)"
        )
    return data


def tuning_job_from_dict(data: Mapping[str, Any]) -> HyperparameterTuningJob:
    """Validate a REST-form HyperparameterTuningJob dict and parse it; raise SpecError."""
    for key in _OUTPUT_ONLY:
        if key in data:
            raise SpecError(key, "output only: Vertex sets it; remove it from the config")
    study = data.get("studySpec")
    if isinstance(study, Mapping):
        for key in _JOB_FIELDS_IN_STUDY:
            if key in study:
                raise SpecError(
                    join("studySpec", key),
                    f"not a StudySpec field; move {key} to the top level of the config, "
                    "next to studySpec and trialJobSpec",
                )
    if isinstance(data.get("trialJobSpec"), Mapping):
        validation.validate_custom_job_spec(data["trialJobSpec"], "trialJobSpec")
    validation.validate_labels(data.get("labels") or {}, "labels")
    job = parse(HyperparameterTuningJob, dict(data))
    study_rules.check_tuning_job(job)
    return job


def parameter_types(spec: StudySpec) -> dict[str, type]:
    """What each parameter of `spec` (conditional ones included) holds: `int` for INTEGER and
    for DISCRETE whose values are all whole numbers (batch sizes), `float` for DOUBLE and other
    DISCRETE, `str` for CATEGORICAL. Decided by the spec alone, because a trial's value is a
    protobuf `Value`, whose numbers are always doubles (64 comes back as 64.0)."""
    types: dict[str, type] = {}
    pending = list(spec.parameters)
    while pending:
        param = pending.pop()
        kind = type(param).pb(param).WhichOneof("parameter_value_spec")
        if kind == "integer_value_spec":
            types[param.parameter_id] = int
        elif kind == "discrete_value_spec":
            whole = all(float(v).is_integer() for v in param.discrete_value_spec.values)
            types[param.parameter_id] = int if whole else float
        elif kind == "double_value_spec":
            types[param.parameter_id] = float
        else:
            types[param.parameter_id] = str
        pending.extend(c.parameter_spec for c in param.conditional_parameter_specs)
    return types


def typed_values(spec: StudySpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """`values` (a trial's parameters, numbers as doubles) in the types `parameter_types` gives:
    a whole number of an integer parameter becomes an int, a DOUBLE's number stays a float."""
    types = parameter_types(spec)
    typed = {}
    for key, value in values.items():
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and types.get(key) is int and float(value).is_integer():
            value = int(value)
        elif number and types.get(key) is float:
            value = float(value)
        typed[key] = value
    return typed
