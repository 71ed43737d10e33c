"""A replica's lines reach Cloud Logging's entries as they are printed, not when the replica ends
or at the next poll: `customJobs/{id}:wait?logsAfter=` answers as soon as a newer line is
logged, which is how a pipeline task copies each trainer line as it comes; and a replica's
Python runs unbuffered, so a line printed is a line written (#37, #40)."""

import sys
from pathlib import Path

import requests

from tests.fixtures import LocalService, State, wait_for_state, wait_until
from tests.vtp.local.conftest import custom_job

JOBS = "/v1/projects/local/locations/us-central1/customJobs"
REPLICA = """
import os, sys, time
def held(gate):  # until the test opens the gate
    while not os.path.exists(gate):
        time.sleep(0.02)
print("first line")  # no flush: replicas run unbuffered (PYTHONUNBUFFERED), as on Vertex
held(sys.argv[1])
print("second line")
held(sys.argv[2])
"""


def entries(session: requests.Session, url: str, job_id: str) -> list[dict]:
    body = {
        "resourceNames": ["projects/local"],
        "filter": f'resource.type="ml_job" AND resource.labels.job_id="{job_id}"',
        "orderBy": "timestamp asc",
    }
    answer = session.post(f"{url}/v2/entries:list", json=body, timeout=30)
    answer.raise_for_status()
    return answer.json().get("entries", [])


def test_each_line_is_an_entry_while_the_replica_runs_and_wait_wakes_on_the_next(
    local_service: LocalService, tmp_path: Path
) -> None:
    gate, end, script = tmp_path / "open", tmp_path / "end", tmp_path / "replica.py"
    script.write_text(REPLICA)
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {
            "imageUri": "python:3.11-slim",
            "command": [sys.executable, str(script), str(gate), str(end)],
        },
    }
    job = custom_job(pool, display_name="live-logs")
    session, url = local_service.session(), local_service.url
    session.headers["Content-Type"] = "application/json"  # as every REST client sends
    created = session.post(url + JOBS, data=type(job).to_json(job), timeout=30)
    created.raise_for_status()
    name = created.json()["name"]
    job_id = name.rsplit("/", 1)[-1]

    def printed(text: str) -> dict | None:
        return next((e for e in entries(session, url, job_id) if e["textPayload"] == text), None)

    first = wait_until(lambda: printed("first line"), what="the first line, while it runs")
    assert isinstance(first, dict)
    # The service's own line says which replica starts, and with what command, before it.
    texts = [e["textPayload"] for e in entries(session, url, job_id)]
    assert texts[0].startswith("[vtp local] starting workerpool0-0: ") and str(script) in texts[0]

    gate.touch()
    # Still RUNNING (held at the second gate), so only the new line can answer this long poll
    # before the client gives up waiting (the service would wait 60 s).
    waited = session.get(
        f"{url}/v1/{name}:wait",
        params={"state": "JOB_STATE_RUNNING", "timeout": "60s", "logsAfter": first["timestamp"]},
        timeout=30,
    )
    waited.raise_for_status()
    assert waited.json()["state"] == "JOB_STATE_RUNNING"
    assert printed("second line") is not None

    bad = session.get(
        f"{url}/v1/{name}:wait",
        params={"state": "JOB_STATE_RUNNING", "timeout": "1s", "logsAfter": "yesterday"},
        timeout=30,
    )
    assert bad.status_code == 400 and "logsAfter" in bad.json()["error"]["message"]
    end.touch()
    assert wait_for_state(local_service.client(), name).state == State.JOB_STATE_SUCCEEDED
