"""The console's "Pipeline runs" page lists `vtp run`s, in a real headless Chromium (Debian's
`chromium`, driven by Playwright, as tests/vtp/local/test_console.py does): one run that `vtp
run` served itself, then one submitted to the `vtp local serve` that took the same state
directory afterwards; and the console link a run's summary ends with opens that run's graph.

Skipped only where no Chromium is installed (`.ci/run` installs it)."""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import browser as browser  # fixture
from tests.browser import require_chromium, watched_page
from tests.fixtures import REPO
from tests.vtp.cli.run_helpers import Served, serve, vtp
from vtp.local.console import console_url

pytestmark = pytest.mark.slow
require_chromium()

TINY = "tests/pipelines/tiny_pipeline.py:tiny_pipeline"


def run_tiny(state: Path, marker: str) -> tuple[str, str]:
    """`vtp run` of the tiny pipeline in `state`: the job's ID and the summary's console line."""
    marker_uri = f"marker_uri=gs://m/{marker}"
    result = vtp(REPO, "run", TINY, "--param", marker_uri, "--state-dir", str(state))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    job = re.search(r"pipeline job: \S+/pipelineJobs/(\S+)", result.stdout)
    console = re.search(r"  console: (.*)", result.stdout)
    assert job and console, result.stdout
    return job[1], console[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict[str, str]]]:
    """A serve of a state directory holding a run `vtp run` served itself ("own") and one it
    submitted to the serve ("served"); the runs' IDs and summary console lines."""
    state = tmp_path_factory.mktemp("console-runs") / "state"
    own, own_console = run_tiny(state, "same")
    with serve(REPO, state) as served:
        shared, shared_console = run_tiny(state, "same")
        yield served, {"own": own, "served": shared, "own_console": own_console,
                       "served_console": shared_console}  # fmt: skip


@pytest.fixture
def page(browser):
    """A fresh page that fails the test on any console error or uncaught exception."""
    with watched_page(browser) as page:
        yield page


def test_the_pipeline_runs_page_lists_both_runs(page, runs) -> None:
    served, ids = runs
    assert ids["own_console"].startswith("run `vtp local serve --state-dir ")  # its service ended
    page.goto(console_url(served.url, served.token))
    for run in (ids["own"], ids["served"]):
        page.wait_for_selector(f"a[href='#/runs/{run}']")


def test_the_summarys_console_link_opens_the_runs_graph(page, runs) -> None:
    served, ids = runs
    link = ids["served_console"]
    # A one-time code rides in the fragment (never sent to a server), and leaves the address.
    assert re.fullmatch(rf"{served.url}/console/#code=[\w.-]+&page=/runs/{ids['served']}", link)
    page.goto(link)
    assert page.url == f"{served.url}/console/#/runs/{ids['served']}"
    page.wait_for_selector("svg.dag g.node")
    nodes = page.eval_on_selector_all(
        "svg.dag g.node", "nodes => nodes.map(n => [n.dataset.task, n.dataset.state])"
    )
    # Both tasks ran with the same inputs in the first run: cache hits (a SKIPPED task whose
    # execution is CACHED, as on Vertex) show as cached. (With another marker_uri neither is:
    # `add` gets it inside its f-string input `started_uri`.)
    assert dict(nodes) == {"add": "CACHED", "record": "CACHED"}
