"""The pytest plugin `bench/aiplatform_system.py` loads into the aiplatform SDK's system tests
(`-p aiplatform_system_plugin`): the harness's only addition to the suite, which is otherwise run
as vendored, test bodies unchanged.

It marks as skipped, with the reason, each test that needs something no machine here can
have: a service that only Google runs (its hosted foundation models), or data that only Google
holds (BigQuery's public data sets, Google-owned sample buckets the test reads in place). A test
not listed here runs and counts, pass or fail: this list is not a way to hide failures, and each
entry says why the test cannot run anywhere but on Google's cloud.

It also skips, under PACKAGE_CONFLICTS, the tests whose job cannot install what it asks for with
pip, naming the conflict as pip reports it: test_custom_job.py's two autolog tests (outside
Google's CI, where `KOKORO_GIT_COMMIT` is unset, their jobs install the SDK's `autologging` extra
from the package index, which this machine reaches; what they get there does not install).

It also makes `google.cloud.aiplatform.tests.unit.aiplatform.constants` importable, as
test_persistent_resource.py imports it: in Google's own build the SDK's `tests/` folder sits
inside the package, while an installed SDK has none. The SDK's `tests/unit/__init__.py` and
`tests/unit/aiplatform/constants.py` are vendored unchanged next to the system tests (NOTICE),
and the vendored folder is added to the package's search path, so the suite's `tests` package is
also `google.cloud.aiplatform.tests`.
"""

from pathlib import Path

import google.cloud.aiplatform
import pytest

SUITE = Path(__file__).resolve().parent / "third_party" / "aiplatform_system"
if str(SUITE) not in google.cloud.aiplatform.__path__:
    google.cloud.aiplatform.__path__.append(str(SUITE))

_BIGQUERY = (
    "BigQuery (its fixture creates a BigQuery dataset at bigquery.googleapis.com, which no "
    "machine here reaches: the client waits without a timeout until pytest-timeout ends it)"
)

_GOOGLE_MODEL = "a model that exists only in Google's test project (a fixed resource ID)"
_GITHUB = (
    "its job pip-installs the SDK from GitHub (`git+https://github.com/...@main`), which no "
    "machine here can reach"
)

CANNOT_RUN: dict[str, str] = {
    "test_language_models.py": "Google's hosted language models (publishers/google/models)",
    "test_vision_models.py": "Google's hosted vision models (publishers/google/models)",
    "test_telemetry.py": "Google's hosted Gemini models (publishers/google/models)",
    "test_model_interactions.py": "an endpoint that exists only in Google's test project",
    "test_batch_prediction.py": _GOOGLE_MODEL,
    "test_private_endpoint.py": _GOOGLE_MODEL,
    "test_model_evaluation.py": _GOOGLE_MODEL,
    "test_model_monitoring.py": f"{_GOOGLE_MODEL}, and BigQuery tables of Google's",
    "test_project_id_inference.py": _GITHUB,
    "test_dataset.py::test_create_tabular_dataset_from_dataframe": _BIGQUERY,
    "test_dataset.py::test_create_tabular_dataset_from_dataframe_with_provided_schema": _BIGQUERY,
    "test_dataset.py::test_export_data": (
        "Google's permanent text dataset in its test project (datasets/6203215905493614592)"
    ),
    "test_dataset.py::test_export_data_for_custom_training": (
        "Google's permanent flowers dataset in its test project (datasets/1997950066622464000)"
    ),
    "test_dataset.py::test_create_and_import_image_dataset": (
        "Google's sample images, imported in place from gs://cloud-samples-data-us-central1"
    ),
}
"""Test file name, or `file::test` node suffix, -> why it cannot run here."""

_AUTOLOG = (
    "its job pip-installs google-cloud-aiplatform[autologging]==1.165.1, whose extra caps mlflow "
    "at <=2.16.0 (Python < 3.13): mlflow 2.16.0 needs protobuf<6 (through mlflow-skinny) and "
    "google-api-core 2.44.0 needs protobuf>=6.33.5 (pip: ResolutionImpossible for the two); "
    "pip >= 24.1 (what the job's `pip install --upgrade pip` gives) backtracks through mlflow's "
    "releases past the test's 900 s (pip 26.3 in an empty virtual environment: no answer after "
    "10 minutes either), and pip < 24.1 takes mlflow 1.27.0, which declares protobuf>=3.12.0 "
    "uncapped and fails to import under protobuf 6 (cannot import name 'service' from "
    "'google.protobuf')"
)
PACKAGE_CONFLICTS: dict[str, str] = {
    "test_custom_job.py::test_from_local_script_enable_autolog_prebuilt_container": _AUTOLOG,
    "test_custom_job.py::test_from_local_script_enable_autolog_custom_container": _AUTOLOG,
}
"""`file::test` -> the package conflict that keeps its job's requirements from installing."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the tests CANNOT_RUN and PACKAGE_CONFLICTS name, saying why."""
    for item in items:
        file = item.path.name
        reason = CANNOT_RUN.get(file) or CANNOT_RUN.get(f"{file}::{item.name}")
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"cannot run here: {reason}"))
        elif conflict := PACKAGE_CONFLICTS.get(f"{file}::{item.name}"):
            item.add_marker(pytest.mark.skip(reason=f"package conflict: {conflict}"))
