"""The console's Markdown renderer in a real headless Chromium: linear in what it is given.

A Markdown artifact is anyone's text (a task writes it), rendered in the user's console tab. The
renderer's table-rule pattern used to try every split of a run of spaces, cubic in the line: a
6 KB artifact froze the tab for 43 s, a 1 MiB one (the render limit) for hours.

The renderer runs in the console's own page, through the DevTools protocol's `Runtime.evaluate`
with a `timeout`: Chromium ends a script still running after it with an exception, so a renderer
that hangs fails the test instead of hanging it. The timeout is a generous guard against a hang
(a linear renderer takes milliseconds), not a measure of speed.

Skipped only where no Chromium is installed (`.ci/run` installs it)."""

import json
from typing import Any

import pytest

from tests.browser import browser as browser  # fixture
from tests.browser import console_page, require_chromium

require_chromium()

HANG_GUARD_MS = 20_000
"""When Chromium ends a render still running: generous (a linear render takes milliseconds)."""

PATHOLOGICAL = {
    # A table's head line, then a line of spaces that is no rule: its last character fails it.
    "table rule": "| a | b |\n" + " " * 6_000 + "x\n",
    "table rule, 1 MiB": "| a |\n" + " " * (1 << 20) + "x\n",
    "rule of colons": "| a |\n" + " :" * 3_000 + "x\n",
    "unclosed inline": "*" + "a" * 6_000 + "\n`" + "b" * 6_000 + "\n**" + "c" * 6_000,
    "list markers": " " * 6_000 + "-x\n" + "  1" * 2_000 + "\n",
}


@pytest.fixture(scope="module")
def page(browser, local_service):
    """The console's page, signed in; its `markdown` is the renderer artifacts go through."""
    with console_page(browser, local_service) as page:
        page.wait_for_function("typeof markdown === 'function'")
        yield page


def render(page: Any, text: str) -> list[str]:
    """The tag names of what `markdown(text)` returns in the page, or a failure if Chromium had
    to end it after HANG_GUARD_MS."""
    session = page.context.new_cdp_session(page)
    try:
        answer = session.send(
            "Runtime.evaluate",
            {
                "expression": f"markdown({json.dumps(text)}).map((node) => node.tagName)",
                "timeout": HANG_GUARD_MS,
                "returnByValue": True,
            },
        )
    finally:
        session.detach()
    assert "exceptionDetails" not in answer, answer["exceptionDetails"]
    return answer["result"]["value"]


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_pathological_markdown_renders_without_hanging(page, name) -> None:
    tags = render(page, PATHOLOGICAL[name])
    assert tags and set(tags) <= {"P", "UL", "OL", "TABLE"}


def test_markdown_still_renders_what_it_did(page) -> None:
    text = (
        "# Results\n\nSome *words* and `code`.\n\n| metric | value |\n| :--- | ---: |\n"
        "| accuracy | 0.9 |\n\n- one\n- two\n\n```\nx = 1\n```\n"
    )
    assert render(page, text) == ["H1", "P", "TABLE", "UL", "PRE"]
    assert render(page, "| a |\n| - |\n| 1 |\n") == ["TABLE"]
    assert render(page, "| a |\n|   |\n") == ["P", "P"]  # no dash: no rule, no table
