"""A real headless Chromium for the console's browser tests (Debian's `chromium`, driven by
Playwright): a module calls `require_chromium()` (skipped only where none is installed;
`.ci/run` installs it), takes the `browser` fixture and opens pages with `watched_page`, or
`console_page` for a service's console, signed in."""

import contextlib
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def require_chromium() -> None:
    """Skip the calling test module unless Chromium and Playwright are here."""
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt install chromium)", allow_module_level=True)
    pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module's tests."""
    from playwright import sync_api

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@contextlib.contextmanager
def watched_page(browser: Any) -> Iterator[Any]:
    """A fresh page that fails the test on any console error or uncaught exception."""
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield page
    context.close()
    assert errors == []


@contextlib.contextmanager
def console_page(browser: Any, service: Any, route: str = "") -> Iterator[Any]:
    """A watched page signed in to the console of `service` (a LocalService), showing `route`."""
    from vtp.local.console import console_url

    with watched_page(browser) as page:
        page.goto(console_url(service.url, service.token, route))
        yield page
