"""Issue #49: what a replica leaves in storage (or in its working folder) never stops the service.

The attack, as a job runs it: a CustomJob's replica (the service runs as root here, so its
replicas do) leaves a folder tree 1,200 levels deep and a file written by a real second local
user in the storage root (its /gcs) and in its working folder. Before the guard the next start
ended in `RecursionError` (the state directory's walk, `os.walk`, recursed once per folder), or
refused to start ("belongs to another user"); the deep tree made every listing of its bucket
(the JSON API, google-cloud-storage, `gcloud storage ls`) and a batch prediction reading that
bucket a 500. Now every such walk is iterative and bounded (`vtp/engine/tree_walk.py`): the
start skips what it cannot own with one log line, listings answer what in the tree can be an
object, and what is past a walk's entry limit is a 4xx naming it.
"""

import io
import os
import stat
import time
from pathlib import Path

import pytest
import requests
from google.api_core import exceptions

from tests.fixtures import (
    LocalService,
    batch_prediction_job,
    upload_never_ready_model,
    wait_for_state,
)
from tests.vtp.engine.test_tree_walk import DeepTrees
from tests.vtp.engine.test_tree_walk import deep_trees as deep_trees  # fixture
from tests.vtp.local.conftest import DEEP_TREE, custom_job, storage_client
from tests.vtp.local.test_security_state_dir import OTHER_UID, needs_root
from tests.vtp.local.test_security_state_dir import attacker as attacker  # fixture
from vtp.local.base import buckets, state_dir
from vtp.local.base.errors import ApiError
from vtp.local.base.state_dir import StateDir
from vtp.local.batch_prediction import spec
from vtp.local.pipeline_jobs import resource
from vtp.local.storage.objects import Buckets
from vtp.local.storage.routes import StorageApi, StorageRequest
from vtp.private_files import UnsafePath

DEPTH = 1_200
"""Past the ~1,000 frames Python's recursive walks (os.walk, rglob, rmtree) stop at."""

LEAVE = (
    DEEP_TREE
    + r"""
uid, gid, depth = map(int, sys.argv[1:])

def leave(top):
    os.makedirs(top, exist_ok=True)
    os.chmod(top, 0o777)
    folder = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    if os.fork() == 0:  # the second user writes through the open folder, as a container's would
        os.setgroups([]); os.setgid(gid); os.setuid(uid)
        made = os.open("theirs.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder)
        os.write(made, b"another user's")
        os.fchmod(made, 0o644)  # readable by all: the next start must leave it as it is
        os._exit(0)
    assert os.wait()[1] == 0
    os.close(folder)
    deep(os.path.join(top, "deep"), depth)

leave("/gcs/leftovers")
leave(os.getcwd())
print("left")
"""
)
"""The replica's script: a deep tree and another user's file in /gcs and in its own folder."""


def leaving_pool(user: tuple[int, int]) -> dict:
    """A worker pool whose one replica runs LEAVE on this machine (not this project's image)."""
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {
            "imageUri": "python:3.11-slim",
            "command": ["python", "-c", LEAVE, str(user[0]), str(user[1]), str(DEPTH)],
        },
    }


