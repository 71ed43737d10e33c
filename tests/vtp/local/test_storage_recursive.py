"""Whole folders through the real clients (issue #51): `gcloud storage cp|rm --recursive` (which
ask for the bucket's storage layout first) and `gsutil cp -r` under `vtp local exec` (which runs
gsutil as `gcloud storage`, so it reaches the local service only), each from a folder of the
user's own outside the repository."""

import time
from pathlib import Path

import pytest
import requests

from tests.fixtures import State, wait_for_state
from tests.vtp.local.conftest import (
    attempt_client,
    client_exec,
    custom_job,
    file_tree,
    nested_folder,
    run_client,
)
from tests.vtp.local.test_job_requirements import replica_log
from vtp.cli.local_clients import gcloud_settings
from vtp.vertex import local_auth


@pytest.fixture
def user_env(gcloud, local_service) -> dict[str, str]:
    """What a user's shell has after `eval "$(vtp local env)"`: gcloud's throwaway configuration
    and the settings `vtp local env` prints for the service (its token file among them)."""
    url = local_service.url
    return {**gcloud.env, **local_auth.shell_settings(url), **gcloud_settings(gcloud.env)}


def _folder(root: Path) -> Path:
    """`root/dir`: two files at the top, one two folders down."""
    return nested_folder(root, "dir", "c.txt", b"c\n")


def test_storage_layout_is_flat(local_service) -> None:
    headers = {"Authorization": f"Bearer {local_service.token}"}
    url = f"{local_service.url}/storage/v1/b"
    assert requests.post(url, json={"name": "layout-bucket"}, headers=headers).ok
    layout = requests.get(f"{url}/layout-bucket/storageLayout", headers=headers)
    assert layout.status_code == 200
    assert layout.json() == {
        "kind": "storage#storageLayout",
        "bucket": "layout-bucket",
        "location": "US-CENTRAL1",
        "locationType": "region",
        "hierarchicalNamespace": {"enabled": False},
    }
    # A bucket never made is flat too (a write makes it, unless --strict-buckets).
    assert requests.get(f"{url}/never-made/storageLayout", headers=headers).json()["bucket"] == (
        "never-made"
    )
    bad = requests.get(f"{url}/B!/storageLayout", headers=headers)
    assert bad.status_code == 400 and "Invalid bucket name" in bad.json()["error"]["message"]


def test_gcloud_storage_cp_ls_rm_recursive(user_env, local_service, tmp_path) -> None:
    source = _folder(tmp_path)
    gcloud = ["gcloud", "storage"]
    run_client(
        [*gcloud, "cp", "--recursive", "./dir", "gs://recursive-bucket/dir"], user_env, tmp_path
    )
    stored = local_service.gcs_root / "recursive-bucket" / "dir"
    assert file_tree(stored) == file_tree(source)

    listed = run_client([*gcloud, "ls", "gs://recursive-bucket/dir/**"], user_env, tmp_path)
    assert listed.stdout.split() == [
        "gs://recursive-bucket/dir/a.txt",
        "gs://recursive-bucket/dir/b.json",
        "gs://recursive-bucket/dir/sub/deeper/c.txt",
    ]

    (tmp_path / "back").mkdir()  # several objects: gcloud wants an existing folder
    run_client(
        [*gcloud, "cp", "--recursive", "gs://recursive-bucket/dir", "./back"], user_env, tmp_path
    )
    assert file_tree(tmp_path / "back" / "dir") == file_tree(source)

    run_client([*gcloud, "rm", "--recursive", "gs://recursive-bucket/dir"], user_env, tmp_path)
    assert not stored.exists()
    assert (local_service.gcs_root / "recursive-bucket").is_dir()  # the bucket stays
    again = attempt_client(
        [*gcloud, "rm", "--recursive", "gs://recursive-bucket/dir"], user_env, tmp_path
    )
    assert again.returncode == 1 and "matched no objects" in again.stderr


