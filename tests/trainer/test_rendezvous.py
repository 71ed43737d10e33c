"""Where a job's processes meet (vtp.trainer.rendezvous): the rules, in this process.

The attacks themselves (a second local user, another network namespace, during a real job of
the local service) are tests/vtp/local/test_security_rendezvous.py.
"""

import datetime
import os
import socket
import stat
from pathlib import Path

import pytest
import torch.distributed as dist

from vtp.trainer import launch as launch_module
from vtp.trainer import rendezvous
from vtp.trainer.config import parse_args
from vtp.trainer.distributed import Nodes, free_port, nodes_from_env
from vtp.trainer.rendezvous import RENDEZVOUS_DIR_ENV, folder_from_env

TIMEOUT = datetime.timedelta(seconds=30)
OTHER_UID = 54_321
"""A uid no one on the machine has, for a folder 'another user' owns (lchown needs root)."""


def private(path: Path) -> Path:
    path.mkdir(mode=0o700)
    path.chmod(0o700)  # whatever the umask
    return path


def test_no_folder_named_means_a_tcp_store() -> None:
    assert folder_from_env({}) == ""
    master = {"MASTER_ADDR": "workerpool0-0", "MASTER_PORT": "2222", "WORLD_SIZE": "2"}
    assert nodes_from_env(master) == Nodes("workerpool0-0", 2222, 2, 0, store_dir="")


def test_the_services_private_folder_is_where_the_nodes_meet(tmp_path: Path) -> None:
    folder = str(private(tmp_path / "rendezvous"))
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1", "WORLD_SIZE": "2", "RANK": "1"}
    nodes = nodes_from_env({**env, RENDEZVOUS_DIR_ENV: folder})
    assert nodes is not None and nodes.store_dir == folder


@pytest.mark.parametrize("mode", [0o750, 0o705, 0o777], ids=oct)
def test_a_folder_others_may_enter_is_refused(tmp_path: Path, mode: int) -> None:
    folder = private(tmp_path / "rendezvous")
    folder.chmod(mode)
    with pytest.raises(ValueError, match="not this user's alone"):
        folder_from_env({RENDEZVOUS_DIR_ENV: str(folder)})


def test_a_link_or_a_missing_folder_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(private(tmp_path / "real"))
    with pytest.raises(ValueError, match="is not a folder"):
        folder_from_env({RENDEZVOUS_DIR_ENV: str(link)})
    with pytest.raises(ValueError, match="No such file"):
        folder_from_env({RENDEZVOUS_DIR_ENV: str(tmp_path / "missing")})


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_another_users_folder_is_refused(tmp_path: Path) -> None:
    folder = private(tmp_path / "rendezvous")
    os.chown(folder, OTHER_UID, OTHER_UID)
    with pytest.raises(ValueError, match="not this user's alone"):
        folder_from_env({RENDEZVOUS_DIR_ENV: str(folder)})


def test_a_nodes_private_folder_is_its_own_and_goes_afterwards() -> None:
    with rendezvous.private_folder() as folder:
        info = os.lstat(folder)
        assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
        assert info.st_uid == os.geteuid()
        Path(folder, rendezvous.STORE_FILE).write_text("left by the store")
    assert not os.path.exists(folder)


def test_processes_with_a_folder_meet_in_a_file_store_there(tmp_path: Path) -> None:
    folder = str(private(tmp_path / "rendezvous"))
    nodes = Nodes("127.0.0.1", free_port(), count=2, rank=0, store_dir=folder)
    main = rendezvous.open_store(nodes, 2, is_main=True, timeout=TIMEOUT)
    other = rendezvous.open_store(nodes, 2, is_main=False, timeout=TIMEOUT)
    assert isinstance(main, dist.FileStore) and isinstance(other, dist.FileStore)
    other.set("vtp/left/1", "1")
    main.wait(["vtp/left/1"])
    assert main.get("vtp/left/1") == b"1"
    assert os.listdir(folder) == [rendezvous.STORE_FILE]


def test_only_a_loopback_address_gets_a_socket_of_its_own() -> None:
    assert rendezvous.loopback_socket("workerpool0-0", 2222) is None  # Vertex: another host
    assert rendezvous.loopback_socket("10.128.0.7", 2222) is None
    for address, family in (("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)):
        if family == socket.AF_INET6 and not socket.has_ipv6:
            continue
        descriptor = rendezvous.loopback_socket(address, 0)
        assert descriptor is not None
        with socket.socket(fileno=descriptor) as sock:
            assert sock.family == family and sock.getsockname()[0] == address


def test_a_job_of_one_node_launches_its_processes_with_a_private_folder(monkeypatch) -> None:
    seen: list[tuple[Nodes, int]] = []

    def launch_children(config: object, nodes: Nodes, nproc: int) -> int:
        mode = os.lstat(nodes.store_dir).st_mode if os.path.isdir(nodes.store_dir) else 0
        seen.append((nodes, stat.S_IMODE(mode)))
        return 0

    monkeypatch.setattr(launch_module, "_launch_children", launch_children)
    one_node = Nodes("127.0.0.1", free_port(), count=1, rank=0)
    assert launch_module.launch(parse_args([]), one_node, 2) == 0
    (nodes, mode), *_ = seen
    assert nodes.store_dir and mode == 0o700  # while its processes run
    assert not os.path.exists(nodes.store_dir)  # and gone after
    # Nodes on several machines keep their TCP store; a folder the service gave stays theirs.
    two_nodes = Nodes("workerpool0-0", 2222, count=2, rank=1)
    given = Nodes("127.0.0.1", 2222, count=1, rank=0, store_dir="/the/services")
    for other in (two_nodes, given):
        launch_module.launch(parse_args([]), other, 2)
    assert [nodes for nodes, _ in seen[1:]] == [two_nodes, given]
