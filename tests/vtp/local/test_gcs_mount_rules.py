"""How replicas get /gcs, as pure decisions: the command wrapper, and when a job is refused."""

from pathlib import Path

import pytest

from vtp.local.runtime import gcs_mount


def test_jobs_naming_fuse_paths_are_recognised() -> None:
    assert gcs_mount.names_fuse_paths(["python", "train.py", "--data=/gcs/bucket/x"])
    assert not gcs_mount.names_fuse_paths(["python", "train.py", "--data=gs://bucket/x"])


def test_without_a_mount_point_a_user_is_told_how_to_make_one(monkeypatch, tmp_path) -> None:
    gcs_mount.problem.cache_clear()
    monkeypatch.setattr(gcs_mount, "FUSE_ROOT", tmp_path / "no-gcs-here")
    monkeypatch.setattr(gcs_mount.os, "geteuid", lambda: 1000)
    try:
        assert "sudo mkdir /gcs" in gcs_mount.problem()
        argv = ["python", "x.py"]
        assert gcs_mount.wrap(argv, tmp_path) == argv  # run as is: no namespace to give
    finally:
        gcs_mount.problem.cache_clear()


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux only")
def test_where_it_can_a_command_is_wrapped_in_a_private_mount_namespace(tmp_path) -> None:
    gcs_mount.problem.cache_clear()
    if gcs_mount.problem():
        pytest.skip(gcs_mount.problem())
    wrapped = gcs_mount.wrap(["python", "x.py"], tmp_path)
    assert wrapped[0] == "unshare" and "--mount" in wrapped and wrapped[-2:] == ["python", "x.py"]
    assert str(tmp_path) in wrapped
