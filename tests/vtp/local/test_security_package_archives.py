"""Issue #49: a package archive swapped between the service's hash and pip's install never
poisons the package cache, and a dependency marker that cannot be evaluated fails the job
clearly, never with "Internal error".

The swap: a python-package CustomJob's `packageUris` names an archive in storage that someone
else can write too (a team's shared bucket folder under `--gcs-root`, or a concurrent job). The
service hashes the archive (the cache key), then pip installed it from the shared path, so an
attacker who replaced the file between the two got their code into the cached install that every
later job with the original archive runs. Now each archive is copied once into a private folder
of the service's (mode 0700 in the state directory), hashed as it is copied, and pip installs
the copy (`vtp/local/runtime/packages.py`, `staged`).

The attacker is a real second process that watches /proc for the install's pip and replaces the
archive the moment it appears (after the hash, before pip reads the file): as a real second local
user where one can be made (`attacker`, as in test_security_state_dir.py: root and useradd), and
as another process of the service's user (a job) everywhere.
"""

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

from tests.fixtures import FAST_FLAGS, LocalService, State, wait_for_state
from tests.vtp.local.conftest import (
    custom_job,
    write_sdist,
    write_source_archive,
    write_wheel,
)
from tests.vtp.local.test_security_state_dir import SYSTEM_PYTHON, attacker  # noqa: F401

pytestmark = pytest.mark.slow

MODULE = "vtppoison"
ARCHIVE = f"{MODULE}-0.1.tar.gz"

WATCH_AND_SWAP = """
import json, os, sys, time
archive, evil = sys.argv[1], sys.argv[2]
name = os.path.basename(archive)
deadline = time.monotonic() + 300
while time.monotonic() < deadline:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                args = [a.decode(errors="replace") for a in cmdline.read().split(b"\\0")]
        except OSError:
            continue
        reads = [a for a in args if a.endswith(name)]
        if "pip" not in args or "--no-deps" not in args or not reads:
            continue
        planted = archive + ".planted"  # the swap: a rename over the archive, at once
        with open(evil, "rb") as source, open(planted, "wb") as out:
            out.write(source.read())
        os.replace(planted, archive)
        try:
            open(reads[0], "rb").close()
            readable = True
        except OSError:
            readable = False
        print(json.dumps({"swapped": True, "pip_reads": reads[0], "readable": readable}))
        sys.exit(0)
    time.sleep(0.001)
print(json.dumps({"swapped": False}))
"""
"""The attacker: wait for the install's pip (it names the archive), then replace the archive,
and say what pip was told to read and whether the attacker could open it."""


def package_pool(uri: str, module: str) -> dict:
    """A worker pool (REST JSON) that installs `uri` and runs `python -m module`."""
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "pythonPackageSpec": {
            "executorImageUri": "python:3.11",
            "packageUris": [uri],
            "pythonModule": module,
        },
    }


def run_job(
    service: LocalService, uri: str, module: str = MODULE
) -> tuple[aiplatform_v1.CustomJob, str]:
    """Run a package job to its end with the real SDK client: (the job, its replica's log)."""
    client = service.client()
    job = client.create_custom_job(
        parent=service.parent, custom_job=custom_job(package_pool(uri, module))
    )
    ended = wait_for_state(client, job.name, timeout=300)
    job_id = job.name.rsplit("/", 1)[1]
    log = service.state_dir / "jobs" / job_id / "logs" / "workerpool0-0.log"
    return ended, log.read_text() if log.exists() else ""


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """A storage root whose `team` bucket folder others may write (a team's shared folder)."""
    root = Path(tempfile.mkdtemp(prefix="vtp-shared-gcs-"))
    try:
        root.chmod(0o755)
        (root / "team").mkdir(mode=0o777)
        (root / "team").chmod(0o777)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def service(tmp_path: Path, shared_root: Path) -> Iterator[LocalService]:
    started = LocalService(tmp_path / "state", *FAST_FLAGS, "--gcs-root", str(shared_root))
    yield started.start()
    started.stop()


def archives(shared_root: Path) -> tuple[Path, Path]:
    """(the team's archive in storage, the attacker's look-alike outside the bucket), each a
    package `vtppoison` whose `python -m` prints who wrote it, readable by all."""
    original = shared_root / "team" / ARCHIVE
    write_sdist(original, MODULE, __main___py="print('ORIGINAL CODE')\n")
    evil = shared_root / "evil" / ARCHIVE
    write_sdist(evil, MODULE, __main___py="print('ATTACKER CODE')\n")
    evil.parent.chmod(0o755)
    for archive in (original, evil):
        archive.chmod(0o644)
    return original, evil


