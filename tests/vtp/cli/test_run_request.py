"""The PipelineJob `vtp run` creates is the one the SDK builds for `vtp submit`: the same spec,
and `--no-cache` turns caching off on every task exactly as `--no-enable-caching` does."""

import json

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from tests.fixtures import VERTEX_TARGET, run_vtp
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from vtp.run import job, sources


def caching(spec: dict) -> dict[str, object]:
    """Each task's cachingOptions, by component and task name."""
    dags = {"root": spec["root"], **spec["components"]}
    return {
        f"{owner}/{name}": task.get("cachingOptions")
        for owner, component in dags.items()
        for name, task in component.get("dag", {}).get("tasks", {}).items()
    }


@pytest.mark.parametrize(("flag", "cache"), [("--no-enable-caching", False), (None, None)])
def test_vtp_run_sets_caching_as_vtp_submit_does(tiny_yaml, capsys, flag, cache) -> None:
    argv = ["submit", str(tiny_yaml), "--dry-run", *VERTEX_TARGET, "--param", "marker_uri=gs://b/m"]
    code, out, err = run_vtp(capsys, *argv, *([flag] if flag else []))
    assert code == 0, err
    submitted = json.loads(out)["pipelineSpec"]
    request = job.request(sources.load(str(tiny_yaml)).spec(), {"marker_uri": "gs://b/m"}, cache)
    ran = json_format.MessageToDict(aiplatform_v1.PipelineJob.pb(request).pipeline_spec)
    assert caching(ran) == caching(submitted)
    expected = {"enableCache": False} if cache is False else {"enableCache": True}
    assert set(map(json.dumps, caching(ran).values())) == {json.dumps(expected)}
    assert ran["root"] == submitted["root"] and ran["components"] == submitted["components"]


def test_the_job_id_is_the_sdks() -> None:
    from datetime import datetime

    when = datetime(2026, 11, 24, 5, 6, 7)
    assert job.job_id("My Pipeline_2", when) == "my-pipeline-2-20261124050607"
    assert job.job_id("2-step", when) == "run-2-step-20261124050607"


def test_a_run_created_in_the_second_of_another_takes_the_next_free_id(
    local_service, tiny_yaml, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rerun of cache hits can start within the second its first run started in: the SDK's
    # timestamp ID is taken then (409, a plain Conflict over REST), and the run takes the next.
    from datetime import datetime

    when = datetime(2026, 11, 24, 5, 6, 7)
    stamped = job.job_id
    monkeypatch.setattr(job, "job_id", lambda name, now=None: stamped(name, when))
    client = job.RunClient(local_service.url, local_service.token)
    request = job.request(sources.load(str(tiny_yaml)).spec(), {"marker_uri": "gs://b/m"}, None)
    first, second = client.create(request), client.create(request)
    for created in (first, second):
        client.cancel(created.name)
    base = f"{local_service.parent}/pipelineJobs/{stamped(request.display_name, when)}"
    assert (first.name, second.name) == (base, f"{base}-2")