@pytest.mark.slow
def test_what_a_replica_leaves_never_stops_the_next_start(
    attacker, tmp_path, monkeypatch, deep_trees: DeepTrees
):
    state = tmp_path / "state"
    with LocalService(state) as service:
        jobs = service.client()
        leaving = custom_job(leaving_pool(attacker))
        job = jobs.create_custom_job(parent=service.parent, custom_job=leaving)
        ended = wait_for_state(jobs, job.name, timeout=120)
    assert ended.state.name == "JOB_STATE_SUCCEEDED", ended.error.message
    work = state / "jobs" / job.name.rsplit("/", 1)[1] / "work" / "workerpool0-0"
    for top in (
        deep_trees.remove_later(state / "gcs" / "leftovers"),
        deep_trees.remove_later(work),
    ):
        assert os.stat(top / "theirs.txt").st_uid == attacker[0]
        assert (top / "deep" / "d").is_dir()  # the top of the tree 1,200 folders deep
    before = len(service.service_log())

    with LocalService(state) as again:  # before the guard: RecursionError, or "another user"
        log = again.service_log()[before:]
        listed = [b.name for b in storage_client(again, monkeypatch).list_blobs("leftovers")]

    assert listed == ["theirs.txt"]  # the leaf, 1,200 folders down, is no object name
    foreign = [line for line in log.splitlines() if "belongs to another user" in line]
    assert len(foreign) == 1 and str(work / "theirs.txt") in foreign[0], log[-3000:]
    deep = [line for line in log.splitlines() if "folders deep" in line]
    assert len(deep) == 1 and str(work.parent) in deep[0], log[-3000:]
    assert stat.S_IMODE(os.lstat(work / "theirs.txt").st_mode) == 0o644  # left as it is


@pytest.fixture
def deep_bucket(local_service: LocalService, deep_trees: DeepTrees) -> str:
    """A bucket holding one object beside a folder tree 1,200 levels deep, left as a replica
    leaves it (straight into the storage folder)."""
    folder = local_service.gcs_root / "deep-leftovers"
    deep_trees.make(folder / "deep", DEPTH)
    (folder / "kept.txt").write_text("kept")
    (folder / "deep" / "d" / "d" / "note.txt").write_text("an object inside the tree")
    return folder.name


def test_a_deep_tree_lists_within_limits_with_every_client(
    local_service, deep_bucket, gcloud, monkeypatch
):
    session, url = local_service.session(), f"{local_service.url}/storage/v1/b/{deep_bucket}/o"
    whole = session.get(url, timeout=60)
    assert whole.status_code == 200, whole.text  # was a 500 (RecursionError)
    objects = ["deep/d/d/note.txt", "kept.txt"]  # the leaf 1,200 folders down is no name
    assert [item["name"] for item in whole.json()["items"]] == objects
    top = session.get(url, params={"delimiter": "/"}, timeout=60).json()
    assert top["prefixes"] == ["deep/"] and [i["name"] for i in top["items"]] == ["kept.txt"]
    down = session.get(url, params={"prefix": "deep/d/", "delimiter": "/"}, timeout=60).json()
    assert down == {"kind": "storage#objects", "prefixes": ["deep/d/d/"]}

    client = storage_client(local_service, monkeypatch)
    assert [b.name for b in client.list_blobs(deep_bucket)] == objects
    gcloud.env["CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE"] = f"{local_service.url}/storage/v1/"
    token = f"--access-token-file={gcloud.token}"
    listed = gcloud.run_raw("storage", "ls", f"gs://{deep_bucket}", token).stdout.split()
    assert sorted(listed) == [f"gs://{deep_bucket}/deep/", f"gs://{deep_bucket}/kept.txt"]


def test_a_bucket_of_only_a_deep_tree_is_a_409_naming_the_limit(
    local_service, monkeypatch, deep_trees: DeepTrees
):
    deep_trees.make(local_service.gcs_root / "only-deep" / "deep", DEPTH, leaf="")  # folders only
    client = storage_client(local_service, monkeypatch)
    with pytest.raises(exceptions.Conflict, match="512 or more deep"):
        client.bucket("only-deep").delete()  # was a 500 (RecursionError)
    assert (local_service.gcs_root / "only-deep").is_dir()
    (local_service.gcs_root / "shallow" / "a" / "b").mkdir(parents=True)
    client.bucket("shallow").delete()  # a bucket of empty folders within bounds still goes
    assert not (local_service.gcs_root / "shallow").exists()


