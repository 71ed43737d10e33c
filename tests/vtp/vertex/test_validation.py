"""validate_custom_job_spec / validate_custom_job on REST-form dicts (shared with tuning)."""

import copy

import pytest

from tests.fixtures import set_at
from vtp.vertex.protodict import SpecError
from vtp.vertex.validation import (
    is_valid_label_key,
    is_valid_label_value,
    validate_custom_job,
    validate_custom_job_spec,
)

POOL = {
    "machineSpec": {
        "machineType": "n1-standard-8",
        "acceleratorType": "NVIDIA_TESLA_T4",
        "acceleratorCount": "2",
    },
    "replicaCount": "1",
    "containerSpec": {"imageUri": "img", "args": ["--x"], "env": [{"name": "A", "value": "1"}]},
}
PACKAGE_POOL = {
    "machineSpec": {"machineType": "n1-standard-4"},
    "replicaCount": 4,
    "pythonPackageSpec": {
        "executorImageUri": "exe",
        "packageUris": ["gs://b/t.tar.gz"],
        "pythonModule": "trainer.task",
    },
}
SPEC = {
    "workerPoolSpecs": [POOL, PACKAGE_POOL, {}, PACKAGE_POOL],
    "scheduling": {"timeout": "3600s", "strategy": "FLEX_START", "maxWaitDuration": "1800.5s"},
    "baseOutputDirectory": {"outputUriPrefix": "gs://b/out"},
    "network": "projects/1/global/networks/n",
    "serviceAccount": "sa@p.iam.gserviceaccount.com",
}


def test_a_full_valid_spec_passes() -> None:
    validate_custom_job_spec(copy.deepcopy(SPEC), "trialJobSpec")
    validate_custom_job({"displayName": "j", "labels": {"ténant": "équipe-1"}, "jobSpec": SPEC})


def broken(path: str, value) -> dict:
    """SPEC with the field at `path` set to `value` (None deletes it)."""
    spec = copy.deepcopy(SPEC)
    set_at(spec, path, value)
    return spec


AT_THE_FIELD = {
    "workerPoolSpecs": [([POOL] * 5, "4 roles"), ([], "must not be empty")],
    "workerPoolSpecs[0]": [({}, "cannot be empty")],
    "workerPoolSpecs[0].replicaCount": [(2, "single primary")],
    "workerPoolSpecs[1].replicaCount": [(0, "at least 1")],
    "workerPoolSpecs[0].machineSpec.acceleratorCount": [(0, "at least 1")],
    "workerPoolSpecs[0].machineSpec.machineType": [(None, "missing")],
    "workerPoolSpecs[0].containerSpec.imageUri": [(None, "missing")],
    "workerPoolSpecs[1].pythonPackageSpec.packageUris": [([], "no package")],
    "workerPoolSpecs[1].pythonPackageSpec.pythonModule": [(None, "missing")],
    "workerPoolSpecs[0].reductionServerSpec": [
        ({"replicaCount": 2}, "Reduction Server is worker pool 2")
    ],
    "scheduling.timeout": [("0s", "positive duration"), ("2h", "'3600s'")],
    "scheduling.strategy": [("CHEAP", "FLEX_START")],
    "baseOutputDirectory.outputUriPrefix": [("/tmp", "gs://")],
    "network": [("default", "projects/PROJECT_NUMBER")],
    "persistentResourceId": [("-pool", "lowercase")],
}
"""Per field, (value, problem): a value there reported under the field itself."""

ELSEWHERE = [
    (
        "workerPoolSpecs[0].machineSpec.acceleratorType",
        None,
        "workerPoolSpecs[0].machineSpec.acceleratorCount",
        "needs an accelerator type",
    ),
    (
        "workerPoolSpecs[0].machineSpec.machineType",
        "a2-highgpu-1g",
        "workerPoolSpecs[0].machineSpec",
        "n1 machine types",
    ),
    (
        "workerPoolSpecs[1].containerSpec",
        {"imageUri": "i"},
        "workerPoolSpecs[1]",
        "set only one of",
    ),
    (
        "workerPoolSpecs[0].containerSpec.env",
        [{"nam": "A"}],
        "workerPoolSpecs[0].containerSpec.env[0].nam",
        "did you mean 'name'",
    ),
    ("scheduling.strategy", "SPOT", "scheduling.maxWaitDuration", "only FLEX_START"),
]
"""(path, value, where, problem): a value at `path` reported under `where`."""


@pytest.mark.parametrize(
    ("path", "value", "where", "problem"),
    [
        (path, value, path, problem)
        for path, cases in AT_THE_FIELD.items()
        for value, problem in cases
    ]
    + ELSEWHERE,
)
def test_problems_are_reported_under_the_callers_name(path, value, where, problem) -> None:
    with pytest.raises(SpecError) as caught:
        validate_custom_job_spec(broken(path, value), "trialJobSpec")
    assert caught.value.path == f"trialJobSpec.{where}"
    assert problem in str(caught.value)


def test_enum_numbers_are_read_like_names() -> None:
    spec = broken("workerPoolSpecs[0].machineSpec.acceleratorType", 5)  # NVIDIA_TESLA_T4
    validate_custom_job_spec(spec, "")
    with pytest.raises(SpecError, match="a2 machine types"):
        validate_custom_job_spec(
            broken("workerPoolSpecs[0].machineSpec.acceleratorType", 8), ""
        )  # NVIDIA_TESLA_A100


def test_job_level_rules() -> None:
    for job, problem in [
        ({"jobSpec": SPEC}, "displayName: missing"),
        ({"displayName": "j", "labels": {"a": "B"}, "jobSpec": SPEC}, "invalid value 'B'"),
        ({"displayName": "j", "labels": {"9a": "b"}, "jobSpec": SPEC}, "invalid label key '9a'"),
        (
            {"displayName": "j", "labels": {f"k{i}": "v" for i in range(65)}, "jobSpec": SPEC},
            "65 labels",
        ),
        ({"displayName": "j", "state": "JOB_STATE_RUNNING", "jobSpec": SPEC}, "output-only"),
        ({"displayName": "j"}, "jobSpec: missing"),
    ]:
        with pytest.raises(SpecError, match=problem):
            validate_custom_job(job)


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("env", True, True),
        ("cost-center_1", True, True),
        ("1st", False, True),
        ("", False, True),
        ("Team", False, False),
        ("a.b", False, False),
        ("x" * 64, False, False),
        ("日本", True, True),
    ],
)
def test_label_rules_match_gcloud(text: str, key: bool, value: bool) -> None:
    assert (is_valid_label_key(text), is_valid_label_value(text)) == (key, value)