def test_gsutil_cp_r_under_local_exec_lands_in_the_storage_root(
    gcloud, local_service, tmp_path
) -> None:
    """gsutil's own settings are those `vtp local exec` gives it: a gcloud configuration of the
    test's own (no account in it) and nothing else pointing it anywhere."""
    source = _folder(tmp_path)
    env = {k: v for k, v in gcloud.env.items() if not k.startswith(("BOTO_", "CLOUDSDK_CORE_ACC"))}
    url = local_service.url
    run_client(
        client_exec(url, "gsutil", "-m", "cp", "-r", "dir", "gs://gsutil-bucket/"), env, tmp_path
    )
    stored = local_service.gcs_root / "gsutil-bucket" / "dir"
    assert file_tree(stored) == file_tree(source)

    listed = run_client(
        client_exec(url, "gsutil", "ls", "-r", "gs://gsutil-bucket/dir/**"), env, tmp_path
    )
    assert sorted(listed.stdout.split()) == [
        "gs://gsutil-bucket/dir/a.txt",
        "gs://gsutil-bucket/dir/b.json",
        "gs://gsutil-bucket/dir/sub/deeper/c.txt",
    ]
    (tmp_path / "back").mkdir()
    run_client(
        client_exec(url, "gsutil", "cp", "-r", "gs://gsutil-bucket/dir", "back"), env, tmp_path
    )
    assert file_tree(tmp_path / "back" / "dir") == file_tree(source)

    run_client(client_exec(url, "gsutil", "rm", "-r", "gs://gsutil-bucket/dir"), env, tmp_path)
    assert not stored.exists()


def test_gsutil_own_client_under_local_exec_fails_at_once(gcloud, local_service, tmp_path):
    """Were gsutil to run its own client after all (here: asked to on its command line), it is
    pointed at a closed local port: it fails at once, saying so, instead of retrying against
    Cloud Storage."""
    env = {k: v for k, v in gcloud.env.items() if not k.startswith(("BOTO_", "CLOUDSDK_CORE_ACC"))}
    argv = ["gsutil", "-o", "GSUtil:use_gcloud_storage=False", "ls", "gs://some-bucket/"]
    start = time.monotonic()
    result = attempt_client(client_exec(local_service.url, *argv), env, tmp_path)
    assert result.returncode != 0
    assert "gs_json_host is not configured" in result.stderr
    assert time.monotonic() - start < 30


def test_gsutil_settings_keep_the_users_account_and_write_a_private_config(tmp_path) -> None:
    runtime = tmp_path / "runtime"
    mine = local_auth.gsutil_settings(
        {"VTP_RUNTIME_DIR": str(runtime), "CLOUDSDK_CORE_ACCOUNT": "me"}
    )
    assert "CLOUDSDK_CORE_ACCOUNT" not in mine
    path = Path(mine["BOTO_CONFIG"])
    assert path == runtime / local_auth.GSUTIL_CONFIG_FILE
    assert path.read_text() == local_auth.GSUTIL_CONFIG and path.stat().st_mode & 0o077 == 0
    named = local_auth.gsutil_settings({"VTP_RUNTIME_DIR": str(runtime)})
    assert named["CLOUDSDK_CORE_ACCOUNT"] == local_auth.GSUTIL_ACCOUNT


def test_gsutil_inside_a_replica_reaches_the_service(local_service) -> None:
    """A trainer that shells out to `gsutil cp` (Vertex's samples fetch their data so) gets
    gsutil's settings with the rest of the clients' (`client_env`): it reads the service's
    storage, and never retries Cloud Storage for minutes."""
    bucket = local_service.gcs_root / "replica-gsutil"
    bucket.mkdir()
    (bucket / "iris.csv").write_text("5.1,3.5,1.4,0.2,setosa\n")
    command = "gsutil cp gs://replica-gsutil/iris.csv data.csv && cat data.csv"
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "containerSpec": {"imageUri": "python:3.11", "command": ["sh", "-c", command]},
    }
    client = local_service.client()
    created = client.create_custom_job(parent=local_service.parent, custom_job=custom_job(pool))
    ended = wait_for_state(client, created.name, timeout=300)
    log = replica_log(local_service, created.name.rsplit("/", 1)[-1])
    assert ended.state == State.JOB_STATE_SUCCEEDED, log[-3000:]
    assert "5.1,3.5,1.4,0.2,setosa" in log and "Retrying request" not in log
