"""Issue #49: a DDP job's rendezvous store is out of another user's and network namespace's reach.

The attack: torch's TCPStore, which rank 0 of our trainer hosted at MASTER_ADDR:MASTER_PORT,
listens on every interface and has no authentication, so any process that reached the port read
and wrote the job's keys: another local user over 127.0.0.1, a process in another network
namespace (a container, a VM's bridge) over this machine's other addresses. Now a job whose
processes all run on this machine meets in a FileStore in a private folder (mode 0700) the
service makes per start of its replicas (vtp.trainer.rendezvous), and nothing listens on
MASTER_PORT; a store at a loopback MASTER_ADDR without a folder (a replica in a container) is
bound to that address.

The attacker is a real second local user (`attacker`, made with `useradd`): its process imports
PyTorch as root (the virtualenv is under /root, which only root enters), then gives up root for
good (setgroups, setgid, setuid) before it touches the job; what the kernel allows it from then
on is what that user may do. The other network namespace is a new one (`unshare --net`) joined to
this one by a veth pair, as a container's is: from there this machine is one address away.
Everything here needs root (skipped otherwise).
"""

import contextlib
import datetime
import json
import os
import random
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest
import torch.distributed as dist
from google.cloud import aiplatform_v1

from tests.fixtures import REPO, State, wait_for_state, wait_until
from tests.trainer.conftest import TINY
from tests.vtp.local.conftest import two_replica_trainer_job
from tests.vtp.local.test_security_state_dir import attacker as attacker  # fixture
from vtp.local.runtime.cluster import Cluster, replica_environment
from vtp.trainer import rendezvous
from vtp.trainer.distributed import Nodes, free_port

PER_PROCESS_BATCH = cast(int, TINY["batch_size"]) // 2
NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="a second user and a netns need root")

ATTACK = r"""
import datetime, errno, json, os, socket, sys
import torch.distributed as dist

uid, gid, host, port, folder = sys.argv[1:]
uid, gid, port = int(uid), int(gid), int(port)
if uid:
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
found = {"uid": os.getuid()}
probe = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
probe.settimeout(30)
try:
    probe.connect((host, port))
except OSError as exc:
    found["tcp"] = errno.errorcode.get(exc.errno, str(exc))
else:
    found["tcp"] = "connected"
    store = dist.TCPStore(host, port, is_master=False, timeout=datetime.timedelta(seconds=30))
    found["keys"] = sorted(store.list_keys())
    store.set("attacker", "was here")
    found["wrote"] = store.get("attacker").decode()
finally:
    probe.close()
if folder:
    store_file = os.path.join(folder, "store")
    for what, act in {
        "list": lambda: os.listdir(folder),
        "read": lambda: open(store_file, "rb").read(),
        "write": lambda: open(store_file, "ab").close(),
        "plant": lambda: open(os.path.join(folder, "planted"), "x").close(),
    }.items():
        try:
            act()
            found[what] = "done"
        except OSError as exc:
            found[what] = errno.errorcode.get(exc.errno, str(exc))
print(json.dumps(found))
"""
"""The attacker: connect to the store's port and, if that works, list the job's keys and write
one; then list, read, write and plant files in the rendezvous folder. Prints what happened."""

REFUSED = {"tcp": "ECONNREFUSED"}
DENIED = {"list": "EACCES", "read": "EACCES", "write": "EACCES", "plant": "EACCES"}


