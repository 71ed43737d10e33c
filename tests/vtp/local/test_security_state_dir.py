"""Issue #38, finding 1: a state directory another local user planted never gets the token.

The attack: the state directory is somewhere another user can create first (`--state-dir
/tmp/...`); that user creates it open to all, plants `.token.<pid>.tmp` files for the next pids
and a `token` link, and the service wrote the token into a file the attacker owns. Now the
service refuses, in one line before it writes anything, a state, runtime or cache folder another
user owns or could replace, and every private file is a new one (`vtp.private_files`).

The attack itself runs as a real second local user, made with `useradd` (skipped where this
process cannot make one: not root, or no `useradd`). The unit tests give planted files to
another uid with `lchown`, which needs root too.
"""

import os
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from vtp import private_files
from vtp.engine import fork_tasks
from vtp.engine.cache import Cache
from vtp.local.base.state_dir import StateDir
from vtp.private_files import UnsafePath

ROOT = os.geteuid() == 0
OTHER_UID = 54_321
"""A uid no one on the machine has: what `lchown` gives the files 'another user' planted."""
needs_root = pytest.mark.skipif(not ROOT, reason="giving a file to another user needs root")
VTP = Path(sys.executable).with_name("vtp")
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin")
"""The attacker's interpreter: one any user may run (ours may sit in a folder only we enter)."""


@pytest.fixture(scope="module")
def attacker() -> Iterator[tuple[int, int]]:
    """(uid, gid) of a real second local user, made for these tests and removed after."""
    useradd = shutil.which("useradd")
    if not ROOT or useradd is None or SYSTEM_PYTHON is None:
        pytest.skip("no second local user can be made here (needs root, useradd and python3)")
    name = f"vtpattk{secrets.token_hex(4)}"
    made = subprocess.run([useradd, "--no-create-home", name], capture_output=True, text=True)
    if made.returncode:
        pytest.skip(f"useradd could not make a second user: {made.stderr.strip()}")
    try:
        import pwd

        entry = pwd.getpwnam(name)
        yield entry.pw_uid, entry.pw_gid
    finally:
        subprocess.run(["userdel", name], capture_output=True)


