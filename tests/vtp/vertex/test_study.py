"""Study specs from Python and YAML: one validator, errors that name the field and the fix."""

import pytest
import yaml
from google.cloud.aiplatform_v1 import HyperparameterTuningJob, StudySpec

from tests.fixtures import set_at
from vtp.vertex.protodict import SpecError
from vtp.vertex.study import (
    CategoricalParameter,
    Conditional,
    DiscreteParameter,
    DoubleParameter,
    IntegerParameter,
    MedianStopping,
    Metric,
    Study,
    load_config,
    tuning_job,
    tuning_job_from_dict,
)

TRIAL_JOB_SPEC = {
    "workerPoolSpecs": [
        {
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": 1,
            "containerSpec": {"imageUri": "us-docker.pkg.dev/p/vtp/trainer:latest"},
        }
    ]
}

YAML = """
displayName: digits-hp
maxTrialCount: 12
parallelTrialCount: 2
maxFailedTrialCount: 3
studySpec:
  metrics:
  - {metricId: accuracy, goal: MAXIMIZE}
  parameters:
  - parameterId: lr
    doubleValueSpec: {minValue: 0.0001, maxValue: 0.1}
    scaleType: UNIT_LOG_SCALE
  - parameterId: optimizer
    categoricalValueSpec: {values: [sgd, adam]}
    conditionalParameterSpecs:
    - parentCategoricalValues: {values: [sgd]}
      parameterSpec:
        parameterId: momentum
        discreteValueSpec: {values: [0.0, 0.9]}
        scaleType: UNIT_LINEAR_SCALE
  - parameterId: hidden
    integerValueSpec: {minValue: 16, maxValue: 256}
    scaleType: UNIT_LOG_SCALE
  algorithm: RANDOM_SEARCH
  measurementSelectionType: BEST_MEASUREMENT
  medianAutomatedStoppingSpec: {useElapsedDuration: false}
trialJobSpec:
  workerPoolSpecs:
  - machineSpec: {machineType: n1-standard-4}
    replicaCount: 1
    containerSpec: {imageUri: us-docker.pkg.dev/p/vtp/trainer:latest}
"""

STUDY = Study(
    metrics=(Metric("accuracy", "MAXIMIZE"),),
    parameters=(
        DoubleParameter("lr", 1e-4, 1e-1, scale="UNIT_LOG_SCALE"),
        CategoricalParameter(
            "optimizer",
            ("sgd", "adam"),
            conditionals=(Conditional(("sgd",), DiscreteParameter("momentum", (0.0, 0.9))),),
        ),
        IntegerParameter("hidden", 16, 256, scale="UNIT_LOG_SCALE"),
    ),
    algorithm="RANDOM_SEARCH",
    measurement_selection="BEST_MEASUREMENT",
    early_stopping=MedianStopping(),
)


def test_python_helpers_build_the_same_job_as_the_yaml():
    from_python = tuning_job(
        "digits-hp",
        STUDY,
        TRIAL_JOB_SPEC,
        max_trial_count=12,
        parallel_trial_count=2,
        max_failed_trial_count=3,
    )
    from_yaml = tuning_job_from_dict(yaml.safe_load(YAML))
    assert from_python == from_yaml
    assert isinstance(from_python, HyperparameterTuningJob)
    spec = from_python.study_spec
    assert spec.algorithm == StudySpec.Algorithm.RANDOM_SEARCH
    child = spec.parameters[1].conditional_parameter_specs[0]
    assert child.parent_categorical_values.values == ["sgd"]
    assert child.parameter_spec.discrete_value_spec.values == [0.0, 0.9]
    assert "median_automated_stopping_spec" in spec


def test_load_config_reads_yaml(tmp_path):
    path = tmp_path / "hp.yaml"
    path.write_text(YAML)
    assert load_config(path)["maxTrialCount"] == 12
    path.write_text("studySpec: [unclosed")
    with pytest.raises(SpecError, match=r"--config .*hp.yaml: not valid YAML at line 1"):
        load_config(path)


def test_seed_000_form_is_rejected_with_where_the_counts_belong():
    seed = yaml.safe_load(YAML)
    seed["studySpec"]["maxTrialCount"] = seed.pop("maxTrialCount")
    with pytest.raises(SpecError) as err:
        tuning_job_from_dict(seed)
    assert err.value.path == "studySpec.maxTrialCount"
    assert "move maxTrialCount to the top level" in str(err.value)


def rejected(mutate) -> SpecError:
    data = yaml.safe_load(YAML)
    mutate(data)
    with pytest.raises(SpecError) as err:
        tuning_job_from_dict(data)
    return err.value