@pytest.mark.slow
def test_batch_prediction_reads_beside_a_deep_tree(local_service, deep_bucket):
    session, base = local_service.session(), f"{local_service.url}/v1/{local_service.parent}"
    model = upload_never_ready_model(session, base)
    none = batch_prediction_job(model, f"gs://{deep_bucket}/*.jsonl", "gs://deep-out/none")
    failed = ended(session, local_service, create(session, base, none))
    assert failed["state"] == "JOB_STATE_FAILED"  # was INTERNAL: RecursionError
    assert failed["error"]["code"] == 3, failed["error"]
    assert f"no input file matches gs://{deep_bucket}/*.jsonl" in failed["error"]["message"]

    (local_service.gcs_root / deep_bucket / "in.jsonl").write_text("[1, 2]\n")
    found = batch_prediction_job(model, f"gs://{deep_bucket}/*.jsonl", "gs://deep-out/found")
    name = create(session, base, found)
    running = wait_state(session, local_service, name, ("JOB_STATE_RUNNING",))
    assert running["state"] == "JOB_STATE_RUNNING", running  # its input found, its server up
    session.post(f"{local_service.url}/v1/{name}:cancel", timeout=30)
    assert ended(session, local_service, name)["state"] == "JOB_STATE_CANCELLED"


def create(session: requests.Session, base: str, job: dict) -> str:
    created = session.post(f"{base}/batchPredictionJobs", json=job, timeout=30)
    assert created.status_code == 200, created.text
    return created.json()["name"]


ENDED = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")


def wait_state(session, service, name: str, states: tuple[str, ...]) -> dict:
    """The job once it is in one of `states` or has ended (60 s at most)."""
    deadline = time.monotonic() + 60
    while True:
        job = session.get(f"{service.url}/v1/{name}", timeout=30).json()
        if job["state"] in states + ENDED or time.monotonic() > deadline:
            return job
        time.sleep(0.2)


def ended(session, service, name: str) -> dict:
    return wait_state(session, service, name, ENDED)


# -- the bounds themselves, in process -------------------------------------------------------


def test_a_walk_past_its_entry_limit_is_a_4xx_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(buckets, "MAX_WALKED", 10, raising=False)  # raising: see it fail
    (tmp_path / "wide" / "in").mkdir(parents=True)
    for index in range(11):
        (tmp_path / "wide" / "in" / f"{index}.jsonl").write_text("[1]\n")
        (tmp_path / "folders" / str(index)).mkdir(parents=True)
    with pytest.raises(ApiError, match="more than 10 files and folders") as caught:
        list(Buckets(tmp_path).list("wide"))
    assert caught.value.http_status == 400 and "Listing gs://wide/ " in caught.value.message
    query = {"prefix": ["in/"]}
    reply = StorageApi(tmp_path).handle(
        StorageRequest("GET", "/storage/v1/b/wide/o", query, {}, io.BytesIO(), 0)
    )
    assert reply.status == 400 and b"Listing gs://wide/in/ would walk more than 10" in reply.body
    with pytest.raises(ValueError, match="more than 10 files and folders"):
        spec.input_files(["gs://wide/in/*.jsonl"], tmp_path)
    with pytest.raises(ApiError, match="more than 10 entries") as caught:
        Buckets(tmp_path).delete_bucket("folders")  # no object in it, but too many to walk
    assert caught.value.http_status == 409 and (tmp_path / "folders").is_dir()


def test_wildcard_inputs_are_found_beside_a_deep_tree(tmp_path, deep_trees: DeepTrees):
    deep_trees.make(tmp_path / "b" / "in" / "deep", DEPTH, leaf="x.jsonl")
    (tmp_path / "b" / "in" / "a.jsonl").write_text("[1]\n")
    (tmp_path / "b" / "other.jsonl").write_text("[1]\n")
    found = spec.input_files(["gs://b/in/*.jsonl"], tmp_path)
    assert found == [tmp_path / "b" / "in" / "a.jsonl"]  # the leaf's name is past 1,024 bytes


