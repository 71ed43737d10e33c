"""Where a job's processes meet (the c10d store), and who else can reach it.

torch's TCPStore listens on every interface (it binds the wildcard address whatever host it is
given) and has no authentication: any process that reaches its port, another local user's or
one in another network namespace, reads and writes the job's keys (the gloo peers' addresses,
the keys `distributed.shutdown` waits on). A key prefix or a port nobody knows would not help:
a client may list every key, and `ss` lists every port. So the job's processes meet:

- in a `FileStore` in a folder of this user's alone (mode 0700) when every process of the job
  runs on this machine. The kernel refuses another user's open, whatever they know, and there
  is no socket at all for another network namespace to reach. Two cases: a job of one node
  (the launcher's children: the launcher makes the folder with `mkdtemp` and removes it after),
  and a job of the local service, whose replicas are all processes on this machine: the service
  names the folder in `VTP_RENDEZVOUS_DIR`, a new one per start of the job's replicas (a store
  file is never shared by two starts, so a restarted job never reads an earlier start's keys).
  A folder that is not this user's alone is refused: the store would be readable there.
- otherwise in rank 0's TCPStore at MASTER_ADDR:MASTER_PORT, as torchrun does. On Vertex the
  nodes are different machines and MASTER_ADDR is another host: the store must listen on the
  cluster's network (the job's own, between its VMs). When MASTER_ADDR is a loopback address
  (nodes on this machine without a folder: a replica in a container, which does not see the
  host's folders, or nodes started by hand), rank 0 binds the store's socket to that address
  itself (`master_listen_fd`), so no other network namespace or host reaches it; another local
  user still could, which is why the local service gives its host replicas a folder.

PyTorch is imported when a store is opened, not with this module: the local service imports it
for `RENDEZVOUS_DIR_ENV` and must not pay PyTorch's import.
"""

import contextlib
import datetime
import ipaddress
import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch.distributed import Store

    from vtp.trainer.distributed import Nodes

RENDEZVOUS_DIR_ENV = "VTP_RENDEZVOUS_DIR"
"""A private folder on this machine where every process of the job meets (the local service's)."""
STORE_FILE = "store"
"""The FileStore's file in that folder."""


def folder_from_env(env: Mapping[str, str]) -> str:
    """The folder the local service gave the job's processes to meet in; "" when none.
    ValueError when it is not a folder of this user's alone."""
    folder = env.get(RENDEZVOUS_DIR_ENV, "")
    if folder:
        check_private_folder(folder)
    return folder


def check_private_folder(folder: str) -> None:
    """ValueError unless `folder` is a folder (not a link) of this user's that no one else may
    enter: then no other user can open the store file in it, whatever its own mode.

    Only the folder itself is checked: the service made it in its state directory, whose chain
    it checked, and a replica in a user namespace sees the folders above as nobody's."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        raise ValueError(f"{RENDEZVOUS_DIR_ENV}={folder}: {exc.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"{RENDEZVOUS_DIR_ENV}={folder} is not a folder")
    if info.st_uid != os.geteuid() or info.st_mode & 0o077:
        raise ValueError(
            f"{RENDEZVOUS_DIR_ENV}={folder} is not this user's alone (mode 0700): another "
            "user could read and write the job's store there"
        )


@contextlib.contextmanager
def private_folder() -> Iterator[str]:
    """A new folder of this user's alone (`mkdtemp`: mode 0700, a name no one could plant),
    removed afterwards with what the store left in it."""
    folder = tempfile.mkdtemp(prefix="vtp-rendezvous-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def open_store(
    nodes: "Nodes", world_size: int, is_main: bool, timeout: datetime.timedelta
) -> "Store":
    """The job's store: a FileStore in `nodes.store_dir` when the job has one, else rank 0's
    TCPStore at MASTER_ADDR:MASTER_PORT (the module's docstring says why). Every wait on it,
    and the TCP store's connecting, is bounded by `timeout`."""
    import torch.distributed as dist

    if nodes.store_dir:
        store = dist.FileStore(os.path.join(nodes.store_dir, STORE_FILE), world_size)
        store.set_timeout(timeout)
        return store
    # The store owns `listen_fd` from here on, and closes it even when it fails to start.
    listen_fd = loopback_socket(nodes.master_addr, nodes.master_port) if is_main else None
    return dist.TCPStore(
        nodes.master_addr,
        nodes.master_port,
        world_size,
        is_master=is_main,
        timeout=timeout,
        master_listen_fd=listen_fd,
    )


def loopback_socket(address: str, port: int) -> int | None:
    """A TCP socket bound to `address`:`port` when `address` is a loopback IP address, for the
    store to listen on (the TCP store owns the descriptor); None otherwise, and the store binds
    every interface, as it must when its peers are other machines."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return None  # a host name: the cluster's network
    if not ip.is_loopback:
        return None
    family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        # As the store's own socket: a restarted rank 0 binds its port while old connections
        # to it linger in TIME_WAIT.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
    except BaseException:
        sock.close()
        raise
    return sock.detach()
