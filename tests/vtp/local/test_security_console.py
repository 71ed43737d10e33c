"""The console's credential (security issue #26), in a real headless Chromium (Debian's
`chromium`, driven by Playwright) against the real service over HTTP.

The console holds the service's bearer token in the tab's sessionStorage, taken from the
fragment of the URL `vtp` prints; there is no cookie. So:

- a signed-in browser that opens a stored HTML object (top level, or framed by a page on another
  127.0.0.1 port) runs nothing on the service: the object is not served without the token, and a
  same-origin POST from a tab without it gets 401 and creates no job;
- a server on another 127.0.0.1 port that the signed-in browser visits receives nothing of the
  service's, and what it received, replayed with a forged `Origin`, is refused;
- after sign-in, neither the address bar nor the tab's history holds the token, and no request
  the browser sends carries it;
- the console still works: it lists, cancels, and downloads an artifact as a file (an HTML one
  too, which never runs).

Skipped only where no Chromium is installed (`.ci/run` installs it)."""

import contextlib
import json
import re
import sqlite3
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from kfp import dsl

from tests.browser import CHROMIUM, require_chromium, watched_page
from tests.browser import browser as browser  # fixture
from tests.fixtures import LocalService, wait_for_state, wait_until
from tests.pipelines.tiny_pipeline import IMAGE, compile_to, pipeline_client, tiny_job
from vtp.local.console import console_url

pytestmark = pytest.mark.slow
require_chromium()

BUCKET = "console-sec"
JOBS = "projects/local/locations/us-central1/customJobs"
ATTACK = """<!doctype html><html><body><script>
fetch("/v1/JOBS", {method: "POST", credentials: "include",
  headers: {"Content-Type": "application/json"},
  body: JSON.stringify({displayName: "pwned", jobSpec: {workerPoolSpecs: [{
    machineSpec: {machineType: "n1-standard-4"}, replicaCount: "1",
    containerSpec: {imageUri: "python:3.11", command: ["true"]}}]}})})
  .then((r) => { document.title = "posted " + r.status; });
</script></body></html>
""".replace("JOBS", JOBS)
"""A stored page whose script tries to create a custom job on its own origin."""


@dsl.component(base_image=IMAGE)
def write_report(report: dsl.Output[dsl.Artifact], body: str):
    """Writes `body` to its artifact."""
    with open(report.path, "w") as file:
        file.write(body)


@dsl.pipeline(name="vtp-report")
def report_pipeline(body: str):
    """One task with one file artifact."""
    write_report(body=body)


