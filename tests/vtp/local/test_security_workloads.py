"""Issue #49, finding 1: a container the service runs starts nothing on the host through the API.

A custom job's replica runs in its own image (Debian with Python, through Podman) with the
credential the service gave it, and tries, as round 4's attacker did, every way to get code of
its choosing run on the host as the service's user (where the token is): a CustomJob on this
project's image (whose replicas are host processes), one with a python package, a tuning job on
that image, a PipelineJob and a schedule (their worker and Python tasks are host processes), a
deployment and a batch prediction of a host-served model; and it reads another job's logs. Each
is refused with 403 naming the field (`vtp/local/base/callers.py`), while what stays in a
container (a job in its own image) is created and runs, and its own logs read. The tests below
it check the credential itself: which workload it names, and that it works only for that one.
Skipped where Podman is not installed (`.ci/run` installs it).
"""

import json
from pathlib import Path

import requests

from tests import container_images
from tests.container_images import engine_fixture  # noqa: F401 (container_engine)
from tests.fixtures import LocalService, State, wait_for_state
from tests.vtp.local.conftest import custom_job
from vtp import containers
from vtp.vertex import local_auth

PARENT = "projects/local/locations/us-central1"
OUR_IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"
STEAL = ["python3", "-c", "print(open('/proc/self/environ').read())"]
"""What the attacker wants run on the host: the token is in the service's replicas' environment."""

ATTACK = r"""
import json, os, sys, urllib.error, urllib.request

parent, victim, endpoint, model, image = sys.argv[1:6]
base = os.environ["VTP_LOCAL_ENDPOINT"] + "/"
credential = os.environ["VTP_LOCAL_TOKEN"]

def call(method, path, body=None):
    request = urllib.request.Request(
        base + (path if path.startswith("v2/") else "v1/" + path), method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {credential}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return {"status": answer.status, "body": json.loads(answer.read() or b"{}")}
    except urllib.error.HTTPError as error:
        return {"status": error.code, "body": json.loads(error.read() or b"{}")}

def job(pool, name="child"):
    return {"displayName": name, "jobSpec": {"workerPoolSpecs": [pool]}}

machine = {"machineType": "n1-standard-4"}
ours = {"machineSpec": machine, "replicaCount": "1",
        "containerSpec": {"imageUri": OUR_IMAGE, "command": STEAL}}
package = {"machineSpec": machine, "replicaCount": "1", "pythonPackageSpec": {
    "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
    "packageUris": ["gs://probe/pkg.tar.gz"], "pythonModule": "json.tool"}}
confined = {"machineSpec": machine, "replicaCount": "1",
            "containerSpec": {"imageUri": image, "command": ["python3", "-c", "print('inside')"]}}
study = {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}], "parameters": [
    {"parameterId": "lr", "doubleValueSpec": {"minValue": 0.001, "maxValue": 0.1}}]}
pipeline = {"displayName": "p", "pipelineSpec": {"pipelineInfo": {"name": "p"}},
            "runtimeConfig": {"gcsOutputDirectory": "gs://probe/runs"}}
me = os.environ["CLOUD_ML_JOB_ID"]
report = {
    "our_image": call("POST", f"{parent}/customJobs", job(ours)),
    "package": call("POST", f"{parent}/customJobs", job(package)),
    "tuning": call("POST", f"{parent}/hyperparameterTuningJobs", {
        "displayName": "t", "studySpec": study, "maxTrialCount": 1, "parallelTrialCount": 1,
        "trialJobSpec": {"workerPoolSpecs": [ours]}}),
    "pipeline": call("POST", f"{parent}/pipelineJobs", pipeline),
    "schedule": call("POST", f"{parent}/schedules", {
        "displayName": "s", "cron": "* * * * *", "maxConcurrentRunCount": 1,
        "createPipelineJobRequest": {"parent": parent, "pipelineJob": pipeline}}),
    "deploy": call("POST", f"{endpoint}:deployModel", {"deployedModel": {"model": model}}),
    "batch": call("POST", f"{parent}/batchPredictionJobs", {
        "displayName": "b", "model": model, "inputConfig": {
            "instancesFormat": "jsonl", "gcsSource": {"uris": ["gs://probe/in.jsonl"]}},
        "outputConfig": {"predictionsFormat": "jsonl",
                         "gcsDestination": {"outputUriPrefix": "gs://probe/out"}}}),
    "victim_logs": call("GET", f"{victim}:logs"),
    "victim_entries": call("POST", "v2/entries:list", {
        "resourceNames": ["projects/local"], "filter": ""}),
    "own_logs": call("GET", f"{parent}/customJobs/{me}:logs"),
    "confined": call("POST", f"{parent}/customJobs", job(confined, "confined")),
}
with open("/gcs/probe/report.json", "w") as out:
    json.dump(report, out)
""".replace("OUR_IMAGE", repr(OUR_IMAGE)).replace("STEAL", repr(STEAL))
"""The attacker's script, run in its image with its workload credential."""


