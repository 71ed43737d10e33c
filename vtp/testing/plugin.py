"""The pytest plugin (entry point `pytest11`, so installing the project is enough).

    def test_train(local_vertex):               # the fixture: this test runs against the service
        job = aiplatform.CustomJob(...)         # the team's code, unchanged
        job.run()
        assert local_vertex.job_states() == ["JOB_STATE_SUCCEEDED"]

    pytestmark = pytest.mark.local_vertex       # every test of a module, fixture or not
    @pytest.mark.local_vertex(timeout=300)      # helpers wait up to 300 s in this test

The first test that asks starts one service for the session (or for each pytest-xdist worker),
on free ports, with its state under pytest's temporary directory; the session's end stops it.
Tests that ask for nothing start nothing, and this module imports nothing heavy until one asks.
"""

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from vtp.testing import DEFAULT_TIMEOUT

if TYPE_CHECKING:  # both import the API clients, which take seconds: only once a test asks
    from vtp.testing.session import Session
    from vtp.testing.vertex import LocalVertex

MARKER = "local_vertex"


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker, so `--strict-markers` suites accept it."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(timeout={DEFAULT_TIMEOUT:g}): the test runs against a local Vertex service "
        "(vtp.testing); timeout is how long its helpers wait",
    )


@pytest.fixture(scope="session")
def _vtp_local_session(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator["Session"]:
    """The session's service (started by the first test that uses it), stopped at the end."""
    from vtp.testing.session import Session

    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    session = Session(tmp_path_factory.mktemp("local-vertex"), request.config.rootpath, worker)
    yield session
    session.close()


@pytest.fixture
def local_vertex(
    request: pytest.FixtureRequest, _vtp_local_session: "Session"
) -> Iterator["LocalVertex"]:
    """The local Vertex service for this test, in a project of its own: the aiplatform SDK,
    Cloud Storage clients, gcloud and gsutil reach it, here and in processes the test starts."""
    marker = request.node.get_closest_marker(MARKER)
    timeout = marker.kwargs.get("timeout", DEFAULT_TIMEOUT) if marker else DEFAULT_TIMEOUT
    with _vtp_local_session.test(timeout) as vertex:
        yield vertex
        call = getattr(request.node, "_vtp_call_report", None)
        unused = vertex.unused_faults() if call is None or call.passed else []
    if unused:  # an error of this test at teardown, naming the fault
        pytest.fail(f"local_vertex: {'; '.join(unused)}", pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Keep the call phase's report on the test, so teardown can tell whether it passed (a
    failed test's unused faults are a consequence, not news)."""
    outcome = yield
    if call.when == "call":
        item._vtp_call_report = outcome.get_result()  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _vtp_local_marker(request: pytest.FixtureRequest) -> None:
    """A test marked `local_vertex` (or in a marked module) gets the fixture unasked."""
    if request.node.get_closest_marker(MARKER) and MARKER not in request.fixturenames:
        request.getfixturevalue(MARKER)
