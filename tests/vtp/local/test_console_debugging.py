"""The console answers "what happened in this run, and why did it fail?" (issue #31), in a real
headless Chromium (Debian's `chromium`, driven by Playwright) against a real local service.

One run of a pipeline with a two-iteration ParallelFor, a condition that is false (its branch is
skipped), a task that fails after printing a few lines, and a pipeline parameter left to its
default: the graph shows the loop with one group per iteration (its item on it), the skipped
tasks as skipped, the failed task's panel its error and last lines, and the inputs as used,
defaults resolved.

Skipped only where no Chromium is installed (`.ci/run` installs it)."""

import pytest

from tests.browser import browser as browser  # fixture
from tests.browser import console_page, require_chromium
from tests.fixtures import LocalService, wait_until
from tests.pipelines.debugging_pipeline import debugging_pipeline
from tests.pipelines.tiny_pipeline import (
    compile_to,
    pipeline_client,
    tiny_job,
    wait_for_pipeline,
)

pytestmark = pytest.mark.slow
require_chromium()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory):
    """A service holding one ended (failed) run of the debugging pipeline."""
    folder = tmp_path_factory.mktemp("console-debugging")
    template = compile_to(folder / "debugging.yaml", debugging_pipeline)
    with LocalService(folder / "state") as service:
        pipelines = pipeline_client(service.url)
        run = pipelines.create_pipeline_job(
            parent=service.parent, pipeline_job=tiny_job(template, "gs://debugging/root")
        )
        ended = wait_for_pipeline(pipelines, run.name, timeout=180)
        assert ended.state.name == "PIPELINE_STATE_FAILED", ended.error
        service.run_id = run.name.rsplit("/", 1)[1]
        yield service


@pytest.fixture
def page(browser, service):
    """The run's page, signed in; fails the test on any console error."""
    with console_page(browser, service, f"/runs/{service.run_id}") as page:
        page.wait_for_selector("svg.dag g.node")
        yield page


def _states(page, selector: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        selector, "nodes => nodes.map(n => [n.dataset.path, n.dataset.state])"
    )


def _open(page, path: str) -> str:
    """Click the task at `path` in the graph; its panel's text."""
    page.click(f"svg.dag [data-path='{path}'] > rect")
    page.wait_for_selector(f"#task-panel[data-path='{path}']")
    return page.inner_text("#task-panel")


def test_the_loop_shows_one_group_per_iteration_with_its_item(page) -> None:
    iterations = page.eval_on_selector_all(
        "svg.dag g.group[data-kind='iteration']",
        "groups => groups.map(g => [g.dataset.path, g.dataset.state, g.textContent])",
    )
    assert [(path, state) for path, state, _ in iterations] == [
        ("for-loop-1/iteration-0", "SUCCEEDED"),
        ("for-loop-1/iteration-1", "SUCCEEDED"),
    ]
    assert "item 2" in iterations[0][2] and "item 3" in iterations[1][2]
    squares = _states(page, "svg.dag g.group[data-kind='iteration'] g.node")
    assert squares == [
        ["for-loop-1/iteration-0/square", "SUCCEEDED"],
        ["for-loop-1/iteration-1/square", "SUCCEEDED"],
    ]


def test_the_false_conditions_tasks_show_skipped(page) -> None:
    (condition,) = page.eval_on_selector_all(
        "svg.dag g.group[data-kind='condition']",
        "groups => groups.map(g => [g.dataset.state, g.querySelector('text').textContent])",
    )
    assert condition[0] == "SKIPPED" and "condition false" in condition[1]
    inside = _states(page, "svg.dag g.group[data-kind='condition'] g.node")
    assert inside == [["condition-2/publish", "SKIPPED"]]
    assert "skipped" in page.text_content("svg.dag g.group[data-kind='condition'] g.node")


def test_the_failed_tasks_panel_has_its_error_and_last_lines(page) -> None:
    assert _states(page, "svg.dag g.node[data-task='explode']") == [["explode", "FAILED"]]
    _open(page, "explode")
    assert "the disk is full" in page.inner_text("#task-error")
    tail = page.inner_text("#task-tail")
    assert "shard 3 of 3 is missing" in tail and "RuntimeError: the disk is full" in tail


def test_inputs_show_the_values_used_defaults_resolved(page) -> None:
    panel = _open(page, "above")
    rows = page.eval_on_selector_all(
        "#task-panel tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))"
    )
    assert ["threshold", "100.5", "pipeline parameter threshold (its default)"] in rows, panel
    assert ["values", "[4,9]", "output square-Output of for-loop-1"] in rows, panel
    _open(page, "for-loop-1/iteration-1/square")
    rows = page.eval_on_selector_all(
        "#task-panel tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))"
    )
    assert ["power", "2", "the component's default"] in rows
    assert ["x", "3", "from items-loop-item"] in rows
    page.click("#run-parameters summary")
    wait_until(lambda: "100.5" in page.inner_text("#run-parameters"), 10, "the run's parameters")
    first = page.inner_text("#status")
    wait_until(lambda: page.inner_text("#status") != first, 30, "a refresh")
    assert page.eval_on_selector("#run-parameters", "d => d.open"), "it stays open"


def test_a_task_panel_survives_the_pages_refresh(page) -> None:
    _open(page, "explode")
    first = page.inner_text("#status")
    wait_until(lambda: page.inner_text("#status") != first, 30, "a refresh")
    assert "the disk is full" in page.inner_text("#task-error")


def test_html_and_markdown_artifacts_are_rendered_with_nothing_active(page) -> None:
    _open(page, "report")
    page.wait_for_selector(".rendered[data-kind='markdown'] h1")
    markdown = page.inner_text(".rendered[data-kind='markdown']")
    assert "Results" in markdown and "accuracy: 0.9" in markdown
    assert page.eval_on_selector_all(".rendered[data-kind='markdown'] td", "t => t.length") == 2
    page.wait_for_selector(".rendered[data-kind='html'] h2")
    assert "0.9 overall" in page.inner_text(".rendered[data-kind='html']")
    active = page.eval_on_selector_all(
        ".rendered *",
        "nodes => nodes.filter(n => n.attributes.length || "
        "['SCRIPT', 'IMG', 'A', 'IFRAME'].includes(n.tagName)).length",
    )
    assert active == 0
    assert page.title() == "vtp local console"