def _owner_model_and_endpoint(service: LocalService) -> tuple[str, str]:
    """A model served by this project's image (a host process) and an endpoint, the owner's."""
    session, base = service.session(), f"{service.url}/v1/{PARENT}"
    (service.gcs_root / "probe" / "model").mkdir(parents=True)
    (service.gcs_root / "probe" / "in.jsonl").write_text("[1]\n")
    (service.gcs_root / "probe" / "pkg.tar.gz").write_bytes(b"not read: refused before")
    model = {
        "displayName": "host-served",
        "artifactUri": "gs://probe/model",
        "containerSpec": {"imageUri": OUR_IMAGE, "command": STEAL},
    }
    uploaded = session.post(f"{base}/models:upload", json={"model": model}, timeout=60)
    assert uploaded.status_code == 200, uploaded.text
    made = session.post(f"{base}/endpoints", json={"displayName": "e"}, timeout=60)
    assert made.status_code == 200, made.text
    return made.json()["response"]["name"], uploaded.json()["response"]["model"]


def test_a_container_starts_nothing_on_the_host_and_reads_only_its_own_logs(
    tmp_path, container_engine
) -> None:
    image = container_images.debian_python(container_engine)
    service = LocalService(tmp_path / "state", env=container_engine.service_env()).start()
    try:
        client = service.client()
        host_pool = {
            "machineSpec": {"machineType": "n1-standard-4"},
            "containerSpec": {"imageUri": OUR_IMAGE, "command": ["python3", "-c", "print(42)"]},
        }
        victim = client.create_custom_job(parent=PARENT, custom_job=custom_job(host_pool))
        assert wait_for_state(client, victim.name).state == State.JOB_STATE_SUCCEEDED
        endpoint, model = _owner_model_and_endpoint(service)
        pool = {
            "machineSpec": {"machineType": "n1-standard-4"},
            "containerSpec": {
                "imageUri": image,
                "command": ["python3", "-c", ATTACK],
                "args": [PARENT, victim.name, endpoint, model, image],
            },
        }
        attacker = client.create_custom_job(parent=PARENT, custom_job=custom_job(pool))
        ended = wait_for_state(client, attacker.name, timeout=300)
        assert ended.state == State.JOB_STATE_SUCCEEDED, ended.error.message
        report = json.loads((service.gcs_root / "probe" / "report.json").read_text())
        listed = list(client.list_custom_jobs(parent=PARENT))
        made = [j for j in listed if j.display_name == "confined"]
        confined = wait_for_state(client, made[0].name, timeout=300) if made else None
        session = service.session()
        pipelines = session.get(f"{service.url}/v1/{PARENT}/pipelineJobs", timeout=30).json()
        schedules = session.get(f"{service.url}/v1/{PARENT}/schedules", timeout=30).json()
    finally:
        service.stop()

    refused = {
        "our_image": "workerPoolSpecs[0]",
        "package": "workerPoolSpecs[0]",
        "tuning": "workerPoolSpecs[0]",
        "pipeline": "pipelineJob",
        "schedule": "schedule",
        "deploy": "deployedModel.model",
        "batch": "batchPredictionJob",
    }
    for attempt, field in refused.items():
        answer = report[attempt]
        assert answer["status"] == 403, (attempt, answer)
        assert field in answer["body"]["error"]["message"], (attempt, answer)
        assert attacker.name in answer["body"]["error"]["message"], (attempt, answer)
    # Nothing it asked for exists: no job, run or schedule but the confined one.
    assert sorted(j.display_name for j in listed) == ["confined", "scripted", "scripted"]
    assert pipelines.get("pipelineJobs", []) == [] and schedules.get("schedules", []) == []
    # Another job's logs are not its to read; its own are.
    assert report["victim_logs"]["status"] == 403, report["victim_logs"]
    entries = report["victim_entries"]
    assert entries["status"] == 200, entries
    named = {e["resource"]["labels"]["job_id"] for e in entries["body"].get("entries", [])}
    assert victim.name.rsplit("/", 1)[1] not in named
    assert report["own_logs"]["status"] == 200, report["own_logs"]
    # What stays in a container is created, and runs there.
    assert report["confined"]["status"] == 200, report["confined"]
    assert confined is not None and confined.state == State.JOB_STATE_SUCCEEDED


def test_a_workload_credential_names_its_workload_and_works_for_it_alone(local_service) -> None:
    token = local_service.token
    name = f"{PARENT}/customJobs/123"
    credential = containers.workload_token(token, name)
    assert credential.startswith(containers.WORKLOAD_PREFIX) and token not in credential
    assert local_auth.caller(token, credential) == name
    assert local_auth.caller(token, token) == ""
    # Another workload's name with this one's MAC, or a MAC made without the token: refused.
    other = containers.workload_token(token, f"{PARENT}/customJobs/124")
    forged = other.rsplit(".", 1)[0] + "." + credential.rsplit(".", 1)[1]
    assert local_auth.caller(token, forged) is None
    assert local_auth.caller(token, containers.workload_token("not-the-token", name)) is None
    jobs = f"{local_service.url}/v1/{PARENT}/customJobs"
    for presented, status in ((credential, 200), (forged, 401)):
        answer = requests.get(jobs, headers={"Authorization": f"Bearer {presented}"}, timeout=30)
        assert answer.status_code == status, answer.text


def test_the_container_gets_the_credential_of_its_own_workload(tmp_path: Path) -> None:
    given = containers.client_environment(
        {"VTP_LOCAL_TOKEN": "t" * 43, "A": "1"}, {"PATH": "/usr/bin"}, f"{PARENT}/customJobs/9"
    )
    assert local_auth.caller("t" * 43, given["VTP_LOCAL_TOKEN"]) == f"{PARENT}/customJobs/9"
