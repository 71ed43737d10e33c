"""Benchmark: google-cloud-storage's own system tests as the yardstick of the local Cloud Storage
JSON API.

The tests are googleapis/python-storage's `tests/system/` at SUITE_TAG (the newest tag of that
repository, which then moved into google-cloud-python; the installed client is 3.17), taken from
a git directory of it (`--repo`: a clone, or the bare one the project's `fetch` tool makes) with
`git archive`, into a fresh folder, unchanged. They run as the client's team runs them against
Google (`pytest tests/system`), but under `vtp local exec` against one `vtp local serve` started
for the benchmark, so the `storage.Client()` the suite's fixtures build reaches the local service
by the settings a user gets (`STORAGE_EMULATOR_HOST`, and the start-up hook's token), with
`GOOGLE_CLOUD_PROJECT=local` and, as Google's CI sets it, `GOOGLE_CLOUD_TESTS_USER_PROJECT=local`
(the project requester-pays requests name as `userProject`; the service bills nobody). The whole
suite runs in one go: transfer_manager's process workers included (see the plugin's
`_service_account` for why they once retried forever).

Two of `tests/data/`'s files are Git LFS-sized blobs that a snapshot may lack
(five-point-one-mb-file.zip, random_9_MiB_file): when absent they are written as random bytes of
the size their names give (5.1 MiB, 9 MiB). The tests only upload, download and hash them.

The harness adds only `storage_system_plugin.py` (next to this file): the tests it skips, each
with the reason it cannot run here, and no 12-second waits for Google's configuration to
propagate (see its docstring). The suite runs in a throwaway virtual environment layered over
this one, holding what its fixtures import and this project does not (EXTRA_PACKAGES).

Progress goes to stderr; stdout gets ONE JSON line:

    {"suite": "googleapis/python-storage", "suite_tag": ..., "suite_commit": ...,
     "commit": "<git HEAD>[+changes]", "passed": n, "failed": n, "errors": n, "skipped": n,
     "skipped_because": {"<reason>": [test, ...]},
     "failed_because": {"<first line of the failure>": [test, ...]}, "seconds": s}

    python bench/storage_system.py [--repo GIT_DIR] [-k EXPRESSION] [--only FILE ...]
                                   [--timeout SECONDS]
"""

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from kfp_pipelines import commit, layered_environment, local_service, run_command

SUITE = "googleapis/python-storage"
SUITE_TAG = "v3.10.1"
BENCH = Path(__file__).resolve().parent
DEFAULT_REPO = Path("/work/.mirror/googleapis+python-storage/repo")
PROJECT = "local"
EXTRA_PACKAGES = (
    "google-cloud-testutils", "google-cloud-kms", "google-cloud-iam", "mock", "pytest-timeout",
)  # fmt: skip
"""What the suite imports at module level (conftest: kms, test_utils; test__signing: iam) and
this project does not have; installed into the layer only."""
STAND_INS = {"five-point-one-mb-file.zip": int(5.1 * (1 << 20)), "random_9_MiB_file": 9 << 20}
"""tests/data files a snapshot may hold as missing blobs -> the bytes of the stand-in."""
MESSAGE_CHARS = 200


def extract_suite(repo: Path, tag: str, into: Path) -> str:
    """tests/system and tests/data of `repo` at `tag` into `into`, stand-ins for missing blobs;
    the tag's commit."""
    git = ["git", f"--git-dir={repo}"]
    sha = subprocess.run(
        [*git, "rev-parse", f"{tag}^{{commit}}"], check=True, capture_output=True, text=True
    ).stdout.strip()
    archive = subprocess.run(
        [*git, "archive", "--format=tar", sha, "tests/system", "tests/data"],
        capture_output=True, check=False,
    )  # fmt: skip
    if archive.returncode != 0:  # a blob missing from the snapshot: take the files one by one
        _extract_present(git, sha, into)
    else:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(into, filter="data")
    for name, size in STAND_INS.items():
        path = into / "tests" / "data" / name
        if not path.exists() or path.stat().st_size == 0:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(os.urandom(size))
    return sha


