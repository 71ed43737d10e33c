"""Screenshots of every console page, written to docs/console/ (the README shows one).

Starts `vtp local serve` on a scratch state directory, runs the train and tune pipelines on it
(`vtp submit --local --wait`: pipeline runs, their custom jobs, a tuning job, models) and a run
to debug (`tests/pipelines/debugging_pipeline.py`: a loop, a skipped condition, a failed task),
starts a custom job that keeps logging, then opens each page in headless Chromium (Debian's
`chromium`, through Playwright) and saves it. Prints one JSON line: the files written and how
long it took.

    python bench/console_screenshots.py [--out docs/console]
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests
from playwright.sync_api import sync_playwright

from vtp.local.console import console_url

TICKER = "import itertools, time\nfor i in itertools.count():\n    print(f'step {i}: loss {1 / (i + 1):.4f}', flush=True)\n    time.sleep(0.5)\n"  # noqa: E501


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


REPOSITORY = Path(__file__).resolve().parents[1]
DEBUGGING = "tests/pipelines/debugging_pipeline.py:debugging_pipeline"


def vtp(*args: str, env: dict[str, str], check: bool = True) -> None:
    subprocess.run(
        [sys.executable, "-m", "vtp", *args], env=env, check=check, capture_output=True,
        cwd=REPOSITORY,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parents[1] / "docs" / "console")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        state, port = Path(scratch) / "state", free_port()
        serve = [sys.executable, "-m", "vtp", "local", "serve", "--port", str(port)]
        server = subprocess.Popen([*serve, "--state-dir", str(state)], stderr=subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            while not (state / "token").exists():
                time.sleep(0.1)
            token = (state / "token").read_text().strip()
            env = {**os.environ, "VTP_LOCAL_ENDPOINT": url}
            vtp("submit", "train", "--local", "--wait", env=env)
            vtp("submit", "tune", "--local", "--wait", "--param", "max_trial_count=4",
                "--param", 'trial_args=["--epochs=3"]', env=env)  # fmt: skip
            vtp("submit", DEBUGGING, "--local", "--wait", env=env, check=False)  # it fails
            job = {
                "displayName": "still-training",
                "jobSpec": {"workerPoolSpecs": [{
                    "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
                    "containerSpec": {"imageUri": "python:3.11",
                                      "command": [sys.executable, "-c", TICKER]}}]},
            }  # fmt: skip
            jobs = f"{url}/v1/projects/local/locations/us-central1/customJobs"
            headers = {"Authorization": f"Bearer {token}"}
            running = requests.post(jobs, json=job, headers=headers, timeout=30).json()["name"]
            written = shoot(url, token, running, options.out)
        finally:
            server.terminate()
            server.wait()
    print(json.dumps({"screenshots": written, "seconds": round(time.monotonic() - started, 1)}))


def shoot(url: str, token: str, running_job: str, out: Path) -> list[str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    written = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(console_url(url, token))

        def save(name: str, hash_: str, ready: str) -> None:
            page.goto(f"{url}/console/{hash_}")
            page.wait_for_selector(ready)
            time.sleep(2.5)  # one more refresh: charts and logs drawn
            path = out / f"{name}.png"
            page.screenshot(path=str(path), full_page=True)
            written.append(str(path))

        save("runs", "#/runs", "table a")
        run = page.eval_on_selector("table tr:last-child a", "a => a.getAttribute('href')")
        save("pipeline-run", f"{run}?task=evaluate-checkpoints", "#task-panel")
        failed = page.eval_on_selector("table tr:nth-child(2) a", "a => a.getAttribute('href')")
        save("debugging-run", f"{failed}?task=explode", "#task-tail")
        save("custom-jobs", "#/jobs", "table a")
        save("custom-job", f"#/jobs/{running_job.rsplit('/', 1)[1]}", "#log")
        save("tuning-jobs", "#/tuning", "table a")
        study = page.eval_on_selector("table a", "a => a.getAttribute('href')")
        save("tuning-job", study, "#trials-chart canvas")
        save("models", "#/models", "h2")
        browser.close()
    return written


if __name__ == "__main__":
    main()