def watcher(user: tuple[int, int] | None, archive: Path, evil: Path) -> subprocess.Popen[str]:
    """The attacker's watching process, as `user` (None: this user, as a job would be)."""
    who: dict = {}
    if user is not None:
        who = {"user": user[0], "group": user[1], "extra_groups": []}
    return subprocess.Popen(
        [str(SYSTEM_PYTHON), "-I", "-c", WATCH_AND_SWAP, str(archive), str(evil)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd="/",
        env={"PATH": "/usr/bin:/bin", "HOME": "/"}, **who,
    )  # fmt: skip


def swap_during_install(service: LocalService, shared_root: Path, user) -> dict:
    """Run the team's job while the attacker swaps its archive; what the attacker reports, with
    the job and its log."""
    original, evil = archives(shared_root)
    team_bytes = original.read_bytes()
    attack = watcher(user, original, evil)
    try:
        job, log = run_job(service, f"gs://team/{ARCHIVE}")
        out, err = attack.communicate(timeout=60)
    finally:
        attack.kill()
    report = json.loads(out.strip().splitlines()[-1]) if out.strip() else {"error": err}
    assert report.get("swapped"), f"the attacker never saw the install: {report}"
    assert original.read_bytes() == evil.read_bytes()  # storage now holds the attacker's
    return {"report": report, "job": job, "log": log, "team_bytes": team_bytes}


def cached_main(service: LocalService) -> list[str]:
    """What every cached install of the package runs."""
    cache = service.state_dir / "packages" / "archives"
    return [p.read_text() for p in cache.glob(f"*/{MODULE}/__main__.py")]


def check_contained(service: LocalService, shared_root: Path, attacked: dict) -> None:
    """The job ran the team's code, the cache holds only it, and a later job with the original
    archive (same name and bytes: the same cache key) runs it too."""
    assert attacked["job"].state == State.JOB_STATE_SUCCEEDED, attacked["job"].error
    assert "ORIGINAL CODE" in attacked["log"] and "ATTACKER CODE" not in attacked["log"]
    assert cached_main(service) == ["print('ORIGINAL CODE')\n"]
    pip_read = Path(attacked["report"]["pip_reads"])
    assert pip_read.is_relative_to(service.state_dir / "packages")  # the private copy
    assert not any((service.state_dir / "packages").glob(".staged-*"))  # removed after pip

    kept = shared_root / "kept" / ARCHIVE  # the team's own copy, put back in a folder of theirs
    kept.parent.mkdir()
    kept.write_bytes(attacked["team_bytes"])
    later, log = run_job(service, f"gs://kept/{ARCHIVE}")
    assert later.state == State.JOB_STATE_SUCCEEDED, later.error
    assert "ORIGINAL CODE" in log and "ATTACKER CODE" not in log
    assert cached_main(service) == ["print('ORIGINAL CODE')\n"]  # one install: the cache's


def test_an_archive_another_user_swaps_during_the_install_never_reaches_the_cache(
    service,
    shared_root,
    attacker,  # noqa: F811
) -> None:
    attacked = swap_during_install(service, shared_root, attacker)
    assert (shared_root / "team" / ARCHIVE).stat().st_uid == attacker[0]  # the swap happened
    check_contained(service, shared_root, attacked)
    assert attacked["report"]["readable"] is False  # the copy pip reads is not the attacker's


def test_an_archive_a_job_swaps_during_the_install_never_reaches_the_cache(
    service, shared_root
) -> None:
    check_contained(service, shared_root, swap_during_install(service, shared_root, None))


# -- a marker packaging cannot evaluate --------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "requirement", "says"),
    [  # a version compared with what is none, which packaging cannot evaluate
        ("sdist", 'termcolor; python_version ~= "x"', "cannot be evaluated on this interpreter"),
        ("sdist", 'termcolor; python_full_version ~= "1."', "cannot be evaluated"),
        # a marker variable there is none of: setuptools refuses to build it, a wheel carries it
        ("wheel", 'termcolor; bogus_variable == "1"', "is not a valid requirement"),
    ],
)
def test_a_marker_that_cannot_be_evaluated_fails_the_job_naming_it(
    tmp_path: Path, kind: str, requirement: str, says: str
) -> None:
    """pip installs the archive (`--no-deps`: it evaluates no marker); the service then reads
    its Requires-Dist, where packaging raises on the marker. The job fails naming packageUris,
    the package, the requirement and its marker."""
    with LocalService(tmp_path / "state") as service:
        bucket = service.gcs_root / "b"
        if kind == "sdist":
            archive = sdist_requiring(bucket / "badmarker-0.1.tar.gz", "badmarker", requirement)
        else:
            archive = wheel_requiring(bucket, "badmarker", requirement)
        job, _ = run_job(service, f"gs://b/{archive.name}", "badmarker")
    assert job.state == State.JOB_STATE_FAILED
    message = job.error.message
    assert "Internal error" not in message and job.error.code == 3  # INVALID_ARGUMENT
    assert "could not install workerPoolSpecs[0].pythonPackageSpec.packageUris" in message
    assert "package badmarker 0.1 requires" in message
    assert requirement.split(";", 1)[1].strip() in message and says in message


def sdist_requiring(path: Path, module: str, requirement: str) -> Path:
    """A source archive of `module` 0.1 at `path` whose setup.py has `requirement` in
    install_requires (and whose `python -m` prints 'ran'); `path`."""
    setup = (
        "from setuptools import setup\n"
        f"setup(name={module!r}, version='0.1', packages=[{module!r}], "
        f"install_requires=[{requirement!r}])\n"
    )
    files = {"setup.py": setup, f"{module}/__init__.py": "", f"{module}/__main__.py": "print(1)\n"}
    write_source_archive(path, f"{module}-0.1", files)
    return path


def wheel_requiring(folder: Path, module: str, requirement: str) -> Path:
    """A wheel of `module` 0.1 in `folder` whose METADATA has `requirement` as Requires-Dist."""
    files = {f"{module}/__init__.py": b"", f"{module}/__main__.py": b"print(1)\n"}
    return write_wheel(folder, module, "0.1", files, requires=requirement)