def attack(
    user: tuple[int, int] | None, host: str, port: int, folder: str = "", prefix: tuple = ()
) -> dict:
    """What ATTACK found, run as `user` (None: stays root) through `prefix` (another netns)."""
    uid, gid = user or (0, 0)
    argv = [*prefix, sys.executable, "-I", "-c", ATTACK, str(uid), str(gid), host, str(port)]
    done = subprocess.run(
        [*argv, folder], capture_output=True, text=True, cwd="/", timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": "/"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found.pop("uid") == uid
    return found


@contextlib.contextmanager
def other_namespace() -> Iterator[tuple[tuple[str, ...], str]]:
    """A new network namespace joined to this one by a veth pair: (the command prefix that
    runs a program in it, this machine's address as seen from it). Removed afterwards."""
    tools = [shutil.which(name) for name in ("unshare", "nsenter", "ip")]
    if None in tools:
        pytest.skip("no unshare, nsenter or ip to make another network namespace")
    holder = subprocess.Popen(
        ["unshare", "--net", sys.executable, "-c", "print('in', flush=True); input()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    host_side = f"vtp{secrets.token_hex(4)}"
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "in\n"
        assert os.readlink(f"/proc/{holder.pid}/ns/net") != os.readlink("/proc/self/ns/net")
        # A /30 of 198.18.0.0/15 (for benchmarks: on no real network), at random.
        net = f"198.{random.choice((18, 19))}.{random.randrange(256)}"
        last = 4 * random.randrange(64)
        here, there = f"{net}.{last + 1}", f"{net}.{last + 2}"
        inside = ("nsenter", "-t", str(holder.pid), "-n", "--")
        for command in (
            ["ip", "link", "add", host_side, "type", "veth", "peer", "name", "peer0", "netns",
             str(holder.pid)],
            ["ip", "addr", "add", f"{here}/30", "dev", host_side],
            ["ip", "link", "set", host_side, "up"],
            [*inside, "ip", "addr", "add", f"{there}/30", "dev", "peer0"],
            [*inside, "ip", "link", "set", "peer0", "up"],
            [*inside, "ip", "link", "set", "lo", "up"],
        ):  # fmt: skip
            made = subprocess.run(command, capture_output=True, text=True)
            if made.returncode:
                pytest.skip(f"cannot join a network namespace to this one: {made.stderr}")
        yield inside, here
    finally:
        subprocess.run(["ip", "link", "del", host_side], capture_output=True)
        holder.communicate("\n", timeout=30)


def listening(port: int) -> set[str]:
    """The addresses (hex, as /proc/net/tcp* writes them) a socket listens on at `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


def started_with(job_id: str) -> list[dict[str, str]]:
    """The environments the job's trainer processes started with (root reads any process's)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            raw = (proc / "environ").read_bytes() if proc.name.isdigit() else b""
        except OSError:
            continue
        env = dict(item.partition("=")[::2] for item in raw.decode(errors="replace").split("\0"))
        if env.get("CLOUD_ML_JOB_ID") == job_id and "MASTER_PORT" in env:
            found.append(env)
    return found


def gated_job(gate: Path, steps: int) -> dict:
    """Two replicas (pools 0 and 1) of the tiny run, held at the gate after `steps` steps."""
    env = {
        "OMP_NUM_THREADS": "1",
        "PYTHONPATH": str(REPO),
        "GATE_DIR": str(gate),
        "GATE_AFTER": str(steps * PER_PROCESS_BATCH),
        "CLOUD_ML_HP_METRIC_FILE": str(gate.parent / "metrics"),
    }
    flags = {**TINY, "max_steps": steps + 2}
    return two_replica_trainer_job("rendezvous", "gs://runs/rendezvous", flags, env)


@NEEDS_ROOT
@pytest.mark.slow
def test_a_local_ddp_jobs_store_is_out_of_another_users_and_namespaces_reach(
    local_service, attacker, tmp_path
):
    gate = tmp_path / "gate"
    gate.mkdir()
    client = local_service.client()
    job = aiplatform_v1.CustomJob(gated_job(gate, steps=2))
    name = client.create_custom_job(parent=local_service.parent, custom_job=job).name
    job_id = name.rsplit("/", 1)[-1]
    job_dir = local_service.state_dir / "jobs" / job_id

    def held() -> bool:
        return (gate / "waiting.0").exists() and (gate / "waiting.1").exists()

    try:
        wait_until(held, timeout=180, what="both replicas to train and reach the gate")
        nodes = started_with(job_id)  # each replica's processes (its shim's too)
        assert {env["RANK"] for env in nodes} == {"0", "1"}
        port, folder = int(nodes[0]["MASTER_PORT"]), nodes[0].get(rendezvous.RENDEZVOUS_DIR_ENV, "")
        # Another user's connection to MASTER_PORT is refused, and the folder refuses them
        # whatever they know of it; another network namespace reaches no store at this machine's
        # address either.
        assert attack(attacker, "127.0.0.1", port, folder) == {**REFUSED, **DENIED}
        with other_namespace() as (inside, this_machine):
            assert attack(None, this_machine, port, prefix=inside) == REFUSED
        # Nothing listens on MASTER_PORT: the store is a file in a folder of the service user's
        # alone, in the job's folder, the same for both replicas.
        assert listening(port) == set()
        assert Path(folder).parent == job_dir / "rendezvous"
        assert (os.stat(folder).st_mode & 0o777, os.listdir(folder)) == (0o700, ["store"])
        assert {env[rendezvous.RENDEZVOUS_DIR_ENV] for env in nodes} == {folder}
    finally:
        (gate / "open").touch()  # the job goes on, whatever the attacks did

    assert wait_for_state(client, name, timeout=180).state == State.JOB_STATE_SUCCEEDED
    primary_log = (job_dir / "logs" / "workerpool0-0.log").read_text()
    assert f"waiting for 2 processes in {folder}" in primary_log
    assert "joined 2 processes on 2 nodes" in primary_log
    model = local_service.gcs_root / "runs" / "rendezvous" / "model" / "model.pt"
    assert model.is_file()
    assert not (job_dir / "rendezvous").exists()  # removed with the job


@NEEDS_ROOT
def test_a_store_at_a_loopback_master_addr_is_out_of_another_namespaces_reach(attacker):
    """No folder (a replica in a container, nodes started by hand): rank 0's TCP store at a
    loopback MASTER_ADDR listens there alone, where torch's own listens on every interface."""
    timeout = datetime.timedelta(seconds=30)
    ours = rendezvous.open_store(Nodes("127.0.0.1", free_port(), 1, 0), 1, True, timeout)
    torchs = dist.TCPStore("127.0.0.1", free_port(), 1, is_master=True, timeout=timeout)
    assert isinstance(ours, dist.TCPStore)
    for store in (ours, torchs):
        store.set("job", "key")
    assert listening(ours.port) == {"0100007F"}  # 127.0.0.1
    with other_namespace() as (inside, this_machine):
        assert attack(None, this_machine, ours.port, prefix=inside) == REFUSED
        # What the attacker gets from a store as torch makes it (how the test knows its probe
        # works): the job's keys, and a key of its own written.
        stolen = attack(None, this_machine, torchs.port, prefix=inside)
        assert stolen == {"tcp": "connected", "keys": ["job"], "wrote": "was here"}
    # The store still serves its own job (which a user on this machine may reach: the local
    # service gives its replicas on this machine a folder for that reason).
    peer = dist.TCPStore("127.0.0.1", ours.port, is_master=False, timeout=timeout)
    assert peer.get("job") == b"key"


def test_only_the_pytorch_nodes_of_a_job_on_this_machine_get_the_folder() -> None:
    pools = (("127.0.0.1:1",), ("127.0.0.1:2",), ("127.0.0.1:3",))
    cluster = Cluster("1", pools, "{}", rendezvous_dir="/state/jobs/1/rendezvous/ab")
    named = [replica_environment(cluster, pool, 0).get(rendezvous.RENDEZVOUS_DIR_ENV)
             for pool in range(3)]  # fmt: skip
    assert named == [cluster.rendezvous_dir, cluster.rendezvous_dir, None]
    in_images = Cluster("1", pools, "{}")
    assert rendezvous.RENDEZVOUS_DIR_ENV not in replica_environment(in_images, 0, 0)