def test_a_runs_deep_outputs_do_not_stop_its_recovery(tmp_path, deep_trees: DeepTrees):
    """At start, a run the last service left in flight has its tasks' jobs cancelled, found by
    walking the run's outputs in storage (`pipeline_jobs/resource.py`): no RecursionError."""
    deep_trees.make(tmp_path / "run" / "task-a", DEPTH)
    (tmp_path / "run" / "task-b").mkdir()
    (tmp_path / "run" / "task-b" / "gcp_resources").write_text(
        '{"resources": [{"resourceType": "CustomJob", '
        '"resourceUri": "https://x/v1/projects/p/locations/l/customJobs/1"}]}'
    )
    assert resource.task_jobs(tmp_path / "run") == ["projects/p/locations/l/customJobs/1"]


def take(state: Path, storage_root: Path | None = None) -> None:
    """Take `state` as a starting service does (`StateDir`: checks, lock, walk, token), then
    let it go."""
    StateDir(state, storage_root).release()


def test_a_deep_tree_alone_never_stops_the_start(tmp_path, monkeypatch, caplog, deep_trees):
    monkeypatch.setenv("VTP_RUNTIME_DIR", str(tmp_path / "runtime"))
    state = tmp_path / "state"
    deep_trees.make(state / "gcs" / "b" / "deep", DEPTH)
    deep_trees.make(state / "pipelines" / "1" / "workspace" / "deep", DEPTH)
    take(state, state / "gcs")  # was RecursionError
    warned = [r.getMessage() for r in caplog.records if r.name == "vtp.local.base.state_dir"]
    assert len(warned) == 1 and "64 folders deep" in warned[0], warned
    assert str(state / "pipelines" / "1" / "workspace") in warned[0]


@needs_root
def test_the_start_skips_what_jobs_left_and_still_refuses_a_plant(
    tmp_path, caplog, monkeypatch, deep_trees: DeepTrees
):
    monkeypatch.setenv("VTP_RUNTIME_DIR", str(tmp_path / "runtime"))
    state = tmp_path / "state"
    work = state / "jobs" / "1" / "work" / "workerpool0-0"
    deep_trees.make(work / "deep", DEPTH)
    deep_trees.make(state / "gcs" / "b" / "deep", DEPTH)
    for theirs in (work / "theirs.txt", state / "gcs" / "b" / "theirs.txt"):
        theirs.write_text("x")
        theirs.chmod(0o644)
        os.lchown(theirs, OTHER_UID, OTHER_UID)
    (state / "gcs" / "b" / "mine.txt").write_text("x")
    (state / "gcs" / "b" / "mine.txt").chmod(0o644)
    state.chmod(0o700)

    take(state, state / "gcs")  # was RecursionError, then UnsafePath

    warned = [r.getMessage() for r in caplog.records if r.name == "vtp.local.base.state_dir"]
    assert len(warned) == 2, warned
    assert str(work / "theirs.txt") in warned[0] and f"uid {OTHER_UID}" in warned[0]
    assert "64 folders deep" in warned[1] and str(work.parent) in warned[1]
    assert stat.S_IMODE((work / "theirs.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((state / "gcs").stat().st_mode) == 0o700  # the root itself narrowed
    assert stat.S_IMODE((state / "gcs" / "b" / "mine.txt").stat().st_mode) == 0o644  # not walked

    planted = state / "tls"
    planted.mkdir()
    os.lchown(planted, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafePath, match="belongs to another user"):
        take(state, state / "gcs")  # the service's own folders: #38 still holds


def test_the_start_walk_stops_at_its_entry_limit_with_one_line(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("VTP_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setattr(state_dir, "MAX_ENTRIES", 20, raising=False)  # raising: see it fail
    work = tmp_path / "state" / "pipelines" / "1" / "workspace"
    work.mkdir(parents=True)
    for index in range(50):
        (work / str(index)).write_text("x")
        (work / str(index)).chmod(0o644)
    take(tmp_path / "state")
    warned = [r.getMessage() for r in caplog.records if r.name == "vtp.local.base.state_dir"]
    assert warned == [
        "the folders jobs write in the state directory hold more than 20 entries; the rest was "
        "left as it is"
    ]