class Collector:
    """A server on another 127.0.0.1 port: records every request's headers, and serves a page
    that frames the stored HTML object and tries the service's API cross-origin."""

    def __init__(self, service: LocalService) -> None:
        self.requests: list[dict[str, str]] = []
        collector = self
        frame = f"{service.url}/download/storage/v1/b/{BUCKET}/o/evil.html?alt=media"
        page = (
            f'<!doctype html><iframe id="frame" hidden src="{frame}"></iframe><script>'
            f'fetch("{service.url}/v1/{JOBS}", {{method: "POST", mode: "no-cors", '
            f'credentials: "include", body: "{{}}"}}).catch(() => null);'
            "</script>"
        ).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                collector.requests.append({k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    """A service holding the stored attack page, a finished run with an HTML artifact, and a
    running custom job."""
    folder = tmp_path_factory.mktemp("console-sec")
    service = LocalService(folder / "state").start()
    try:
        assert service.process is not None and service.process.stdout is not None
        printed = [service.process.stdout.readline() for _ in range(3)]  # after the first
        service.printed = printed[-1].removeprefix("Console: ").strip()
        assert re.fullmatch(rf"{service.url}/console/#code=[\w.-]+", service.printed), printed
        session = service.session()
        made = session.post(f"{service.url}/storage/v1/b", params={"project": "local"},
                            json={"name": BUCKET}, timeout=30)  # fmt: skip
        assert made.ok, made.text
        upload = session.post(
            f"{service.url}/upload/storage/v1/b/{BUCKET}/o",
            params={"uploadType": "media", "name": "evil.html"},
            data=ATTACK.encode(),
            headers={"Content-Type": "text/html"},
            timeout=30,
        )
        assert upload.ok, upload.text
        pipelines = pipeline_client(service.url)
        template = compile_to(folder / "report.yaml", report_pipeline)
        run = pipelines.create_pipeline_job(
            parent=service.parent,
            pipeline_job=tiny_job(template, f"gs://{BUCKET}/root", body=ATTACK),
        )
        wait_until(
            lambda: (
                pipelines.get_pipeline_job(name=run.name).state.name
                in ("PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED")
            ),
            180,
            "the report run",
        )
        assert pipelines.get_pipeline_job(name=run.name).state.name == "PIPELINE_STATE_SUCCEEDED"
        pool = {
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": "1",
            "containerSpec": {
                "imageUri": "python:3.11",
                "command": [sys.executable, "-c", "import time; time.sleep(600)"],
            },
        }
        body = {"displayName": "sleeper", "jobSpec": {"workerPoolSpecs": [pool]}}
        job = session.post(f"{service.url}/v1/{JOBS}", json=body, timeout=30)
        assert job.ok, job.text
        service.names = {"run": run.name, "job": job.json()["name"]}
        yield service
    finally:
        service.stop()


@pytest.fixture
def collector(service: LocalService) -> Iterator[Collector]:
    collector = Collector(service)
    yield collector
    collector.close()


def _jobs(service: LocalService) -> list[str]:
    listed = service.session().get(f"{service.url}/v1/{JOBS}", timeout=30).json()
    return [job["displayName"] for job in listed.get("customJobs", [])]


def _signed_in(page: Any, service: LocalService, route: str = "/jobs") -> None:
    """Open the console at `route` with a new sign-in address (`vtp local console`'s)."""
    page.goto(console_url(service.url, service.token, route))
    page.wait_for_selector("main h1:not(:empty)")
    assert page.query_selector("#signed-out") is None


def test_a_stored_html_object_runs_nothing_in_a_signed_in_browser(browser, service, collector):
    object_url = f"{service.url}/download/storage/v1/b/{BUCKET}/o/evil.html?alt=media"
    with watched_page(browser) as console:
        _signed_in(console, service)
        context = console.context
        # Opened at the top level in another tab: the browser has no credential to send.
        tab = context.new_page()
        assert tab.goto(object_url).status == 401
        assert "posted" not in tab.title()
        # Framed from a page on another 127.0.0.1 port: the frame gets 401 too.
        framed = context.new_page()
        with framed.expect_response(lambda r: r.url == object_url) as response:
            framed.goto(collector.url)
        assert response.value.status == 401
        # The attack's script, run on the service's own origin in a tab of the signed-in
        # browser (as if the object had been served inline): its POST gets 401.
        posted = tab.evaluate(
            "async (body) => (await fetch(body.url, {method: 'POST', credentials: 'include', "
            "headers: {'Content-Type': 'application/json'}, body: body.json})).status",
            {"url": f"/v1/{JOBS}", "json": json.dumps({"displayName": "pwned"})},
        )
        assert posted == 401
        for extra in (tab, framed):
            extra.close()
    assert "pwned" not in _jobs(service)


def test_another_local_port_receives_nothing_that_signs_in(browser, service, collector):
    with watched_page(browser) as page:
        _signed_in(page, service)
        assert page.context.cookies() == []
        # Another tab of the signed-in browser visits the other port (whose page frames the
        # service and calls it: those requests fail, on that tab).
        visited = page.context.new_page()
        frame = f"{service.url}/download/storage/v1/b/{BUCKET}/o/evil.html?alt=media"
        with visited.expect_response(frame):
            visited.goto(collector.url)
        visited.goto(f"{collector.url}/again")
        visited.close()
    assert collector.requests, "the browser visited the other port"
    for headers in collector.requests:
        assert "cookie" not in headers and "authorization" not in headers, headers
        assert not any(service.token in value for value in headers.values()), headers
    # Whatever it got, replayed from another process as if from the console's own page.
    for headers in collector.requests:
        replayed = {k: v for k, v in headers.items() if k not in ("host", "content-length")}
        replayed["Origin"] = service.url
        answer = requests.post(
            f"{service.url}/v1/{JOBS}",
            json={"displayName": "pwned"},
            headers=replayed,
            timeout=30,
        )
        assert answer.status_code == 401, answer.text
    assert "pwned" not in _jobs(service)


def test_the_token_is_in_no_address_history_entry_or_request(browser, service):
    with watched_page(browser) as page:
        sent: list[str] = []
        page.on("request", lambda request: sent.append(request.url))
        page.goto(console_url(service.url, service.token, "/jobs"))
        page.wait_for_selector("text=sleeper")
        assert page.url == f"{service.url}/console/#/jobs"
        assert service.token not in page.evaluate("location.href + document.referrer")
        # The tab's history: back to the blank page the tab began at, forward to the console.
        page.go_back()
        page.go_forward()
        page.wait_for_selector("text=sleeper")  # still signed in (sessionStorage)
        assert page.url == f"{service.url}/console/#/jobs"
        assert sent and not [url for url in sent if service.token in url]


def test_the_browsers_own_history_holds_no_token_and_a_spent_code(browser, service, tmp_path):
    """Chromium's history database records the address a user opens, fragment and all: the one
    `vtp local serve` printed holds a one-time code, spent by the time history has it."""
    opened = service.printed
    context = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=CHROMIUM, args=["--no-sandbox"]
    )
    page = context.new_page()
    page.goto(opened)
    page.click("nav a[data-page='jobs']")
    page.wait_for_selector("text=sleeper")
    context.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "profile" / "Default" / "History")) as db:
        urls = [url for (url,) in db.execute("SELECT url FROM urls")]
    assert opened in urls and f"{service.url}/console/" in urls
    assert [url for url in urls if service.token in url] == []
    # Whoever reads that history (another tab, another user with the profile) is not signed in.
    replay = browser.new_context()
    page = replay.new_page()
    page.goto(opened)
    assert "used already" in page.wait_for_selector("#signed-out").inner_text()
    assert page.evaluate("sessionStorage.length") == 0
    replay.close()
    code = opened.partition("#code=")[2]
    spent = requests.post(f"{service.url}/console/signin", json={"code": code}, timeout=10)
    assert spent.status_code == 401 and service.token not in spent.text


