"""A two-step pipeline that runs in about two seconds under kfp.local, for pipeline-run tests.

`add` sums two numbers (after an optional sleep, or failing on request); `record` writes what it
got, and the service URL it was given, to a `gs://` URI, so a test can see that the run reached
the end and that its components were pointed back at the service and its storage root.
"""

from pathlib import Path

import pytest
from google.auth.credentials import AnonymousCredentials
from google.cloud.aiplatform_v1 import PipelineState
from kfp import compiler, dsl

from tests.fixtures import PROJECT, REGION, wait_until
from vtp.vertex.local_auth import local_credentials

DONE = (
    PipelineState.PIPELINE_STATE_SUCCEEDED,
    PipelineState.PIPELINE_STATE_FAILED,
    PipelineState.PIPELINE_STATE_CANCELLED,
)
IMAGE = "python:3.11-slim"  # any image: kfp.local runs lightweight components in this venv


@dsl.component(base_image=IMAGE)
def add(a: int, b: int, sleep_seconds: float, fail: bool, started_uri: str = "") -> int:
    """a + b, after sleeping `sleep_seconds`; raises when `fail`. Touches `started_uri` (a gs://
    URI) first when given, so a test knows the task runs."""
    import time

    if started_uri:
        from vtp import storage

        storage.local_path(started_uri).parent.mkdir(parents=True, exist_ok=True)
        storage.local_path(started_uri).touch()
    time.sleep(sleep_seconds)
    if fail:
        raise RuntimeError("asked to fail")
    return a + b


@dsl.component(base_image=IMAGE)
def record(marker_uri: str, value: int):
    """Write {"value", "endpoint"} to `marker_uri` (a gs:// URI under VTP_GCS_ROOT)."""
    import json
    import os

    from vtp import storage

    path = storage.local_path(marker_uri)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"value": value, "endpoint": os.environ["VTP_LOCAL_ENDPOINT"]}))


@dsl.pipeline(name="vtp-tiny")
def tiny_pipeline(
    marker_uri: str, a: int = 1, b: int = 2, sleep_seconds: float = 0.0, fail: bool = False
):
    """Adds a and b, then records the sum at marker_uri."""
    total = add(
        a=a, b=b, sleep_seconds=sleep_seconds, fail=fail, started_uri=f"{marker_uri}.started"
    )
    record(marker_uri=marker_uri, value=total.output)


SLEEPER = {
    "workerPoolSpecs": [
        {
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": 1,
            "containerSpec": {
                "imageUri": IMAGE,
                "command": ["python", "-c", "import time; time.sleep(300)"],
            },
        }
    ]
}
"""A CustomJob whose one replica sleeps for five minutes (a host process on the local service)."""


@dsl.pipeline(name="vtp-sleeping-job")
def sleeping_job_pipeline(project: str, output_root: str):
    """Runs the sleeping CustomJob through the project's custom_job component."""
    from vtp.components.custom_job import custom_job

    custom_job(
        project=project,
        location="us-central1",
        display_name="sleeper",
        output_root=output_root,
        job_spec=SLEEPER,
        poll_interval_seconds=0.2,
    )


def compile_to(path: Path, pipeline=tiny_pipeline) -> Path:
    """Compile `pipeline` (the tiny one by default) to `path` (YAML); return it."""
    compiler.Compiler().compile(pipeline, str(path))
    return path


@pytest.fixture(scope="session")
def tiny_yaml(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny pipeline compiled once per test session (conftests import this fixture)."""
    return compile_to(tmp_path_factory.mktemp("tiny") / "tiny.yaml")


def tiny_job(template: Path, root: str = "gs://vtp-test/root", **params: object):
    """The aiplatform_v1.PipelineJob the SDK builds for the tiny pipeline (nothing is sent)."""
    from google.cloud import aiplatform

    job = aiplatform.PipelineJob(
        display_name="tiny",
        template_path=str(template),
        pipeline_root=root,
        parameter_values=params,
        project=PROJECT,
        location=REGION,
        credentials=AnonymousCredentials(),  # builds the request only: nothing is sent
    )
    return job._gca_resource


def pipeline_client(url: str):
    """A PipelineServiceClient on the REST transport, anonymous, talking to `url`."""
    from google.api_core.client_options import ClientOptions
    from google.cloud import aiplatform_v1

    return aiplatform_v1.PipelineServiceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=url),
        credentials=local_credentials(url),
    )


def wait_for_pipeline(client, name: str, states=DONE, timeout: float = 60):
    """Poll the pipeline job until its state is one of `states`; return it."""

    def reached():
        job = client.get_pipeline_job(name=name)
        return job if job.state in states else None

    return wait_until(reached, timeout, f"{name} to reach {[s.name for s in states]}")
