"""The console in a real headless Chromium (Debian's `chromium`, driven by Playwright) against a
local service holding a finished pipeline run, a running job and a finished tuning job: every
page loads without console errors, the DAG shows each task and its state, the trials chart has
one point per trial, a trial links to its job and log, a running job's log grows on the page, and
Cancel on the page cancels. (A run's loops, conditions and failures: test_console_debugging.py.)
(What signs the console in, and what cannot: test_security_console.py.)

Skipped only where no Chromium is installed (`.ci/run` installs it)."""

import sys
from pathlib import Path

import pytest

from tests.browser import browser as browser  # fixture
from tests.browser import console_page, require_chromium
from tests.fixtures import LocalService, wait_for_state, wait_until
from tests.pipelines.tiny_pipeline import pipeline_client, tiny_job
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from tests.vtp.local.conftest import custom_job
from tests.vtp.local.tuning.test_service_tuning import run as run_study
from tests.vtp.local.tuning.test_service_tuning import tuning_job

pytestmark = pytest.mark.slow
require_chromium()

TICKER = (
    "import itertools, sys, time\n"
    "for i in itertools.count():\n"
    "    print(f'tick {i}', flush=True)\n"
    "    time.sleep(0.2)\n"
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, tiny_yaml: Path):
    """A service with a finished pipeline run, a finished tuning job and a running job."""
    folder = tmp_path_factory.mktemp("console")
    with LocalService(folder / "state") as service:
        pipelines = pipeline_client(service.url)
        pipeline_run = pipelines.create_pipeline_job(
            parent=service.parent,
            pipeline_job=tiny_job(tiny_yaml, "gs://console/root", marker_uri="gs://console/marker"),
        )
        # Four grid trials; the median rule stops the one that lags (x=1.9) early.
        xs = {"parameterId": "x", "discreteValueSpec": {"values": [0.25, 0.3, 0.35, 1.9]}}
        study_job = tuning_job(
            folder, [xs], "--steps=20", "--sleep=0.5", "--slow-above=1", max_trials=4,
            algorithm="GRID_SEARCH", study={"medianAutomatedStoppingSpec": {}},
        )  # fmt: skip
        study = run_study(service, study_job, timeout=180)
        wait_until(
            lambda: (
                pipelines.get_pipeline_job(name=pipeline_run.name).state.name
                == "PIPELINE_STATE_SUCCEEDED"
            ),
            180,
            "the pipeline run",
        )
        pool = {
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": "1",
            "containerSpec": {"imageUri": "python:3.11", "command": [sys.executable, "-c", TICKER]},
        }
        job = service.client().create_custom_job(parent=service.parent, custom_job=custom_job(pool))
        service.names = {"run": pipeline_run.name, "study": study.name, "job": job.name}
        yield service


@pytest.fixture
def page(browser, service):
    """A signed-in page that fails the test on any console error or uncaught exception."""
    with console_page(browser, service) as page:
        assert page.url == f"{service.url}/console/", "the token leaves the address at once"
        yield page


def _id(name: str) -> str:
    return name.rsplit("/", 1)[1]


def test_the_run_shows_as_a_graph_of_its_tasks_with_their_states(page, service):
    page.wait_for_selector(f"a[href='#/runs/{_id(service.names['run'])}']").click()
    page.wait_for_selector("svg.dag g.node")
    nodes = page.eval_on_selector_all(
        "svg.dag g.node", "nodes => nodes.map(n => [n.dataset.task, n.dataset.state])"
    )
    assert sorted(nodes) == [["add", "SUCCEEDED"], ["record", "SUCCEEDED"]]
    page.click("svg.dag g.node[data-task='add']")
    panel = page.wait_for_selector("#task-panel")
    assert "Output parameters" in panel.inner_text()  # add's sum


def test_the_trials_chart_has_one_point_per_trial_and_marks_the_best_and_the_stopped(page, service):
    page.click("nav a[data-page='tuning']")
    page.wait_for_selector(f"a[href='#/tuning/{_id(service.names['study'])}']").click()
    chart = page.wait_for_selector("#trials-chart[data-points]")
    trials = page.eval_on_selector_all("tr[data-trial]", "rows => rows.length")
    assert trials == 4 and chart.get_attribute("data-points") == "4"
    assert page.eval_on_selector_all("tr.best", "rows => rows.length") == 1
    stopped = page.eval_on_selector_all(
        "tr[data-trial]", "rows => rows.filter(r => r.innerText.includes('stopped early')).length"
    )
    assert stopped == 1, page.inner_text("main")
    assert page.query_selector("#trials-chart canvas") is not None


def test_a_trials_link_opens_its_job_and_log(page, service):
    page.click("nav a[data-page='tuning']")
    page.wait_for_selector(f"a[href='#/tuning/{_id(service.names['study'])}']").click()
    link = page.wait_for_selector("tr[data-trial] a.trial-job")
    job_id = link.get_attribute("href").rsplit("/", 1)[1]
    link.click()
    page.wait_for_selector("#log")
    assert job_id in page.inner_text("h1")
    wait_until(lambda: "(nothing yet)" not in page.inner_text("#log"), 30, "the trial's log")


def test_a_running_jobs_log_follows_and_cancel_on_the_page_cancels_it(page, service):
    name = service.names["job"]
    page.click("nav a[data-page='jobs']")
    page.wait_for_selector(f"a[href='#/jobs/{_id(name)}']").click()
    # (Polled from here: the console's Content-Security-Policy forbids the string evaluation
    # that wait_for_function would use.)
    wait_until(lambda: "tick 1" in page.inner_text("#log"), 60, "the job's first lines")
    first = page.inner_text("#log")
    # The page refreshes by itself: the log grows while the job runs.
    wait_until(lambda: len(page.inner_text("#log")) > len(first), 60, "more log lines")
    assert "RUNNING" in page.inner_text("main table:nth-of-type(2)")
    page.click("#cancel")
    ended = wait_for_state(service.client(), name)
    assert ended.state.name == "JOB_STATE_CANCELLED"


def test_models_and_endpoints_load(page):
    page.click("nav a[data-page='models']")
    page.wait_for_selector("text=Endpoints")