def test_without_a_token_the_console_is_signed_out_and_says_how_to_sign_in(browser, service):
    for path in ("/console/settings.json", f"/v1/{JOBS}", "/console/vendor/LICENSE.dagre"):
        assert requests.get(service.url + path, timeout=10).status_code == 401, path
    static = requests.get(service.url + "/console/", timeout=10)
    assert static.ok and "set-cookie" not in static.headers
    with watched_page(browser) as page:
        page.goto(f"{service.url}/console/")
        assert "vtp local serve" in page.wait_for_selector("#signed-out").inner_text()
    # (Not watched: Chromium logs the 401 that a wrong token gets as an error.)
    context = browser.new_context()
    page = context.new_page()
    failures: list[str] = []
    page.on("pageerror", lambda error: failures.append(str(error)))
    page.goto(f"{service.url}/console/#code=wrong")
    note = page.wait_for_selector("#signed-out").inner_text()
    assert "used already" in note and page.url == f"{service.url}/console/"
    assert page.evaluate("sessionStorage.length") == 0
    context.close()
    assert failures == []


@pytest.mark.parametrize("form", ["?token={}", "#token={}&page=/jobs"])
def test_an_old_token_link_is_not_taken_and_leaves_the_address(browser, service, form):
    old = f"{service.url}/console/{form.format(service.token)}"
    answer = requests.get(old, timeout=10, allow_redirects=False)
    assert answer.status_code == 200 and "set-cookie" not in answer.headers
    with watched_page(browser) as page:
        page.goto(old)
        note = page.wait_for_selector("#signed-out").inner_text()
        assert "?token= or #token= are no longer taken" in note
        assert page.url == f"{service.url}/console/" + ("#/jobs" if "page=" in form else "")
        assert page.context.cookies() == []


def test_the_console_downloads_an_artifact_as_a_file_that_never_runs(browser, service):
    run = service.names["run"].rsplit("/", 1)[1]
    with watched_page(browser) as page:
        _signed_in(page, service, f"/runs/{run}?task={quote('write-report')}")
        button = page.wait_for_selector("#task-panel button.download")
        with page.expect_download() as download:
            button.click()
        assert download.value.suggested_filename == "report"
        assert Path(download.value.path()).read_text() == ATTACK
        assert page.url == f"{service.url}/console/#/runs/{run}?task=write-report"
    assert "pwned" not in _jobs(service)


def test_the_console_lists_and_cancels_with_the_token(browser, service):
    name = service.names["job"]
    with watched_page(browser) as page:
        _signed_in(page, service)
        page.wait_for_selector(f"a[href='#/jobs/{name.rsplit('/', 1)[1]}']").click()
        page.wait_for_selector("#cancel:not([disabled])").click()
        assert wait_for_state(service.client(), name).state.name == "JOB_STATE_CANCELLED"
