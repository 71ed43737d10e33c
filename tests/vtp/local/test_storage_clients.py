"""The Cloud Storage clients users run against one `vtp local serve` (issue #51), each set up as
docs/clients.md says: `gcloud storage` under `vtp local exec` (cp, mv, rsync, rm --recursive,
ls -r, du, objects describe); gsutil pointed by `vtp local env`'s settings (its `gcloud storage`
mode); gcsfs, both as `GCSFileSystem(endpoint_url=..., token=credentials)` and through fsspec's
`gs://` URLs under `vtp local exec`. Every command runs with the internet's proxies set to a
closed local port, so a client that reached past the service would fail at once."""

import base64
import hashlib
import os
import shlex
import sys
from pathlib import Path

import pytest
from google.oauth2.credentials import Credentials

from tests.vtp.local.conftest import client_exec, file_tree, nested_folder, run_client

OFFLINE = {
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
}
"""Requests to anywhere but this machine go to a closed port (the discard port)."""

GCSFS_SETTINGS = {"GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}
"""gcsfs's default class asks Storage Control's gRPC API, at the JSON API's own host and port, for
each bucket's layout, retrying a minute per call; the local service answers that over HTTP as
buckets.getStorageLayout (always flat), which gcsfs's plain class needs no more than its gRPC."""


@pytest.fixture(scope="module")
def client_env(gcloud) -> dict[str, str]:
    """The environment of a user's shell: gcloud's throwaway configuration, no account, no boto
    settings of their own, and no way past this machine."""
    env = {k: v for k, v in gcloud.env.items() if not k.startswith(("BOTO_", "CLOUDSDK_CORE_ACC"))}
    return {**env, **OFFLINE}


def _folder(root: Path) -> Path:
    """`root/data`: two files at the top, one (binary) two folders down."""
    return nested_folder(root, "data", "c.bin", bytes(range(256)) * 8)


def test_gcloud_storage_under_local_exec(client_env, local_service, tmp_path) -> None:
    source = _folder(tmp_path)
    url, bucket = local_service.url, "gs://gcloud-clients"
    stored = local_service.gcs_root / "gcloud-clients"

    def gcloud(*args: str) -> str:
        return run_client(client_exec(url, "gcloud", "storage", *args), client_env, tmp_path).stdout

    gcloud("cp", "--recursive", "data", f"{bucket}/")
    assert file_tree(stored / "data") == file_tree(source)
    assert gcloud("ls", "-r", f"{bucket}/data").split() == [
        f"{bucket}/data/:", f"{bucket}/data/a.txt", f"{bucket}/data/b.json",
        f"{bucket}/data/sub/:", f"{bucket}/data/sub/deeper/:", f"{bucket}/data/sub/deeper/c.bin",
    ]  # fmt: skip
    assert gcloud("du", "-s", bucket).split() == [str(2 + 9 + 2048), bucket]

    described = gcloud("objects", "describe", f"{bucket}/data/sub/deeper/c.bin", "--format=json")
    data = (source / "sub" / "deeper" / "c.bin").read_bytes()
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    assert f'"md5_hash": "{md5}"' in described and '"size": 2048' in described

    gcloud("mv", f"{bucket}/data/a.txt", f"{bucket}/moved/a.txt")
    assert not (stored / "data" / "a.txt").exists()
    assert (stored / "moved" / "a.txt").read_text() == "a\n"

    gcloud("rsync", "--recursive", "data", f"{bucket}/synced")
    assert file_tree(stored / "synced") == file_tree(source)
    again = run_client(
        client_exec(url, "gcloud", "storage", "rsync", "--recursive", "data", f"{bucket}/synced"),
        client_env,
        tmp_path,
    )
    assert "Copying" not in again.stderr  # nothing changed: the hashes and sizes agree
    gcloud("rsync", "--recursive", f"{bucket}/synced", "back")
    assert file_tree(tmp_path / "back") == file_tree(source)

    gcloud("rm", "--recursive", f"{bucket}/synced", f"{bucket}/data", f"{bucket}/moved")
    assert file_tree(stored) == {}


def test_gsutil_pointed_by_local_env(client_env, local_service, tmp_path) -> None:
    """gsutil in a shell that took `vtp local env`'s settings (and has no account of its own):
    its `gcloud storage` mode reaches the service and nothing else."""
    printed = run_client(
        [sys.executable, "-m", "vtp", "local", "env", "--endpoint", local_service.url],
        client_env,
        tmp_path,
    ).stdout
    settings = dict(shlex.split(line)[0].split("=", 1) for line in printed.splitlines() if line)
    assert {"BOTO_CONFIG", "STORAGE_EMULATOR_HOST"} <= settings.keys()
    env = {**client_env, **settings}
    source = _folder(tmp_path)
    stored = local_service.gcs_root / "gsutil-clients"

    run_client(["gsutil", "cp", "-r", "data", "gs://gsutil-clients/"], env, tmp_path)
    assert file_tree(stored / "data") == file_tree(source)
    listed = run_client(["gsutil", "ls", "gs://gsutil-clients/data/"], env, tmp_path).stdout
    assert listed.split() == [
        "gs://gsutil-clients/data/a.txt",
        "gs://gsutil-clients/data/b.json",
        "gs://gsutil-clients/data/sub/",
    ]
    (tmp_path / "back").mkdir()
    run_client(["gsutil", "cp", "-r", "gs://gsutil-clients/data", "back"], env, tmp_path)
    assert file_tree(tmp_path / "back" / "data") == file_tree(source)


def test_gcsfs_with_endpoint_and_credentials(local_service, tmp_path) -> None:
    """gcsfs's plain class given the endpoint and the token as credentials (a raw token string
    would be sent to Google's tokeninfo endpoint first)."""
    core = pytest.importorskip("gcsfs.core")
    fs = core.GCSFileSystem(
        endpoint_url=local_service.url, token=Credentials(local_service.token), project="local"
    )
    source = _folder(tmp_path)
    stored = local_service.gcs_root / "gcsfs-clients"
    fs.mkdir("gcsfs-clients")
    fs.put(str(source), "gcsfs-clients/data", recursive=True)
    assert file_tree(stored / "data") == file_tree(source)
    assert sorted(fs.ls("gcsfs-clients/data")) == [
        "gcsfs-clients/data/a.txt", "gcsfs-clients/data/b.json", "gcsfs-clients/data/sub",
    ]  # fmt: skip
    assert fs.find("gcsfs-clients/data/sub") == ["gcsfs-clients/data/sub/deeper/c.bin"]

    with fs.open("gcsfs-clients/written.bin", "wb", block_size=256 * 1024) as file:
        for _ in range(3):  # past one block: a resumable upload in chunks
            file.write(os.urandom(200 * 1024) + b"\n")
    written = (stored / "written.bin").read_bytes()
    assert len(written) == 3 * (200 * 1024 + 1)
    with fs.open("gcsfs-clients/written.bin", "rb") as file:
        file.seek(200 * 1024)
        assert file.read(1) == b"\n"
    assert fs.cat("gcsfs-clients/written.bin") == written
    info = fs.info("gcsfs-clients/written.bin")
    assert info["size"] == len(written) and info["type"] == "file"

    fs.get("gcsfs-clients/data", str(tmp_path / "back"), recursive=True)
    assert file_tree(tmp_path / "back") == file_tree(source)
    fs.rm("gcsfs-clients/data", recursive=True)
    fs.invalidate_cache()
    assert fs.find("gcsfs-clients") == ["gcsfs-clients/written.bin"]
    assert not (stored / "data").exists()


GS_URLS = """\
import fsspec
fs = fsspec.filesystem("gs")
with fsspec.open("gs://fsspec-clients/dir/note.txt", "w") as file:
    file.write("through gs:// URLs")
print(fsspec.open("gs://fsspec-clients/dir/note.txt").open().read().decode())
print(fs.ls("fsspec-clients/dir"))
fs.rm("fsspec-clients/dir", recursive=True)
print(fs.exists("fsspec-clients/dir/note.txt"))
"""


def test_fsspec_gs_urls_under_local_exec(client_env, local_service, tmp_path) -> None:
    """A program that only names `gs://` paths, run as `vtp local exec -- python`: gcsfs finds
    the service by STORAGE_EMULATOR_HOST and its credentials by the start-up hook."""
    pytest.importorskip("gcsfs")
    env = {**client_env, **GCSFS_SETTINGS}
    out = run_client(
        client_exec(local_service.url, sys.executable, "-c", GS_URLS), env, tmp_path
    ).stdout
    assert out.splitlines() == [
        "through gs:// URLs",
        "['fsspec-clients/dir/note.txt']",
        "False",
    ]
    assert not (local_service.gcs_root / "fsspec-clients" / "dir").exists()