def params(data):
    return data["studySpec"]["parameters"]


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        # A log scale needs positive bounds.
        ("studySpec.parameters[0].doubleValueSpec.minValue", 0, "UNIT_LINEAR_SCALE"),
        # The trial job spec goes through the custom job rules.
        ("trialJobSpec.workerPoolSpecs[0].replicaCount", 2, "single primary"),
        # An unknown field gets the nearest name.
        ("studySpec.algoritm", "GRID_SEARCH", "did you mean 'algorithm'"),
        # Vizier-only fields are refused.
        ("studySpec.parameters[2].integerValueSpec.defaultValue", 32, "Vizier"),
    ],
)
def test_a_refused_field_is_named_with_what_is_wrong(field, value, says):
    err = rejected(lambda d: set_at(d, field, value))
    assert err.path == field
    assert says in str(err)


def test_condition_must_match_the_parents_type():
    def mutate(d):
        child = params(d)[1]["conditionalParameterSpecs"][0]
        child["parentDiscreteValues"] = {"values": [1.0]}
        del child["parentCategoricalValues"]

    err = rejected(mutate)
    assert err.path == "studySpec.parameters[1].conditionalParameterSpecs[0]"
    assert "must be parentCategoricalValues, not parentDiscreteValues" in str(err)


def test_condition_values_must_be_parent_values():
    def mutate(d):
        params(d)[1]["conditionalParameterSpecs"][0]["parentCategoricalValues"]["values"] = [
            "rmsprop"
        ]

    err = rejected(mutate)
    assert err.path.endswith("conditionalParameterSpecs[0].parentCategoricalValues.values[0]")
    assert "'rmsprop' is not a value of the parent 'optimizer'" in str(err)


@pytest.mark.parametrize("values", [[f"c{i}" for i in range(200_000)], ["a", "b", "a"]])
def test_categorical_values_are_capped_like_discrete_ones_and_distinct(values):
    err = rejected(
        lambda d: set_at(d, "studySpec.parameters[1].categoricalValueSpec.values", values)
    )
    assert err.path == "studySpec.parameters[1].categoricalValueSpec.values"
    assert ("at most 1000 values, got 200000" if len(values) > 3 else "['a'] listed more") in str(
        err
    )


def test_condition_values_are_capped():
    def mutate(d):
        condition = params(d)[1]["conditionalParameterSpecs"][0]["parentCategoricalValues"]
        condition["values"] = ["sgd"] * 200_000

    err = rejected(mutate)
    assert err.path.endswith("conditionalParameterSpecs[0].parentCategoricalValues.values")
    assert "at most 1000 values, got 200000" in str(err)


def test_double_parameter_cannot_be_a_parent():
    def mutate(d):
        params(d)[0]["conditionalParameterSpecs"] = [
            {"parentIntValues": {"values": [1]}, "parameterSpec": params(d).pop(2)}
        ]

    assert "DOUBLE parameter and cannot have conditional" in str(rejected(mutate))


def test_conditional_ids_may_repeat_only_under_disjoint_conditions():
    def overlapping(d):
        specs = params(d)[1]["conditionalParameterSpecs"]
        specs.append({**specs[0], "parentCategoricalValues": {"values": ["sgd", "adam"]}})

    err = rejected(overlapping)
    assert "conditions on the same child must be disjoint" in str(err)

    def disjoint(d):
        specs = params(d)[1]["conditionalParameterSpecs"]
        specs.append({**specs[0], "parentCategoricalValues": {"values": ["adam"]}})

    data = yaml.safe_load(YAML)
    disjoint(data)
    tuning_job_from_dict(data)  # accepted


def test_grid_search_needs_enumerable_parameters():
    err = rejected(lambda d: d["studySpec"].update(algorithm="GRID_SEARCH"))
    assert err.path == "studySpec.parameters[0]"
    assert "GRID_SEARCH" in str(err) and "'lr' is DOUBLE" in str(err)


def test_convex_stopping_names_a_real_learning_rate_parameter():
    def mutate(d):
        del d["studySpec"]["medianAutomatedStoppingSpec"]
        d["studySpec"]["convexAutomatedStoppingSpec"] = {"learningRateParameterName": "eta"}

    assert rejected(mutate).path.endswith("learningRateParameterName")
    data = yaml.safe_load(YAML)
    del data["studySpec"]["medianAutomatedStoppingSpec"]
    data["studySpec"]["convexAutomatedStoppingSpec"] = {"learningRateParameterName": "lr"}
    tuning_job_from_dict(data)


def test_two_stopping_rules_are_refused():
    err = rejected(lambda d: d["studySpec"].update(decayCurveStoppingSpec={}))
    assert "set only one of" in str(err)
