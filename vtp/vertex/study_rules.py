"""The rules Vertex applies to a StudySpec and a HyperparameterTuningJob, checked before submission.

Each check raises `SpecError` at the first problem, naming the REST field path the user wrote and
what to change. Field presence and types were already checked by `protodict`; these are the rules
between fields: bounds, scales, conditional parents, grid search, trial counts.
"""

import itertools
import math
from collections import Counter
from collections.abc import Iterator, Sequence

from google.cloud.aiplatform_v1 import HyperparameterTuningJob, StudySpec

from vtp.vertex.protodict import SpecError, join

Param = StudySpec.ParameterSpec
Conditional = StudySpec.ParameterSpec.ConditionalParameterSpec
_LOG_SCALES = {Param.ScaleType.UNIT_LOG_SCALE, Param.ScaleType.UNIT_REVERSE_LOG_SCALE}
_GRID_KINDS = {"integer_value_spec", "categorical_value_spec", "discrete_value_spec"}
_CONDITION_FOR_PARENT = {
    "discrete_value_spec": "parent_discrete_values",
    "integer_value_spec": "parent_int_values",
    "categorical_value_spec": "parent_categorical_values",
}
_CAMEL = {
    "double_value_spec": "doubleValueSpec",
    "integer_value_spec": "integerValueSpec",
    "categorical_value_spec": "categoricalValueSpec",
    "discrete_value_spec": "discreteValueSpec",
    "parent_discrete_values": "parentDiscreteValues",
    "parent_int_values": "parentIntValues",
    "parent_categorical_values": "parentCategoricalValues",
}
DISCRETE_EPSILON = 1e-10
"""Vertex matches discrete values (and conditions on them) within this tolerance."""
MAX_VALUES = 1000
"""The most values a discrete or categorical parameter, or a condition on a parent, may list."""


def check_tuning_job(job: HyperparameterTuningJob) -> None:
    """Raise SpecError unless `job` is a HyperparameterTuningJob that Vertex would accept."""
    if not job.display_name.strip():
        raise SpecError("displayName", "required; give the job a name (--display-name)")
    if len(job.display_name) > 128:
        raise SpecError("displayName", "must be at most 128 characters")
    if "study_spec" not in job:
        raise SpecError("studySpec", "required: the metrics and parameters to tune")
    if "trial_job_spec" not in job:
        raise SpecError("trialJobSpec", "required: the CustomJobSpec every trial runs")
    _check_trial_counts(job)
    check_study_spec(job.study_spec)


def _check_trial_counts(job: HyperparameterTuningJob) -> None:
    if job.max_trial_count <= 0:
        raise SpecError("maxTrialCount", "required and must be positive (--max-trial-count)")
    if job.parallel_trial_count <= 0:
        raise SpecError(
            "parallelTrialCount", "required and must be positive (--parallel-trial-count)"
        )
    if job.parallel_trial_count > job.max_trial_count:
        raise SpecError(
            "parallelTrialCount",
            f"{job.parallel_trial_count} is above maxTrialCount {job.max_trial_count}; "
            "lower it to at most maxTrialCount",
        )
    if job.max_failed_trial_count < 0:
        raise SpecError("maxFailedTrialCount", "must not be negative (0 lets Vertex decide)")


def check_study_spec(spec: StudySpec, path: str = "studySpec") -> None:
    """Raise SpecError unless `spec` is a StudySpec that a HyperparameterTuningJob accepts."""
    _check_metrics(spec.metrics, join(path, "metrics"))
    if not spec.parameters:
        raise SpecError(join(path, "parameters"), "required: list at least one parameter to tune")
    for index, param in enumerate(spec.parameters):
        _check_parameter(param, join(join(path, "parameters"), index))
    _check_unique_ids(spec, join(path, "parameters"))
    if spec.observation_noise:
        raise SpecError(
            join(path, "observationNoise"), "only Vertex AI Vizier supports it; remove it"
        )
    if spec.algorithm == StudySpec.Algorithm.GRID_SEARCH:
        _check_grid(spec, path)
    _check_stopping(spec, path)


def _check_metrics(metrics: Sequence[StudySpec.MetricSpec], path: str) -> None:
    if not metrics:
        raise SpecError(path, "required: the metricId your trainer reports, and its goal")
    seen: set[str] = set()
    for index, metric in enumerate(metrics):
        where = join(path, index)
        if not metric.metric_id or any(c.isspace() for c in metric.metric_id):
            raise SpecError(join(where, "metricId"), "required, without whitespace")
        if metric.metric_id in seen:
            raise SpecError(join(where, "metricId"), f"{metric.metric_id!r} is listed twice")
        seen.add(metric.metric_id)
        if metric.goal == StudySpec.MetricSpec.GoalType.GOAL_TYPE_UNSPECIFIED:
            raise SpecError(join(where, "goal"), "required: MAXIMIZE or MINIMIZE")