def _extract_present(git: list[str], sha: str, into: Path) -> None:
    """Each file of tests/system and tests/data whose blob the repository holds."""
    listing = subprocess.run(
        [*git, "ls-tree", "-r", "--name-only", sha, "tests/system", "tests/data"],
        check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    for name in listing:
        shown = subprocess.run([*git, "show", f"{sha}:{name}"], capture_output=True, check=False)
        if shown.returncode == 0:
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            (into / name).write_bytes(shown.stdout)


def outcomes(report: Path) -> dict:
    """Totals of a JUnit XML report, with skip and failure reasons grouped."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    skipped: dict[str, list[str]] = {}
    failed: dict[str, list[str]] = {}
    if not report.exists():
        return {**counts, "skipped_because": skipped, "failed_because": failed}
    for case in ElementTree.parse(report).iter("testcase"):
        test = f"{case.get('classname', '').rpartition('.')[2]}::{case.get('name', '')}"
        verdict = next((c for c in case if c.tag in ("failure", "error", "skipped")), None)
        kind = {"failure": "failed", "error": "errors", "skipped": "skipped"}.get(
            verdict.tag if verdict is not None else "", "passed"
        )
        counts[kind] += 1
        if verdict is None:
            continue
        message = (verdict.get("message") or verdict.text or "").strip()
        if kind == "skipped":
            reason = message.removeprefix("Skipped: ")
            skipped.setdefault(reason, []).append(test)
        else:
            first = (message.splitlines() or [""])[0][:MESSAGE_CHARS]
            failed.setdefault(f"{kind}: {first}", []).append(test)
    return {**counts, "skipped_because": skipped, "failed_because": failed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="python-storage git dir")
    parser.add_argument("--tag", default=SUITE_TAG, help="the suite's tag or commit")
    parser.add_argument("--only", nargs="*", default=[], help="test files (test_blob.py ...)")
    parser.add_argument("-k", dest="select", default="", help="pytest -k: tests to run")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per test")
    options = parser.parse_args()
    started = time.monotonic()
    measured_on = commit()
    work = Path(tempfile.mkdtemp(prefix="storage-system-"))
    print(f"storage_system: output in {work}", file=sys.stderr)
    suite_commit = extract_suite(options.repo, options.tag, work / "suite")
    python, env = layered_environment(work / "venv")
    (work / "pytest.ini").write_text("[pytest]\n")
    install = [str(python), "-m", "pip", "install", "-q", *EXTRA_PACKAGES]
    subprocess.run(install, check=True, stdout=sys.stderr, env=env)
    layer = (python, env)
    env = {
        **env,
        "GOOGLE_CLOUD_PROJECT": PROJECT,
        "GOOGLE_CLOUD_TESTS_USER_PROJECT": PROJECT,
        "PYTHONPATH": str(BENCH),
    }
    report = work / "report.xml"
    targets = [f"tests/system/{name}" for name in options.only] or ["tests/system"]
    with local_service(work, work, layer) as url:
        env["VTP_LOCAL_ENDPOINT"] = url
        argv = [
            str(python), "-m", "vtp", "local", "exec", "--",
            str(python), "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
            "-p", "storage_system_plugin", f"--timeout={int(options.timeout)}",
            "-c", str(work / "pytest.ini"), f"--rootdir={work / 'suite'}",
            f"--junitxml={report}", *(["-k", options.select] if options.select else []),
            *targets,
        ]  # fmt: skip
        status, output = run_command(argv, work / "suite", options.timeout * 20, env)
    (work / "pytest.log").write_text(output)
    print(f"storage_system: pytest exited {status}; log {work / 'pytest.log'}", file=sys.stderr)
    print(
        json.dumps(
            {"suite": SUITE, "suite_tag": options.tag, "suite_commit": suite_commit,
             "commit": measured_on, **({"select": options.select} if options.select else {}),
             **outcomes(report), "seconds": round(time.monotonic() - started, 1)}
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
