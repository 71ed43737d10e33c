"""The console's Experiments pages in a real headless Chromium, over an experiment the real
aiplatform SDK wrote into the local service from a team's script under `vtp local env`
(`aiplatform.init(experiment=...)`, `start_run`, `log_params`, `log_metrics`,
`log_time_series_metrics`) plus a pipeline run submitted into it
(`PipelineJob.submit(experiment=...)`): the list names the experiment and its runs, the
experiment's page compares the runs' parameters and metrics side by side, marks each metric's
best run, sorts by a column, draws each time series with one line per run, and links the
pipeline run to its page.

Skipped only where no Chromium is installed (`.ci/run` installs it)."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud.aiplatform_v1 import PipelineState

from tests.browser import browser as browser  # fixture
from tests.browser import require_chromium, watched_page
from tests.fixtures import LocalService, wait_until
from tests.pipelines.tiny_pipeline import pipeline_client, wait_for_pipeline
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from vtp.local.console import console_url

pytestmark = pytest.mark.slow
require_chromium()

EXPERIMENT = "compare-lr"
RUNS = {"run-fast": 0.1, "run-slow": 0.01}
PIPELINE_RUN = "tiny-run"


SCRIPT = """
import json
from google.cloud import aiplatform

with open("settings.json") as settings:
    experiment, runs, pipeline_run, template = json.load(settings)
aiplatform.init(project="local", location="us-central1")
board = aiplatform.Tensorboard.create(display_name="compare-board")
aiplatform.init(experiment=experiment, experiment_tensorboard=board)
for name, lr in runs.items():
    aiplatform.start_run(name)
    aiplatform.log_params({"lr": lr, "optimizer": "sgd"})
    for step in range(4):
        aiplatform.log_time_series_metrics({"loss": lr * 10 / (step + 1)})
    aiplatform.log_metrics({"accuracy": 0.8 + lr, "loss": lr * 2})
    aiplatform.end_run()
job = aiplatform.PipelineJob(
    display_name="tiny",
    template_path=template,
    pipeline_root="gs://experiments/root",
    parameter_values={"marker_uri": "gs://experiments/marker"},
    job_id=pipeline_run,
    enable_caching=False,
)
job.submit(experiment=experiment)
"""
"""A team's script, run from a folder of its own under `vtp local env` (as a user runs it: the
SDK's Cloud Storage and Resource Manager checks before a submit reach the service)."""


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, tiny_yaml: Path) -> Iterator[LocalService]:
    """A service holding one experiment: two SDK runs with time series, and a pipeline run."""
    service = LocalService(tmp_path_factory.mktemp("experiments") / "state").start()
    try:
        folder = tmp_path_factory.mktemp("team")
        (folder / "experiment.py").write_text(SCRIPT)
        settings = [EXPERIMENT, RUNS, PIPELINE_RUN, str(tiny_yaml)]
        (folder / "settings.json").write_text(json.dumps(settings))
        service.run_user_program(folder, "experiment.py")
        # Not the SDK's `job.wait()`, which checks every 5 s: the run is seen as it ends.
        name = f"{service.parent}/pipelineJobs/{PIPELINE_RUN}"
        ended = wait_for_pipeline(pipeline_client(service.url), name, timeout=120)
        assert ended.state == PipelineState.PIPELINE_STATE_SUCCEEDED, ended.error
        yield service
    finally:
        service.stop()


def _column(page, column: str) -> dict[str, str]:
    """The text of one column of the comparison, by run (the SDK's runs)."""
    cells = page.eval_on_selector_all(
        f"#runs-table tr[data-run] td[data-column='{column}']",
        "cells => cells.map(c => [c.parentElement.dataset.run, c.innerText.trim()])",
    )
    return {run: text for run, text in cells if run in RUNS}


def test_the_experiments_page_compares_two_runs_side_by_side(browser, service) -> None:
    with watched_page(browser) as page:
        page.goto(console_url(service.url, service.token))
        page.click("nav a[data-page='experiments']")
        page.wait_for_selector(f"a[href='#/experiments/{EXPERIMENT}']")
        row = page.inner_text(f"tr:has(a[href='#/experiments/{EXPERIMENT}'])")
        assert "\t3\t" in row, row  # the SDK's two runs and the pipeline run
        page.click(f"a[href='#/experiments/{EXPERIMENT}']")
        page.wait_for_selector("#runs-table tr[data-run='run-slow']")
        assert _column(page, "param:lr") == {"run-fast": "0.1", "run-slow": "0.01"}
        assert _column(page, "param:optimizer") == {"run-fast": "sgd", "run-slow": "sgd"}
        assert _column(page, "metric:accuracy") == {"run-fast": "0.9 ★", "run-slow": "0.81"}
        best = page.eval_on_selector_all(
            "#runs-table td.best",
            "cells => cells.map(c => [c.dataset.column, c.parentElement.dataset.run])",
        )
        assert sorted(best) == [["metric:accuracy", "run-fast"], ["metric:loss", "run-slow"]]
        assert _column(page, "state") == {"run-fast": "COMPLETE", "run-slow": "COMPLETE"}


@pytest.mark.parametrize(
    "clicks, order", [(1, ["run-slow", "run-fast"]), (2, ["run-fast", "run-slow"])]
)
def test_a_column_sorts_the_runs(browser, service, clicks: int, order: list[str]) -> None:
    with watched_page(browser) as page:
        page.goto(console_url(service.url, service.token, f"/experiments/{EXPERIMENT}"))
        page.wait_for_selector("#runs-table tr[data-run='run-slow']")
        for _ in range(clicks):
            page.click("#runs-table th[data-column='param:lr']")
        runs = lambda: page.eval_on_selector_all(  # noqa: E731
            "#runs-table tr[data-run]", "rows => rows.map(r => r.dataset.run)"
        )
        wait_until(lambda: runs()[:2] == order, 10, f"the runs in the order {order}")


def test_time_series_draw_one_line_per_run_and_the_pipeline_run_links_to_its_page(
    browser, service
) -> None:
    with watched_page(browser) as page:
        page.goto(console_url(service.url, service.token, f"/experiments/{EXPERIMENT}"))
        chart = page.wait_for_selector(".series-chart[data-metric='loss'][data-lines]")
        assert chart.get_attribute("data-lines") == "2"
        assert page.query_selector(".series-chart[data-metric='loss'] canvas") is not None
        page.click(f"#runs-table a.pipeline-run[href='#/runs/{PIPELINE_RUN}']")
        page.wait_for_selector("svg.dag g.node")