def value_kind(param: Param) -> str | None:
    """The set member of the parameter's value-spec oneof (`double_value_spec`, ...), or None."""
    return type(param).pb(param).WhichOneof("parameter_value_spec")


def _check_parameter(param: Param, path: str) -> None:
    if not param.parameter_id or any(c.isspace() for c in param.parameter_id):
        raise SpecError(join(path, "parameterId"), "required, without whitespace")
    kind = value_kind(param)
    if kind is None:
        raise SpecError(
            path,
            f"{param.parameter_id!r} needs one of doubleValueSpec, integerValueSpec, "
            "discreteValueSpec or categoricalValueSpec",
        )
    spec = getattr(param, kind)
    where = join(path, _CAMEL[kind])
    if "default_value" in spec:
        raise SpecError(join(where, "defaultValue"), "only Vertex AI Vizier supports it; remove it")
    {
        "double_value_spec": _check_range,
        "integer_value_spec": _check_range,
        "discrete_value_spec": _check_discrete,
        "categorical_value_spec": _check_categorical,
    }[kind](param, where)
    for index, conditional in enumerate(param.conditional_parameter_specs):
        _check_conditional(param, conditional, join(join(path, "conditionalParameterSpecs"), index))


def _check_range(param: Param, where: str) -> None:
    spec = param.double_value_spec if "double_value_spec" in param else param.integer_value_spec
    low, high = spec.min_value, spec.max_value
    if not (math.isfinite(low) and math.isfinite(high)):
        raise SpecError(where, "minValue and maxValue must be finite numbers")
    if low > high or (low == high and "double_value_spec" in param):
        raise SpecError(
            join(where, "maxValue"), f"must be above minValue ({high} <= {low}); swap them?"
        )
    _check_log_scale(
        param, low, join(where, "minValue"), "a strictly positive range", "raise minValue above 0"
    )


def _check_log_scale(param: Param, smallest: float, path: str, needs: str, fix: str) -> None:
    # Vertex searches a log scale through the logarithm of the values: none may be 0 or below.
    if param.scale_type in _LOG_SCALES and smallest <= 0:
        raise SpecError(
            path,
            f"{param.scale_type.name} needs {needs}, got {smallest}; "
            f"{fix} or use UNIT_LINEAR_SCALE",
        )


def _check_discrete(param: Param, where: str) -> None:
    values = list(param.discrete_value_spec.values)
    if not values:
        raise SpecError(join(where, "values"), "list at least one value")
    _check_count(values, join(where, "values"))
    if not all(math.isfinite(v) for v in values):
        raise SpecError(join(where, "values"), "values must be finite numbers")
    if any(b - a < DISCRETE_EPSILON for a, b in itertools.pairwise(values)):
        raise SpecError(
            join(where, "values"),
            f"must be increasing and distinct; write them sorted: {sorted(set(values))}",
        )
    _check_log_scale(param, values[0], join(where, "values"), "strictly positive values", "drop it")


def _check_categorical(param: Param, where: str) -> None:
    values = list(param.categorical_value_spec.values)
    if not values or not all(values):
        raise SpecError(join(where, "values"), "list at least one category, none of them empty")
    _check_count(values, join(where, "values"))
    duplicates = sorted(value for value, count in Counter(values).items() if count > 1)
    if duplicates:
        raise SpecError(join(where, "values"), f"{duplicates} listed more than once")
    if param.scale_type:
        raise SpecError(
            join(where.rpartition(".")[0], "scaleType"), "leave it unset for a CATEGORICAL one"
        )


def _check_count(values: Sequence[object], path: str) -> None:
    """At most MAX_VALUES values: later checks and every suggestion walk the list."""
    if len(values) > MAX_VALUES:
        raise SpecError(path, f"at most {MAX_VALUES} values, got {len(values)}")


def _check_conditional(parent: Param, conditional: Conditional, path: str) -> None:
    parent_kind = value_kind(parent)
    if parent_kind not in _CONDITION_FOR_PARENT:
        raise SpecError(
            path,
            f"{parent.parameter_id!r} is a DOUBLE parameter and cannot have conditional "
            "parameters; make it discreteValueSpec or integerValueSpec",
        )
    expected = _CONDITION_FOR_PARENT[parent_kind]
    given = type(conditional).pb(conditional).WhichOneof("parent_value_condition")
    if given != expected:
        raise SpecError(
            path,
            f"the parent {parent.parameter_id!r} is {_CAMEL[parent_kind]}, so the condition "
            f"must be {_CAMEL[expected]}" + (f", not {_CAMEL[given]}" if given else ""),
        )
    values = list(getattr(conditional, given).values)
    if not values:
        raise SpecError(join(join(path, _CAMEL[given]), "values"), "list at least one value")
    _check_count(values, join(join(path, _CAMEL[given]), "values"))
    categories = set(parent.categorical_value_spec.values)  # a set: each lookup at once
    for index, value in enumerate(values):
        if not (value in categories if categories else parent_admits(parent, value)):
            raise SpecError(
                join(join(join(path, _CAMEL[given]), "values"), index),
                f"{value!r} is not a value of the parent {parent.parameter_id!r}",
            )
    if "parameter_spec" not in conditional:
        raise SpecError(join(path, "parameterSpec"), "required: the conditional parameter")
    _check_parameter(conditional.parameter_spec, join(path, "parameterSpec"))


