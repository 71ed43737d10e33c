"""`vtp schedule`: Vertex Schedule and Cloud Scheduler requests, and what they do when sent.

The Cloud Scheduler job's HTTP request is replayed as Cloud Scheduler would send it, to the
local service instead of Vertex AI (the host swapped, the body bytes as they are), and the run
it starts must complete.
"""

import base64
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests
from google.cloud import scheduler_v1
from google.cloud.aiplatform_v1 import PipelineJob, PipelineState, Schedule

from tests.fixtures import VERTEX_TARGET, LocalService, run_vtp
from tests.pipelines.tiny_pipeline import pipeline_client, wait_for_pipeline
from tests.pipelines.tiny_pipeline import tiny_yaml as tiny_yaml  # fixture
from tests.vtp.cli.test_cli_submit import built_image as built_image  # fixture

SA = "scheduler@my-project.iam.gserviceaccount.com"
NIGHTLY = ("--cron=0 3 * * *", "--time-zone=Europe/Paris")


def vtp(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_vtp(capsys, "schedule", *argv)


pytestmark = pytest.mark.usefixtures("no_gcloud_defaults", "built_image")


def dry_run(capsys, name: str, *argv: str) -> str:
    """The request `vtp schedule create NAME ARGV --dry-run` prints: 3 a.m. Paris time, as SA."""
    code, out, err = vtp(
        capsys, "create", name, *NIGHTLY, f"--service-account={SA}", *argv, "--dry-run"
    )
    assert code == 0, err
    return out


def test_vertex_dry_run_is_the_schedule_the_sdk_sends(capsys) -> None:
    out = dry_run(
        capsys,
        "nightly export",
        "--pipeline=export",
        *VERTEX_TARGET,
        "--param=checkpoints_uri=gs://my-bucket/run/checkpoints",
        "--max-run-count=30",
        "--end-time=2031-01-01T00:00:00Z",
    )
    schedule = Schedule.from_json(out, ignore_unknown_fields=False)
    assert schedule.display_name == "nightly export"
    assert schedule.cron == "TZ=Europe/Paris 0 3 * * *"
    assert (schedule.max_concurrent_run_count, schedule.max_run_count) == (1, 30)
    assert schedule.end_time.isoformat() == "2031-01-01T00:00:00+00:00"
    request = schedule.create_pipeline_job_request
    assert request.parent == "projects/my-project/locations/europe-west4"
    assert request.pipeline_job.service_account == SA
    assert request.pipeline_job.runtime_config.gcs_output_directory == "gs://my-bucket/root"
    runtime = json.loads(out)["createPipelineJobRequest"]["pipelineJob"]["runtimeConfig"]
    assert runtime["parameterValues"]["checkpoints_uri"] == "gs://my-bucket/run/checkpoints"


def cloud_scheduler_dry_run(capsys, *argv: str) -> scheduler_v1.Job:
    out = dry_run(capsys, "nightly-export", "--via=cloud-scheduler", *argv)
    return scheduler_v1.Job.from_json(out, ignore_unknown_fields=False)


def test_cloud_scheduler_dry_run_posts_the_pipeline_job_with_an_oauth_token(capsys) -> None:
    job = cloud_scheduler_dry_run(
        capsys, "--pipeline=export", *VERTEX_TARGET, "--param=checkpoints_uri=gs://my-bucket/c"
    )
    assert job.name == "projects/my-project/locations/europe-west4/jobs/nightly-export"
    assert (job.schedule, job.time_zone) == ("0 3 * * *", "Europe/Paris")
    target = job.http_target
    assert target.uri == (
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/"
        "europe-west4/pipelineJobs"
    )
    assert target.http_method == scheduler_v1.HttpMethod.POST
    assert dict(target.headers) == {"Content-Type": "application/json"}
    assert target.oauth_token.service_account_email == SA
    assert target.oauth_token.scope == "https://www.googleapis.com/auth/cloud-platform"
    body = PipelineJob.from_json(target.body, ignore_unknown_fields=False)
    assert body.display_name == "vtp-export"
    assert body.runtime_config.gcs_output_directory == "gs://my-bucket/root"
    assert body.pipeline_spec["pipelineInfo"]["name"] == "vtp-export"


def send_as_cloud_scheduler(
    job: scheduler_v1.Job, service_url: str, token: str
) -> requests.Response:
    """The job's HTTP request as Cloud Scheduler sends it, to `service_url` instead of Vertex.

    Cloud Scheduler would send an OAuth token of the job's service account; the local service
    takes its own token in that header instead.
    """
    target = job.http_target
    assert target.oauth_token.service_account_email
    uri = urlsplit(target.uri)._replace(scheme="http", netloc=urlsplit(service_url).netloc)
    headers = {
        **target.headers,
        "Authorization": f"Bearer {token}",
        "User-Agent": "Google-Cloud-Scheduler",
    }
    return requests.request(
        scheduler_v1.HttpMethod(target.http_method).name,
        uri.geturl(),
        data=target.body,
        headers=headers,
        timeout=30,
    )


def test_cloud_scheduler_request_starts_a_run_that_completes(
    capsys, local_service: LocalService, tiny_yaml: Path
) -> None:
    job = cloud_scheduler_dry_run(
        capsys,
        f"--pipeline={tiny_yaml}",
        "--project=local",
        "--region=us-central1",
        "--pipeline-root=gs://vtp-test/scheduled",
        "--param=marker_uri=gs://vtp-test/markers/cloud-scheduler",
        "--param=a=40",
    )
    # Cloud Scheduler sends the body bytes it holds; the JSON form carries them in base64.
    assert json.loads(scheduler_v1.Job.to_json(job))["httpTarget"]["body"] == (
        base64.b64encode(job.http_target.body).decode()
    )
    response = send_as_cloud_scheduler(job, local_service.url, local_service.token)
    assert response.status_code == 200, response.text
    name = response.json()["name"]
    assert name.startswith(f"{local_service.parent}/pipelineJobs/")
    done = wait_for_pipeline(pipeline_client(local_service.url), name)
    assert done.state == PipelineState.PIPELINE_STATE_SUCCEEDED, done.error.message
    assert done.service_account == SA
    marker = local_service.gcs_root / "vtp-test" / "markers" / "cloud-scheduler"
    assert json.loads(marker.read_text())["value"] == 42
    again = send_as_cloud_scheduler(
        job, local_service.url, local_service.token
    )  # each call is a new run
    assert again.status_code == 200 and again.json()["name"] != name
    wait_for_pipeline(pipeline_client(local_service.url), again.json()["name"])


def test_vertex_schedules_on_the_local_service(
    capsys, local_service: LocalService, monkeypatch: pytest.MonkeyPatch, tiny_yaml: Path
) -> None:
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", local_service.url)
    code, out, err = vtp(
        capsys,
        "create",
        "nightly",
        f"--pipeline={tiny_yaml}",
        *NIGHTLY,
        "--local",
        "--param=marker_uri=gs://vtp-test/markers/nightly",
    )
    assert code == 0, err
    name = out.strip()
    assert name.startswith(f"{local_service.parent}/schedules/")
    code, out, _ = vtp(capsys, "list", "--local")
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith(name)]
    assert row.split()[1:] == ["nightly", "ACTIVE", "TZ=Europe/Paris", "0", "3", "*", "*", "*"]

    assert vtp(capsys, "pause", "nightly", "--local")[0] == 0  # by display name
    assert f"{name} nightly PAUSED" in " ".join(vtp(capsys, "list", "--local")[1].split())
    code, _, err = vtp(capsys, "pause", "nightly", "--local")
    assert code == 1 and "it is PAUSED, not ACTIVE" in err
    assert vtp(capsys, "resume", name.rsplit("/", 1)[-1], "--local", "--catch-up")[0] == 0
    assert f"{name} nightly ACTIVE" in " ".join(vtp(capsys, "list", "--local")[1].split())
    code, _, err = vtp(capsys, "delete", name, "--local")
    assert code == 0, err
    assert name not in vtp(capsys, "list", "--local")[1]
    code, _, err = vtp(capsys, "delete", "nightly", "--local")
    assert code == 1 and "no schedule named 'nightly'" in err


