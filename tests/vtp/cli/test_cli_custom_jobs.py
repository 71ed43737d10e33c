"""`vtp custom-jobs` create/describe/list/cancel/stream-logs through the real aiplatform client.

`--local` points the client at `$VTP_LOCAL_ENDPOINT`; here that is the recording listener, so
the tests see the exact REST calls the commands make. (The same commands against the real local
service are covered by its own integration tests.)
"""

import json
from collections import deque
from collections.abc import Iterator

import pytest
from google.cloud import aiplatform_v1

from tests.fixtures import run_vtp
from tests.vtp.cli.vertex_recorder import VertexRecorder

IMAGE = "gcr.io/p/trainer:1"
POOL = f"--worker-pool-spec=machine-type=n1-standard-4,container-image-uri={IMAGE}"
PARENT = "projects/proj/locations/europe-west4"


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Iterator[VertexRecorder]:
    rec = VertexRecorder()
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", rec.url)
    for name in ("CLOUDSDK_CORE_PROJECT", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_AI_REGION"):
        monkeypatch.delenv(name, raising=False)
    yield rec
    rec.close()


def vtp(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_vtp(capsys, "custom-jobs", *argv)


def create(capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    code, out, err = vtp(
        capsys,
        "create",
        "--local",
        "--project=proj",
        "--region=europe-west4",
        "--display-name=job",
        POOL,
        *extra,
    )
    assert code == 0, err
    return out.strip()


def test_create_local_posts_the_job_and_prints_its_name(recorder, capsys) -> None:
    name = create(capsys, "--labels=team=ml")
    request = recorder.last("POST", f"/v1/{PARENT}/customJobs")
    job = aiplatform_v1.CustomJob.from_json(json.dumps(request.body), ignore_unknown_fields=False)
    assert job.display_name == "job" and job.labels == {"team": "ml"}
    assert job.job_spec.worker_pool_specs[0].container_spec.image_uri == IMAGE
    assert name == f"{PARENT}/customJobs/1000"


def test_create_local_defaults_project_and_region(recorder, capsys) -> None:
    code, out, _ = vtp(capsys, "create", "--local", "--display-name=job", POOL)
    assert code == 0
    assert out.startswith("projects/local/locations/us-central1/customJobs/")


def test_project_comes_from_the_gcloud_environment(recorder, capsys, monkeypatch) -> None:
    monkeypatch.setenv("CLOUDSDK_CORE_PROJECT", "from-env")
    monkeypatch.setenv("CLOUDSDK_AI_REGION", "asia-east1")
    code, out, _ = vtp(capsys, "create", "--local", "--display-name=job", POOL)
    assert (code, out.split("/customJobs/")[0]) == (0, "projects/from-env/locations/asia-east1")


def test_create_on_vertex_without_project_is_a_usage_error(recorder, capsys) -> None:
    code, out, err = vtp(capsys, "create", "--region=us-central1", "--display-name=j", POOL)
    assert (code, out) == (2, "")
    assert "--project" in err and "CLOUDSDK_CORE_PROJECT" in err
    assert recorder.requests == []


def test_dry_run_needs_no_project_or_region(recorder, capsys) -> None:
    code, out, _ = vtp(capsys, "create", "--display-name=j", POOL, "--dry-run")
    assert code == 0 and json.loads(out)["displayName"] == "j"


def test_invalid_spec_sends_nothing(recorder, capsys) -> None:
    code, out, err = vtp(
        capsys, "create", "--local", "--display-name=j", POOL + ",accelerator-type=NVIDIA_L4"
    )
    assert (code, out) == (2, "") and "g2" in err
    assert recorder.requests == []


def test_describe_prints_the_job_as_rest_json(recorder, capsys) -> None:
    name = create(capsys)
    code, out, _ = vtp(capsys, "describe", name, "--local")
    assert code == 0
    described = json.loads(out)
    assert (described["name"], described["state"]) == (name, "JOB_STATE_PENDING")
    assert recorder.last("GET").path == f"/v1/{name}"


def test_describe_by_id_uses_project_and_region(recorder, capsys) -> None:
    name = create(capsys)
    job_id = name.rsplit("/", 1)[1]
    code, _, _ = vtp(
        capsys, "describe", job_id, "--local", "--project=proj", "--region=europe-west4"
    )
    assert code == 0 and recorder.last("GET").path == f"/v1/{name}"


def test_describe_unknown_job_fails_with_the_api_message(recorder, capsys) -> None:
    code, out, err = vtp(capsys, "describe", f"{PARENT}/customJobs/999", "--local")
    assert (code, out) == (1, "")
    assert "NOT_FOUND" in err or "not found" in err


def test_list_prints_a_table_of_jobs(recorder, capsys) -> None:
    first, second = create(capsys), create(capsys)
    code, out, _ = vtp(capsys, "list", "--local", "--project=proj", "--region=europe-west4")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["ID", "DISPLAY_NAME", "STATE", "CREATE_TIME"]
    ids = [line.split()[0] for line in lines[1:]]
    assert ids == [first.rsplit("/", 1)[1], second.rsplit("/", 1)[1]]
    assert all("JOB_STATE_PENDING" in line for line in lines[1:])


def test_cancel_posts_cancel(recorder, capsys) -> None:
    name = create(capsys)
    code, out, err = vtp(capsys, "cancel", name, "--local")
    assert (code, out) == (0, "") and "cancel" in err
    assert recorder.last("POST").path == f"/v1/{name}:cancel"
    assert recorder.jobs[name]["state"] == "JOB_STATE_CANCELLED"


@pytest.mark.parametrize("job", ["abc", "projects/p/locations/l/trainingPipelines/1"])
def test_bad_job_reference_is_a_usage_error(recorder, capsys, job: str) -> None:
    code, out, err = vtp(capsys, "describe", job, "--local")
    assert (code, out) == (2, "") and job in err


def entry(second: int, task: str, message: str) -> dict:
    return {
        "insertId": f"id{second}",
        "timestamp": f"2026-01-01T00:00:0{second}Z",
        "severity": "INFO",
        "resource": {"type": "ml_job", "labels": {"job_id": "1000", "task_name": task}},
        "textPayload": message,
    }


def test_stream_logs_prints_entries_and_state_changes_until_the_job_ends(recorder, capsys) -> None:
    name = create(capsys)
    recorder.states[name] = deque(["JOB_STATE_PENDING", "JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED"])
    recorder.log_pages.extend(
        [
            {"entries": [entry(1, "workerpool0-0", "starting")], "nextPageToken": "t"},
            {"entries": [entry(2, "workerpool1-0", "epoch 1\nepoch 2")]},
        ]
    )
    code, out, err = vtp(capsys, "stream-logs", name, "--local", "--polling-interval=0.01")
    assert code == 0
    assert out.splitlines() == [
        "INFO\t2026-01-01T00:00:01Z\tworkerpool0-0\tstarting",
        "INFO\t2026-01-01T00:00:02Z\tworkerpool1-0\tepoch 1",
        "INFO\t2026-01-01T00:00:02Z\tworkerpool1-0\tepoch 2",
    ]
    assert [s for s in ("PENDING", "RUNNING", "SUCCEEDED") if f"JOB_STATE_{s}." in err] == [
        "PENDING",
        "RUNNING",
        "SUCCEEDED",
    ]
    filters = [r.body["filter"] for r in recorder.requests if r.path == "/v2/entries:list"]
    assert 'resource.labels.job_id="1000"' in filters[0]
    assert 'insertId>"id2"' in filters[-1]  # later polls resume after the last entry seen


def test_stream_logs_without_a_log_route_shows_states_and_fails_with_the_job(recorder, capsys):
    recorder.serve_logs = False
    name = create(capsys)
    recorder.states[name] = deque(["JOB_STATE_RUNNING", "JOB_STATE_FAILED"])
    recorder.jobs[name]["error"] = {"code": 3, "message": "The replica workerpool0-0 exited"}
    code, out, err = vtp(capsys, "stream-logs", name, "--local", "--polling-interval=0.01")
    assert (code, out) == (1, "")
    assert "state changes only" in err and "JOB_STATE_FAILED" in err
    assert "The replica workerpool0-0 exited" in err


def test_local_service_down_is_reported(monkeypatch, capsys) -> None:
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", "http://127.0.0.1:9")  # discard port: refused
    code, out, err = vtp(capsys, "list", "--local")
    assert (code, out) == (1, "")
    assert "cannot reach http://127.0.0.1:9" in err and "vtp local serve" in err