def parent_admits(parent: Param, value: float | int | str) -> bool:
    """True when `value` is in the feasible set of the (discrete, integer, categorical) parent."""
    kind = value_kind(parent)
    if kind == "categorical_value_spec":
        return value in parent.categorical_value_spec.values
    if isinstance(value, str):  # a category can only select a categorical parent's branch
        return False
    if kind == "discrete_value_spec":
        return any(abs(v - value) <= DISCRETE_EPSILON for v in parent.discrete_value_spec.values)
    if kind == "integer_value_spec":
        spec = parent.integer_value_spec
        return spec.min_value <= value <= spec.max_value
    return False


def _check_unique_ids(spec: StudySpec, path: str) -> None:
    """One id per active parameter set: only siblings under disjoint conditions may share an id."""
    owners: dict[str, tuple[str, str]] = {}  # id -> (owner key, where it was first seen)
    for where, parent_path, param in walk(spec.parameters, path):
        key = f"children of {parent_path}" if parent_path else where
        owner, first = owners.setdefault(param.parameter_id, (key, where))
        if owner != key:
            raise SpecError(
                join(where, "parameterId"),
                f"{param.parameter_id!r} is already the id of {first}; rename one",
            )
    for where, _, param in walk(spec.parameters, path):
        _check_disjoint(param, where)


def _check_disjoint(param: Param, path: str) -> None:
    seen: dict[str, set] = {}
    for index, conditional in enumerate(param.conditional_parameter_specs):
        kind = type(conditional).pb(conditional).WhichOneof("parent_value_condition")
        values = set(getattr(conditional, kind).values) if kind else set()
        child_id = conditional.parameter_spec.parameter_id
        overlap = seen.setdefault(child_id, set()) & values
        if overlap:
            raise SpecError(
                join(join(path, "conditionalParameterSpecs"), index),
                f"{child_id!r} appears twice for parent values {sorted(overlap)}; "
                "conditions on the same child must be disjoint",
            )
        seen[child_id] |= values


def walk(params: Sequence[Param], path: str) -> Iterator[tuple[str, str, Param]]:
    """Every parameter of the tree as (its path, its parent's path or '', its spec)."""
    for index, param in enumerate(params):
        yield from _walk_one(param, join(path, index), "")


def _walk_one(param: Param, where: str, parent: str) -> Iterator[tuple[str, str, Param]]:
    yield where, parent, param
    for index, conditional in enumerate(param.conditional_parameter_specs):
        child = join(join(join(where, "conditionalParameterSpecs"), index), "parameterSpec")
        yield from _walk_one(conditional.parameter_spec, child, where)


def _check_grid(spec: StudySpec, path: str) -> None:
    for where, _, param in walk(spec.parameters, join(path, "parameters")):
        if value_kind(param) not in _GRID_KINDS:
            raise SpecError(
                where,
                f"GRID_SEARCH needs INTEGER, CATEGORICAL or DISCRETE parameters; "
                f"{param.parameter_id!r} is DOUBLE: give it discreteValueSpec values "
                "or use RANDOM_SEARCH / ALGORITHM_UNSPECIFIED",
            )


def _check_stopping(spec: StudySpec, path: str) -> None:
    if "convex_automated_stopping_spec" not in spec:
        return
    convex = spec.convex_automated_stopping_spec
    where = join(path, "convexAutomatedStoppingSpec")
    for name, value in (
        ("maxStepCount", convex.max_step_count),
        ("minStepCount", convex.min_step_count),
        ("minMeasurementCount", convex.min_measurement_count),
    ):
        if value < 0:
            raise SpecError(join(where, name), "must not be negative")
    if convex.max_step_count and convex.min_step_count > convex.max_step_count:
        raise SpecError(join(where, "minStepCount"), "must not exceed maxStepCount")
    lr_name = convex.learning_rate_parameter_name
    if lr_name and lr_name not in {
        p.parameter_id for _, _, p in walk(spec.parameters, "parameters")
    }:
        raise SpecError(
            join(where, "learningRateParameterName"),
            f"{lr_name!r} is not a parameter of the study; name one or leave it blank",
        )
