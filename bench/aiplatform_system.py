"""Benchmark: the aiplatform SDK's own system tests as the yardstick of the local Vertex service.

The tests are googleapis/python-aiplatform v1.165.1's `tests/system/aiplatform/`, vendored
unchanged in bench/third_party/aiplatform_system/ (its NOTICE says what and from where). Each
test file runs as the SDK's team runs it against Google (`pytest tests/system/aiplatform/X.py`,
the vendored folder as pytest's root so `tests.system.aiplatform.e2e_base` resolves), but under
`vtp local exec` against one `vtp local serve` started for the whole benchmark, so every client
the tests build (aiplatform on its default gRPC transport, google-cloud-storage, Resource
Manager, BigQuery) is pointed at the local service by the same settings a user gets. The test
bodies are unchanged; `$BUILD_SPECIFIC_GCLOUD_PROJECT` (the project the suite reads) is `local`.

The harness adds only `aiplatform_system_plugin.py` (a pytest plugin, next to this file): it
marks as skipped, with the reason, the tests that need something no machine here has (Google's
hosted models, BigQuery's public data, Google-owned resources); everything else runs and
counts. The tests run in a throwaway virtual environment layered over this one, holding what the
suite installs for itself and this project does not (EXTRA_PACKAGES); the service runs in the same
layer, so its model servers have xgboost. pytest reads an empty configuration of the harness's
own, not this project's pyproject.toml.

One seeding step runs before the tests (`seed_samples`): test_model_upload.py and
test_model_version_management.py download Google's public iris XGBoost model from
gs://cloud-samples-data-us-central1/..., which no network here reaches, so a stand-in
`model.bst` (an XGBoost Booster trained in the layer on scikit-learn's bundled iris) is put at
that path in the service's storage, through the storage client under `vtp local exec`.

Progress goes to stderr, with the folder that keeps each file's output; stdout gets ONE JSON line:

    {"sdk_tag": "v1.165.1", "commit": "<git HEAD>[+changes]", "files": N, "passed": n,
     "failed": n, "errors": n, "skipped": n,
     "by_file": {"test_x.py": {"passed", "failed", "errors", "skipped", "seconds",
                               "first_failures": [{"test", "message"}],
                               "skipped_because": {"<reason>": count}}}, "seconds": s}

`skipped_because` gives every skip's reason as the test report has it: the plugin's (each
"cannot run here: ...") and the suite's own (`pytest.mark.skip` in the test files).

    python bench/aiplatform_system.py [--only SUBSTRING ...] [-k EXPRESSION] [--jobs N]
                                      [--timeout SECONDS]

`--only` picks files by name, `-k` tests within them (pytest's expression; the JSON line then
counts only those, and says so in its "select" field).
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kfp_pipelines import commit, layered_environment, local_service, run_command

SDK_TAG = "v1.165.1"
BENCH = Path(__file__).resolve().parent
SUITE = BENCH / "third_party" / "aiplatform_system"
TESTS = SUITE / "tests" / "system" / "aiplatform"
PROJECT = "local"
EXTRA_PACKAGES = (
    "pandas", "pyarrow", "google-vizier", "google-cloud-testutils", "mock", "pytest-asyncio",
    "pytest-timeout", "xgboost-cpu",
)  # fmt: skip
"""What the suite's own `testing` extra and nox session install, and this project does not,
into the layer only (xgboost as `xgboost-cpu`, the wheel without CUDA's libraries); not its
heaviest (tensorflow, ray, mlflow, bigframes): the files that import those fail to collect, and
count as errors."""
SAMPLE_MODEL = (
    "gs://cloud-samples-data-us-central1/vertex-ai/google-cloud-aiplatform-ci-artifacts/"
    "models/iris_xgboost/model.bst"
)
SEED = """
import sys, tempfile
import xgboost
from google.cloud import storage
from sklearn.datasets import load_iris

iris = load_iris()
booster = xgboost.train({"objective": "multi:softprob", "num_class": 3, "max_depth": 2},
                        xgboost.DMatrix(iris.data, label=iris.target), num_boost_round=10)
path = tempfile.mktemp(suffix=".bst")
booster.save_model(path)
bucket_name, _, blob_name = sys.argv[1].removeprefix("gs://").partition("/")
client = storage.Client(project="local")
bucket = client.bucket(bucket_name)
if not bucket.exists():
    bucket.create()
bucket.blob(blob_name).upload_from_filename(path)
"""
"""The stand-in for SAMPLE_MODEL (argv[1]): trained here, uploaded to the service's storage."""
FAILURES_SHOWN = 5


def test_files(only: list[str]) -> list[Path]:
    """The suite's test files, those whose name holds one of `only` when it is given."""
    files = sorted(TESTS.glob("test_*.py"))
    return [f for f in files if not only or any(part in f.name for part in only)]


def run_file(
    file: Path, python: Path, env: dict[str, str], out: Path, limit: float, select: str = ""
) -> dict:
    """One test file under `vtp local exec`: its counts, seconds and first failures; only its
    tests that the pytest `-k` expression `select` matches, when given."""
    report = out / f"{file.stem}.xml"
    argv = [
        str(python), "-m", "vtp", "local", "exec", "--",
        str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
        "-p", "aiplatform_system_plugin", f"--timeout={int(limit)}",
        "-c", str(out / "pytest.ini"), f"--rootdir={SUITE}",
        f"--junitxml={report}", *(["-k", select] if select else []), str(file),
    ]  # fmt: skip
    folder = out / file.stem  # what a test writes in its working folder goes here
    folder.mkdir()
    started = time.monotonic()
    status, output = run_command(argv, folder, limit * 4, env)
    seconds = round(time.monotonic() - started, 1)
    (out / f"{file.stem}.log").write_text(output)
    counts = junit_counts(report)
    if not report.exists():
        why = "timed out" if status is None else (output.strip().splitlines() or ["no output"])[-1]
        counts["first_failures"] = [{"test": file.name, "message": why[:300]}]
    return {**counts, "seconds": seconds}


def junit_counts(report: Path) -> dict[str, Any]:
    """Passed, failed, errors and skipped in a JUnit XML report, with the first failures."""
    counts: dict[str, Any] = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    failures: list[dict[str, str]] = []
    reasons: dict[str, int] = {}
    if not report.exists():
        return {**counts, "first_failures": failures, "skipped_because": reasons}
    for case in ElementTree.parse(report).iter("testcase"):
        verdict = next((child for child in case if child.tag != "system-out"), None)
        kind = {"failure": "failed", "error": "errors", "skipped": "skipped"}.get(
            verdict.tag if verdict is not None else "", "passed"
        )
        counts[kind] += 1
        if kind == "skipped" and verdict is not None:
            reason = (verdict.get("message") or "").removeprefix("Skipped: ")
            reasons[reason] = reasons.get(reason, 0) + 1
        if kind in ("failed", "errors") and len(failures) < FAILURES_SHOWN:
            message = (verdict.get("message") or verdict.text or "") if verdict is not None else ""
            failures.append({"test": case.get("name", ""), "message": message[:300]})
    return {**counts, "first_failures": failures, "skipped_because": reasons}


def seed_samples(python: Path, env: dict[str, str], folder: Path) -> None:
    """Put the stand-ins of Google's public sample files the tests read into local storage."""
    argv = [str(python), "-m", "vtp", "local", "exec", "--", str(python), "-c", SEED, SAMPLE_MODEL]
    subprocess.run(argv, check=True, cwd=folder, stdout=sys.stderr, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", nargs="*", default=[], help="run files whose name holds one")
    parser.add_argument("-k", dest="select", default="", help="pytest -k: tests to run")
    parser.add_argument("--jobs", type=int, default=1, help="test files run at once")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per test")
    options = parser.parse_args()
    started = time.monotonic()
    measured_on = commit()  # the code the service and the tests run, as the bench starts
    files = test_files(options.only)
    work = Path(tempfile.mkdtemp(prefix="aiplatform-system-"))
    print(f"aiplatform_system: {len(files)} files, output in {work}", file=sys.stderr)
    python, env = layered_environment(work / "venv")
    (work / "pytest.ini").write_text("[pytest]\n")
    install = [str(python), "-m", "pip", "install", "-q", *EXTRA_PACKAGES]
    subprocess.run(install, check=True, stdout=sys.stderr, env=env)
    layer = (python, env)
    env = {**env, "BUILD_SPECIFIC_GCLOUD_PROJECT": PROJECT, "PYTHONPATH": str(BENCH)}
    results: dict[str, dict] = {}
    with local_service(work, work, layer) as url:
        env["VTP_LOCAL_ENDPOINT"] = url
        seed_samples(python, env, work)

        def one(file: Path) -> None:
            results[file.name] = run_file(file, python, env, work, options.timeout, options.select)
            print(f"aiplatform_system: {file.name}: {results[file.name]}", file=sys.stderr)

        with ThreadPoolExecutor(max(1, options.jobs)) as pool:
            list(pool.map(one, files))
    totals = {k: sum(r[k] for r in results.values()) for k in ("passed", "failed", "errors")}
    skipped = sum(r["skipped"] for r in results.values())
    print(
        json.dumps(
            {"sdk_tag": SDK_TAG, "commit": measured_on, "files": len(files),
             **({"select": options.select} if options.select else {}), **totals,
             "skipped": skipped,
             "by_file": dict(sorted(results.items())),
             "seconds": round(time.monotonic() - started, 1)}
        )
    )  # fmt: skip


if __name__ == "__main__":
    main()