def as_user(user: tuple[int, int], script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run Python `script` as `user` (no supplementary groups), with `args` as sys.argv[1:]."""
    uid, gid = user
    return subprocess.run(
        [str(SYSTEM_PYTHON), "-I", "-c", script, *args],
        user=uid, group=gid, extra_groups=[], capture_output=True, text=True, cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": "/"},
    )  # fmt: skip


PLANT = """
import os, sys
state = sys.argv[1]
os.umask(0)
os.makedirs(state, mode=0o777, exist_ok=True)
os.chmod(state, 0o777)
last = int(open("/proc/sys/kernel/ns_last_pid").read())
for pid in range(last + 1, last + 400):  # the next pids: the service's is one of them
    with open(os.path.join(state, f".token.{pid}.tmp"), "w") as planted:
        os.fchmod(planted.fileno(), 0o666)
with open(os.path.join(state, "mine"), "w") as mine:
    os.fchmod(mine.fileno(), 0o666)
os.symlink(os.path.join(state, "mine"), os.path.join(state, "token"))
print("planted")
"""
"""The attacker's steps: the state directory, open to all, with files waiting for the token."""

READ = """
import os, sys
found = []
for folder, _, files in os.walk(sys.argv[1]):
    for name in files:
        try:
            found.append(open(os.path.join(folder, name)).read())
        except OSError:
            pass
print("TOKEN" if any(sys.argv[2] in text for text in found) else "nothing")
"""
"""What the attacker then reads: every file they can, looking for the token."""


def serve(state_dir: Path, runtime: Path) -> subprocess.CompletedProcess[str]:
    """`vtp local serve --state-dir STATE_DIR` as the user would type it; it must end at once."""
    env = {**os.environ, "VTP_RUNTIME_DIR": str(runtime)}
    return subprocess.run(
        [str(VTP), "local", "serve", "--port", "0", "--state-dir", str(state_dir)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip


def test_a_state_directory_another_user_planted_is_refused(attacker, tmp_path) -> None:
    shared = Path(tempfile.mkdtemp(prefix="vtp-shared-"))  # as /tmp: sticky, open to all
    shared.chmod(0o1777)
    state = shared / "state"
    try:
        planted = as_user(attacker, PLANT, str(state))
        assert planted.stdout.strip() == "planted", planted.stderr
        before = {p.name: p.lstat().st_size for p in state.iterdir()}

        served = serve(state, tmp_path / "runtime")

        assert served.returncode == 1
        lines = served.stderr.strip().splitlines()
        assert len(lines) == 1, served.stderr
        assert lines[0].startswith("vtp: error: refusing to start: ")
        assert str(state) in lines[0] and "another user" in lines[0]
        assert "Serving" not in served.stdout
        # Nothing was written there: no token, every planted file as it was.
        assert {p.name: p.lstat().st_size for p in state.iterdir()} == before
        assert not (state / "service.lock").exists()
        assert not (tmp_path / "runtime").exists() or not any((tmp_path / "runtime").iterdir())
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_a_folder_another_user_could_swap_out_is_refused(attacker, tmp_path) -> None:
    """The attacker owns no part of the path, but may write the folder above it (no sticky
    bit): they could rename the state directory away and put their own in its place."""
    shared = Path(tempfile.mkdtemp(prefix="vtp-open-"))
    try:
        shared.chmod(0o777)
        state = shared / "state"
        state.mkdir(mode=0o700)  # the user's own, from an earlier run
        served = serve(state, tmp_path / "runtime")
        assert served.returncode == 1
        assert "writable by other users without the sticky bit" in served.stderr
        assert len(served.stderr.strip().splitlines()) == 1
        # Had the service gone on, the attacker could have swapped the folder out:
        swapped = as_user(attacker, "import os,sys; os.rename(sys.argv[1], sys.argv[1] + '.x')",
                          str(state))  # fmt: skip
        assert swapped.returncode == 0, swapped.stderr
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_the_token_of_a_service_in_a_safe_place_stays_out_of_reach(attacker) -> None:
    """In a folder of the user's own under /tmp (sticky), the service starts, and the other
    user can read none of its files: neither the token nor the runtime file."""
    shared = Path(tempfile.mkdtemp(prefix="vtp-safe-"))
    try:
        shared.chmod(0o755)
        held = StateDir(shared / "state")
        try:
            token = (shared / "state" / "token").read_text().strip()
            assert token == held.token
            read = as_user(attacker, READ, str(shared), token)
            assert read.returncode == 0, read.stderr
            assert read.stdout.strip() == "nothing"
        finally:
            held.release()
    finally:
        shutil.rmtree(shared, ignore_errors=True)


@needs_root
def test_planted_token_files_and_links_are_refused(tmp_path) -> None:
    """A folder of the user's that was open for a while: another user planted a temporary
    file and a `token` link in it. The service refuses, and writes nothing through them."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    outside = tmp_path / "attackers-file"
    outside.write_text("")
    (state / "token").symlink_to(outside)
    os.lchown(state / "token", OTHER_UID, OTHER_UID)
    (state / f".token.{os.getpid()}.tmp").write_text("")
    os.lchown(state / f".token.{os.getpid()}.tmp", OTHER_UID, OTHER_UID)

    with pytest.raises(UnsafePath, match="belongs to another user"):
        StateDir(state)
    assert outside.read_text() == ""
    assert (state / "token").is_symlink()


def test_links_and_stale_temporary_files_of_the_users_own_get_nothing(tmp_path) -> None:
    """Even the user's own leftovers are never written through: the token is a new file."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    outside = tmp_path / "elsewhere"
    outside.write_text("")
    (state / "token").symlink_to(outside)
    (state / f".token.{os.getpid()}.tmp").symlink_to(outside)

    held = StateDir(state)
    try:
        token_file = state / "token"
        assert not token_file.is_symlink()
        assert token_file.read_text().strip() == held.token
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert outside.read_text() == ""
    finally:
        held.release()


@needs_root
def test_a_state_directory_owned_by_another_user_is_refused(tmp_path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    os.chown(state, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafePath, match=f"uid {OTHER_UID}"):
        StateDir(state)
    assert not (state / "token").exists()


def test_an_open_folder_above_without_the_sticky_bit_is_refused(tmp_path) -> None:
    above = tmp_path / "open"
    above.mkdir()
    above.chmod(0o777)
    with pytest.raises(UnsafePath, match="without the sticky bit"):
        StateDir(above / "state")
    above.chmod(0o1777)  # as /tmp: only an entry's owner may rename or remove it
    held = StateDir(above / "state")
    held.release()


@needs_root
def test_a_link_of_another_user_on_the_way_is_refused(tmp_path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    os.lchown(link, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafePath, match="belongs to another user"):
        private_files.private_dir(link / "state")


def test_a_loose_folder_of_the_users_own_ends_at_0700(tmp_path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o755)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    runtime.chmod(0o775)
    os.environ["VTP_RUNTIME_DIR"], kept = str(runtime), os.environ.get("VTP_RUNTIME_DIR")
    try:
        StateDir(state).release()
    finally:
        if kept is not None:
            os.environ["VTP_RUNTIME_DIR"] = kept
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert stat.S_IMODE(runtime.stat().st_mode) == 0o700


@needs_root
def test_the_pipeline_cache_refuses_another_users_folder_and_entries(tmp_path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    os.chown(folder, OTHER_UID, OTHER_UID)
    with pytest.raises(UnsafePath, match="another user"):
        Cache(folder)
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    cache = Cache(mine)
    assert stat.S_IMODE(mine.stat().st_mode) == 0o700
    planted = mine / "k.json"
    planted.write_text('{"parameters": {"x": 1}}')
    os.chown(planted, OTHER_UID, OTHER_UID)
    assert cache.get("k") is None  # an entry the user did not write decides nothing
    cache.put("k", {"parameters": {"x": 2}})
    assert cache.get("k") == {"parameters": {"x": 2}}


def test_the_fork_servers_socket_is_never_in_a_swappable_folder(tmp_path, monkeypatch) -> None:
    open_tmp = tmp_path / "tmp"
    open_tmp.mkdir()
    open_tmp.chmod(0o777)  # a $TMPDIR anyone may write, without the sticky bit
    monkeypatch.setattr(tempfile, "tempdir", str(open_tmp))
    server = fork_tasks.TaskServer()
    try:
        with pytest.raises(UnsafePath, match="without the sticky bit"):
            server.start()
        assert server.socket_path == ""
    finally:
        server.stop()


def test_private_files_are_read_only_when_regular_and_the_users(tmp_path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UnsafePath, match="not a regular file"):
        private_files.read_private(fifo)  # and never blocks waiting for a writer
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "target")
    (tmp_path / "target").write_text("x")
    with pytest.raises(UnsafePath, match="symbolic link"):
        private_files.read_private(link)


def test_a_storage_root_holding_the_state_directory_is_refused(tmp_path) -> None:
    """Replicas and containers see the storage root at /gcs: it must not hold the token."""
    served = subprocess.run(
        [str(VTP), "local", "serve", "--port", "0", "--state-dir", str(tmp_path / "state"),
         "--gcs-root", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "VTP_RUNTIME_DIR": str(tmp_path / "runtime")},
    )  # fmt: skip
    assert served.returncode == 1
    assert served.stderr.strip().splitlines() == [
        f"vtp: error: refusing to start: the storage root {tmp_path} holds the state directory "
        f"{tmp_path / 'state'}, so every replica, container and storage client would reach the "
        "token there; choose a --gcs-root outside it"
    ]
    assert not (tmp_path / "state" / "token").exists()
