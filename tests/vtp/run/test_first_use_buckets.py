"""A bucket made on first use is one line in the service's log, whichever client wrote first.

The README promises it ("created on first use, with one line in the service's log"): `bucket
gs://NAME created on first use (WHAT NAMED IT)`. `vtp custom-jobs create --local` used to write
its autopackaged archive straight into the service's storage folder, making the staging bucket
with no line (issue #51); it uploads through the service now, as gcloud does. The other clients
(the SDK, gcloud, a pipeline run) are checked the same way, each on a bucket of its own.
"""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fixtures import LocalService, exec_program, team_folder

pytestmark = pytest.mark.slow

EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest"
IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"


def bucket_lines(service: LocalService, bucket: str) -> list[str]:
    """The service's log lines saying it made `bucket`."""
    line = re.compile(rf"bucket gs://{re.escape(bucket)} created on first use \((.+)\)$")
    return [m.group(1) for m in map(line.search, service.service_log().splitlines()) if m]


def vtp(service: LocalService, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`vtp ARGS` in `folder`, against `service`; it must succeed."""
    result = subprocess.run(
        [sys.executable, "-m", "vtp", *args],
        cwd=folder, capture_output=True, text=True, timeout=300,
        env={**os.environ, "VTP_LOCAL_ENDPOINT": service.url},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def test_vtp_custom_jobs_create_local_stages_through_the_service(local_service, tmp_path):
    code = tmp_path / "code" / "mytask"
    code.mkdir(parents=True)
    (code / "__init__.py").write_text("")
    (code / "train.py").write_text("print('trained')\n")
    pool = (
        f"--worker-pool-spec=machine-type=n1-standard-4,executor-image-uri={EXECUTOR},"
        f"local-package-path={code.parent},python-module=mytask.train"
    )
    create = ("custom-jobs", "create", "--local", "--display-name=packaged", pool)
    first = vtp(local_service, tmp_path, *create)
    (uri,) = re.findall(r"Python package \[(gs://[^\]]+)\] is staged", first.stderr)
    assert uri.startswith("gs://vtp-local-staging/vtp-packages/")
    name = uri.removeprefix("gs://vtp-local-staging/")
    assert bucket_lines(local_service, "vtp-local-staging") == [f"object {name} written"]
    assert (local_service.gcs_root / uri.removeprefix("gs://")).is_file()  # where replicas read

    again = vtp(local_service, tmp_path, *create)
    assert f"[{uri}] is already staged" in again.stderr
    assert len(bucket_lines(local_service, "vtp-local-staging")) == 1


def test_the_sdk_and_gcloud_under_vtp_local_exec(local_service, tmp_path):
    folder = team_folder(tmp_path, "")
    (folder / "program.py").write_text(
        textwrap.dedent(f"""
        import json
        from google.cloud import aiplatform
        aiplatform.init(project="team", location="us-central1", staging_bucket="gs://sdk-first")
        job = aiplatform.CustomJob(
            display_name="named",
            worker_pool_specs=[{{
                "machine_spec": {{"machine_type": "n1-standard-4"}},
                "replica_count": 1,
                "container_spec": {{"image_uri": "{IMAGE}", "command": ["true"]}},
            }}],
        )
        job.submit()
        print(json.dumps({{"job": job.resource_name}}))
        """)
    )
    exec_program(local_service.url, folder)
    (why,) = bucket_lines(local_service, "sdk-first")
    assert why == "customJob.jobSpec.baseOutputDirectory.outputUriPrefix"

    (folder / "data.txt").write_text("rows\n")
    exec_ = ("local", "exec", "--endpoint", local_service.url, "--")
    vtp(local_service, folder, *exec_, "gcloud", "storage", "cp", "data.txt", "gs://gcloud-first/")
    assert bucket_lines(local_service, "gcloud-first") == ["object data.txt written"]


def test_a_pipeline_run_on_the_service(local_service, tmp_path):
    (tmp_path / "say.py").write_text(
        textwrap.dedent("""
        from kfp import dsl

        @dsl.component(base_image="python:3.11-slim")
        def say(message: str) -> str:
            return message
        """)
    )
    run = ("run", "say.py:say", "--param", "message=hi", "--state-dir", local_service.state_dir)
    vtp(local_service, tmp_path, *map(str, run))
    assert bucket_lines(local_service, "vtp-local") == [
        "pipelineJob.runtimeConfig.gcsOutputDirectory"
    ]
