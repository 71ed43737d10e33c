"""A pipeline whose task imports a module of the user's runs the same every way it can be run,
from the user's folder outside this repository: `vtp run my_pipeline.py`, `vtp run
my_pipeline.yaml`, `vtp submit my_pipeline.yaml --local --wait` to a `vtp local serve` started
there, and one of its components alone (`vtp run my_pipeline.py:loud`). The serve holds the state
directory the earlier runs used, so its console lists every run, `vtp run`'s own included."""

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud.aiplatform_v1 import PipelineState

from tests.fixtures import REPO, compile_user_pipeline
from tests.pipelines.tiny_pipeline import pipeline_client
from tests.vtp.cli.run_helpers import Served, serve, vtp

pytestmark = pytest.mark.slow

HELPER = 'def shout(text):\n    return text.upper() + "!"\n'
PIPELINE = """
from kfp import dsl


@dsl.component(base_image="python:3.11-slim")
def greet(name: str) -> str:
    return f"hello {name}"


@dsl.component(base_image="python:3.11-slim")
def loud(text: str) -> str:
    from my_helper import shout  # the user's module, next to this file

    print(f"loud says {shout(text)}")
    return shout(text)


@dsl.pipeline(name="greeting")
def greeting(name: str = "world"):
    hello = greet(name=name)
    loud(text=hello.output)
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's folder: the pipeline, the module its task imports, the pipeline compiled."""
    folder = tmp_path_factory.mktemp("greeting_project")
    assert not folder.is_relative_to(REPO)
    (folder / "my_helper.py").write_text(HELPER)
    (folder / "my_pipeline.py").write_text(PIPELINE)
    compile_user_pipeline(folder, "my_pipeline", "greeting", "my_pipeline.yaml")
    return folder


@pytest.fixture(scope="module")
def served(project: Path) -> Iterator[Served]:
    """`vtp local serve` from the user's folder on the state directory `vtp run` uses there."""
    with serve(project, project / ".vtp" / "run") as service:
        yield service


def summary(result: subprocess.CompletedProcess, pipeline: str) -> str:
    """The run's closing summary; fails with what the run printed if it did not succeed."""
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout[result.stdout.index(f"Pipeline {pipeline} SUCCEEDED") :]


def test_vtp_run_of_the_file_imports_the_users_module(project: Path) -> None:
    result = vtp(project, "run", "my_pipeline.py")
    assert "loud says HELLO WORLD!" in result.stdout  # the task's log, as it ran
    text = summary(result, "my_pipeline.py")
    assert "greet:\n    Output hello world\n  loud:\n    Output HELLO WORLD!\n" in text


def test_vtp_run_of_the_compiled_yaml_the_same(project: Path) -> None:
    result = vtp(project, "run", "my_pipeline.yaml", "--no-cache", "--param", "name=yaml")
    text = summary(result, "my_pipeline.yaml")
    assert "loud says HELLO YAML!" in result.stdout
    assert "  loud:\n    Output HELLO YAML!\n" in text  # ran again, not cached


def test_vtp_submit_local_wait_the_same(project: Path, served: Served) -> None:
    result = vtp(
        project, "submit", "my_pipeline.yaml", "--local", "--wait", "--no-enable-caching",
        "--param", "name=submit", VTP_LOCAL_ENDPOINT=served.url,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "loud says HELLO SUBMIT!" in result.stdout
    name = result.stdout.splitlines()[0]
    job = pipeline_client(served.url).get_pipeline_job(name=name)
    assert job.state == PipelineState.PIPELINE_STATE_SUCCEEDED
    outputs = {
        t.task_name: dict(t.execution.metadata).get("output:Output")
        for t in job.job_detail.task_details
    }
    assert outputs["loud"] == "HELLO SUBMIT!"


def test_one_component_runs_alone_on_the_serve_that_holds_the_state_dir(
    project: Path, served: Served
) -> None:
    result = vtp(project, "run", "my_pipeline.py:loud", "--param", "text=hi")
    text = summary(result, "my_pipeline.py:loud")
    assert text.startswith("Pipeline my_pipeline.py:loud SUCCEEDED")
    assert "  loud:\n    Output HI!\n" in text
    assert "Using the `vtp local serve` at " + served.url in result.stderr
    assert re.search(rf"console: {served.url}/console/#code=[\w.-]+&page=/runs/loud-", text)


def test_the_consoles_pipeline_runs_list_shows_every_run(project: Path, served: Served) -> None:
    # What the console's "Pipeline runs" page reads (app.js): every job of every project and
    # location, then each run by ID.
    session = served_session(served)
    listed = session.get(f"{served.url}/v1/projects/-/locations/-/pipelineJobs", timeout=10)
    jobs = listed.json()["pipelineJobs"]
    names = sorted(j["displayName"] for j in jobs)
    # The two runs `vtp run` served itself, the submitted one, the component run on the serve.
    assert names == ["greeting", "greeting", "greeting", "loud"], names
    assert all(j["state"] == "PIPELINE_STATE_SUCCEEDED" for j in jobs)
    first = min(jobs, key=lambda j: j["createTime"])
    one = session.get(
        f"{served.url}/v1/projects/-/locations/-/pipelineJobs/{first['name'].rsplit('/', 1)[1]}",
        timeout=10,
    ).json()
    tasks = {t["taskName"]: t["state"] for t in one["jobDetail"]["taskDetails"]}
    assert (tasks["greet"], tasks["loud"]) == ("SUCCEEDED", "SUCCEEDED")


def served_session(served: Served):
    """A requests Session carrying the serve's token."""
    import requests

    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {served.token}"
    return session
