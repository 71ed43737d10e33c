"""The pytest plugin `bench/aiplatform_system.py` loads into the aiplatform SDK's system tests
(`-p aiplatform_system_plugin`): the harness's only addition to the suite, which is otherwise run
as vendored, test bodies unchanged.

It marks as skipped, with the reason, each test that needs something no machine here can
have: a service that only Google runs (its hosted foundation models), or data that only Google
holds (BigQuery's public data sets, Google-owned sample buckets the test reads in place). A test
not listed here runs and counts, pass or fail: this list is not a way to hide failures, and each
entry says why the test cannot run anywhere but on Google's cloud.
"""

import pytest

CANNOT_RUN: dict[str, str] = {
    "test_language_models.py": "Google's hosted language models (publishers/google/models)",
    "test_vision_models.py": "Google's hosted vision models (publishers/google/models)",
}
"""Test file name, or `file::test` node suffix, -> why it cannot run here."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the tests CANNOT_RUN names, saying why."""
    for item in items:
        file = item.path.name
        reason = CANNOT_RUN.get(file) or CANNOT_RUN.get(f"{file}::{item.name}")
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"cannot run here: {reason}"))