BAD = {
    "cron fields": (["--cron=0 3 * *"], "--cron: '0 3 * *' has 4 fields"),
    "cron value": (["--cron=0 25 * * *"], "--cron: '0 25 * * *' is not a valid cron"),
    "time zone": (["--time-zone=Europe/Pariss"], "--time-zone: 'Europe/Pariss' is not an IANA"),
    "no account": (["--via=cloud-scheduler"], "--service-account is required with --via cloud"),
    "job id": (
        ["--via=cloud-scheduler", f"--service-account={SA}", "--name=night ly"],
        "NAME: a Cloud Scheduler job ID",
    ),
    "local scheduler": (
        ["--via=cloud-scheduler", f"--service-account={SA}", "--local"],
        "--local: Cloud Scheduler has no local counterpart",
    ),
    "vertex-only flag": (
        ["--via=cloud-scheduler", f"--service-account={SA}", "--max-run-count=3"],
        "--max-run-count applies to --via vertex only",
    ),
    "start time": (["--start-time=tomorrow"], "--start-time must be an RFC 3339 timestamp"),
    "end before start": (
        ["--start-time=2031-01-02T00:00:00Z", "--end-time=2031-01-01T00:00:00Z"],
        "--end-time must be after --start-time",
    ),
    "concurrency": (["--max-concurrent-run-count=0"], "--max-concurrent-run-count must be"),
    "unknown param": (["--param=checkpoint=gs://b/c"], "--param checkpoint: not a parameter"),
    "local checkpoints": (
        ["--param=checkpoints_uri=/data/c"],
        "--param checkpoints_uri: '/data/c' is not a Cloud Storage URI",
    ),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_bad_input_exits_2_naming_the_flag(capsys, case) -> None:
    flags, message = BAD[case]
    name = next((f.split("=", 1)[1] for f in flags if f.startswith("--name=")), "nightly")
    flags = [f for f in flags if not f.startswith("--name=")]
    defaults = ["--cron=0 3 * * *", "--param=checkpoints_uri=gs://my-bucket/c"]
    given = {f.split("=")[0] for f in flags}
    argv = [f for f in defaults if f.split("=")[0] not in given or f.startswith("--param")]
    local = ["--dry-run"] if "--local" not in flags else []
    code, out, err = vtp(
        capsys, "create", name, "--pipeline=export", *VERTEX_TARGET, *argv, *flags, *local
    )
    assert (code, out) == (2, "")
    assert message in err
