"""Malformed `vtp custom-jobs create` input: exit status 2, the culprit named on stderr, no stdout.

Each case is rejected before anything is built or sent. Most run `vtp.cli.main` in-process
(fast); two go through the installed `vtp` script to check the real exit status and streams.
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vtp.cli import main

IMAGE = "gcr.io/p/trainer:1"
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-1.py310:latest"
GOOD = f"--worker-pool-spec=machine-type=n1-standard-4,container-image-uri={IMAGE}"


def wps(spec: str) -> str:
    return f"--worker-pool-spec={spec}"


def pool(extra: str = "", machine: str = "n1-standard-4") -> str:
    """A container pool flag with `extra` keys appended."""
    return wps(
        f"machine-type={machine},container-image-uri={IMAGE}" + (f",{extra}" if extra else "")
    )


# (id, flags after `create --display-name=job`, substrings stderr must hold, {file: text})
CASES = [
    # --- --worker-pool-spec syntax ---
    ("unknown-key", [pool("replica-cont=2")], ["replica-cont", "did you mean 'replica-count'"]),
    ("duplicate-key", [pool("machine-type=n1-standard-8")], ["machine-type", "given twice"]),
    ("key-without-value", [wps("machine-type")], ["'machine-type' is not KEY=VALUE"]),
    ("empty-value", [pool("accelerator-type=")], ["accelerator-type", "empty value"]),
    ("replicas-not-a-number", [GOOD, pool("replica-count=abc")], ["#2 (pool 1)", "replica-count"]),
    ("replicas-zero", [GOOD, pool("replica-count=0")], ["replica-count", "'0' is not a positive"]),
    (
        "accelerator-count-negative",
        [pool("accelerator-type=NVIDIA_TESLA_T4,accelerator-count=-1")],
        ["accelerator-count", "'-1'"],
    ),
    (
        "accelerator-count-fraction",
        [pool("accelerator-type=NVIDIA_TESLA_T4,accelerator-count=1.5")],
        ["accelerator-count", "'1.5'"],
    ),
    (
        "count-without-type",
        [pool("accelerator-count=2")],
        ["accelerator-count", "accelerator-type"],
    ),
    (
        "unknown-accelerator",
        [pool("accelerator-type=NVIDIA_TESLA_Z9")],
        ["accelerator-type", "NVIDIA_TESLA_Z9", "NVIDIA_TESLA_T4", "NVIDIA_H100_80GB"],
    ),
    # --- accelerators vs machine families ---
    ("a100-on-n1", [pool("accelerator-type=NVIDIA_TESLA_A100")], ["NVIDIA_TESLA_A100", "a2"]),
    ("h100-on-a2", [pool("accelerator-type=NVIDIA_H100_80GB", "a2-highgpu-1g")], ["a3-highgpu"]),
    ("l4-on-n1", [pool("accelerator-type=NVIDIA_L4")], ["NVIDIA_L4", "g2"]),
    ("t4-on-a2", [pool("accelerator-type=NVIDIA_TESLA_T4", "a2-highgpu-1g")], ["n1-*"]),
    (
        "a2-4g-with-2-gpus",
        [pool("accelerator-type=NVIDIA_TESLA_A100,accelerator-count=2", "a2-highgpu-4g")],
        ["exactly 4", "accelerator count to 4"],
    ),
    (
        "a2-without-accelerator",
        [pool(machine="a2-highgpu-1g")],
        ["comes with NVIDIA_TESLA_A100", "accelerator count 1"],
    ),
    (
        "t4-count-3",
        [pool("accelerator-type=NVIDIA_TESLA_T4,accelerator-count=3")],
        ["counts of 1, 2, 4"],
    ),
    # --- what a pool runs ---
    (
        "container-and-executor",
        [pool(f"executor-image-uri={EXECUTOR},python-module=t")],
        ["both container-image-uri and executor-image-uri"],
    ),
    ("neither-container-nor-executor", [wps("machine-type=n1-standard-4")], ["neither"]),
    ("python-module-in-container", [pool("python-module=trainer.task")], ["python-module"]),
    (
        "executor-without-module",
        [
            wps(f"machine-type=n1-standard-4,executor-image-uri={EXECUTOR}"),
            "--python-package-uris=gs://b/t.tar.gz",
        ],
        ["python-module", "missing"],
    ),
    (
        "executor-without-package",
        [wps(f"machine-type=n1-standard-4,executor-image-uri={EXECUTOR},python-module=t")],
        ["--python-package-uris=gs://"],
    ),
    (
        "package-not-in-gcs",
        [
            wps(f"machine-type=n1-standard-4,executor-image-uri={EXECUTOR},python-module=t"),
            "--python-package-uris=./dist/t.tar.gz",
        ],
        ["--python-package-uris", "Cloud Storage"],
    ),
    ("machine-type-missing", [wps(f"container-image-uri={IMAGE}")], ["machine-type", "missing"]),
    (
        "package-uris-unused",
        [GOOD, "--python-package-uris=gs://b/t.tar.gz"],
        ["--python-package-uris", "no --worker-pool-spec runs a Python package"],
    ),
    (
        "command-without-container",
        [
            wps(f"machine-type=n1-standard-4,executor-image-uri={EXECUTOR},python-module=t"),
            "--python-package-uris=gs://b/t.tar.gz",
            "--command=python",
        ],
        ["--command"],
    ),
    # --- pools as roles ---
    ("empty-first-pool", [wps(""), GOOD], ["pool 0", "cannot be empty"]),
    ("five-pools", [GOOD] * 5, ["5 pools", "4 roles"]),
    (
        "multi-replica-primary",
        [pool("replica-count=3")],
        ["replica-count", "single primary replica", "other 2 in pool 1"],
    ),
    # --- autopackaging (local code) ---
    (
        "autopackaging-without-staging",
        [
            wps(
                f"machine-type=n1-standard-4,executor-image-uri={EXECUTOR},"
                "local-package-path={dir},script=task.py"
            )
        ],
        ["--staging-bucket", "local-package-path needs a Cloud Storage location"],
    ),
    (
        "local-package-without-executor",
        [wps("machine-type=n1-standard-4,local-package-path={dir},script=task.py")],
        ["executor-image-uri", "required with local-package-path"],
    ),
    (
        "local-package-script-and-module",
        [
            wps(
                f"machine-type=n1-standard-4,executor-image-uri={EXECUTOR},local-package-path={{dir}},"
                "script=task.py,python-module=task"
            )
        ],
        ["exactly one of python-module and script"],
    ),
    (
        "local-package-path-missing-dir",
        [
            wps(
                f"machine-type=n1-standard-4,executor-image-uri={EXECUTOR},"
                "local-package-path={dir}/nope,script=task.py"
            )
        ],
        ["local-package-path", "not found"],
    ),
    (
        "requirements-without-local-package",
        [pool("requirements=torch;numpy")],
        ["requirements", "without local-package-path"],
    ),
    ("script-in-later-pool", [GOOD, pool("script=task.py")], ["pool 1", "pool 0 only"]),
    # --- job-level flags ---
    ("label-key-uppercase", [GOOD, "--labels=Team=ml"], ["--labels", "invalid label key 'Team'"]),
    ("label-value-symbol", [GOOD, "--labels=team=ml!"], ["--labels", "'ml!'"]),
    ("label-without-value", [GOOD, "--labels=team"], ["--labels", "'team' is not KEY=VALUE"]),
    ("label-twice", [GOOD, "--labels=team=a", "--labels=team=b"], ["--labels", "twice"]),
    ("timeout-words", [GOOD, "--timeout=soon"], ["--timeout", "'soon' is not a duration"]),
    ("timeout-zero", [GOOD, "--timeout=0s"], ["--timeout", "longer than 0s"]),
    (
        "max-wait-without-flex-start",
        [GOOD, "--max-wait-duration=1h"],
        ["--max-wait-duration", "FLEX_START"],
    ),
    ("strategy-unknown", [GOOD, "--scheduling-strategy=cheap"], ["--scheduling-strategy", "CHEAP"]),
    ("network-short-name", [GOOD, "--network=vpc"], ["--network", "projects/PROJECT_NUMBER"]),
    ("service-account-not-email", [GOOD, "--service-account=bob"], ["--service-account", "'bob'"]),
    (
        "persistent-resource-bad-id",
        [GOOD, "--persistent-resource-id=My_Pool"],
        ["--persistent-resource-id"],
    ),
    ("output-dir-not-gcs", [GOOD, "--base-output-dir=/tmp/out"], ["--base-output-dir", "gs://"]),
    ("kms-key-short", [GOOD, "--kms-key=key"], ["--kms-key", "keyRings"]),
    ("display-name-too-long", [GOOD, "--display-name=" + "x" * 129], ["--display-name", "129"]),
    ("nothing-to-run", [], ["--worker-pool-spec", "--config"]),
    ("dry-run-and-local", [GOOD, "--local"], ["--dry-run and --local"]),
    ("region-not-a-location", [GOOD, "--region=moon"], ["--region", "'moon'", "us-central1"]),
    # --- --config files ---
    ("config-missing", ["--config={dir}/absent.yaml"], ["--config", "cannot read"]),
    (
        "config-bad-yaml",
        ["--config={dir}/c.yaml"],
        ["not valid YAML at line 3"],
        {"c.yaml": "workerPoolSpecs:\n  - machineSpec: {machineType: [\n"},
    ),
    ("config-not-mapping", ["--config={dir}/c.yaml"], ["expected a mapping"], {"c.yaml": "- a\n"}),
    (
        "config-typo",
        ["--config={dir}/c.yaml"],
        ["workerPoolSpec", "did you mean 'workerPoolSpecs'"],
        {"c.yaml": "workerPoolSpec: []\n"},
    ),
    (
        "config-snake-case",
        ["--config={dir}/c.yaml"],
        ["worker_pool_specs", "workerPoolSpecs"],
        {"c.yaml": "worker_pool_specs: []\n"},
    ),
    (
        "config-reduction-server-spec",
        ["--config={dir}/c.yaml"],
        ["workerPoolSpecs[0].reductionServerSpec", "pool 2"],
        {
            "c.yaml": "workerPoolSpecs:\n- machineSpec: {machineType: n1-standard-4}\n"
            "  containerSpec: {imageUri: i}\n  reductionServerSpec: {replicaCount: 2}\n"
        },
    ),
    (
        "config-timeout-hours",
        [GOOD, "--config={dir}/c.yaml"],
        ["scheduling.timeout", "'24h'"],
        {"c.yaml": "scheduling: {timeout: 24h}\n"},
    ),
    (
        "config-full-form-mixed",
        ["--config={dir}/c.yaml"],
        ["move workerPoolSpecs", "jobSpec"],
        {"c.yaml": "displayName: x\nworkerPoolSpecs: []\n"},
    ),
    (
        "config-output-only",
        ["--config={dir}/c.yaml"],
        ["state", "output-only"],
        {"c.yaml": "displayName: x\nstate: JOB_STATE_RUNNING\njobSpec: {}\n"},
    ),
    (
        "config-replicas-word",
        ["--config={dir}/c.yaml"],
        ["replicaCount", "'two'"],
        {
            "c.yaml": "workerPoolSpecs:\n- machineSpec: {machineType: n1-standard-4}\n"
            "  replicaCount: two\n  containerSpec: {imageUri: i}\n"
        },
    ),
    (
        "config-unknown-accelerator",
        ["--config={dir}/c.yaml"],
        ["acceleratorType", "NVIDIA_FOO"],
        {
            "c.yaml": "workerPoolSpecs:\n- machineSpec: {machineType: n1-standard-4, "
            "acceleratorType: NVIDIA_FOO}\n  containerSpec: {imageUri: i}\n"
        },
    ),
    (
        "config-pool-runs-nothing",
        ["--config={dir}/c.yaml"],
        ["workerPoolSpecs[1]", "neither containerSpec nor pythonPackageSpec"],
        {
            "c.yaml": "workerPoolSpecs:\n- machineSpec: {machineType: n1-standard-4}\n"
            "  containerSpec: {imageUri: i}\n- machineSpec: {machineType: n1-standard-4}\n"
        },
    ),
    (
        "config-full-form-bad-label",
        ["--config={dir}/c.yaml"],
        ["c.yaml: labels", "'Team'"],
        {
            "c.yaml": "displayName: x\nlabels: {Team: a}\njobSpec:\n  workerPoolSpecs:\n"
            "  - machineSpec: {machineType: n1-standard-4}\n    containerSpec: {imageUri: i}\n"
        },
    ),
]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`vtp custom-jobs create ...` in-process: (exit status, stdout, stderr)."""
    try:
        code = main(["custom-jobs", "create", *argv])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("flags", "expected", "files"),
    [(c[1], c[2], c[3] if len(c) > 3 else {}) for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_malformed_input_is_rejected(flags, expected, files, tmp_path: Path, capsys) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "task.py").write_text("print('hello')\n")
    argv = [f.replace("{dir}", str(tmp_path)) for f in flags]
    if not any(a.startswith("--display-name") for a in argv):
        argv.insert(0, "--display-name=job")
    code, out, err = run([*argv, "--dry-run"], capsys)
    assert (code, out) == (2, "")
    for text in expected:
        assert text in err


def test_at_least_thirty_malformed_cases() -> None:
    assert len(CASES) >= 30


@pytest.mark.skipif(
    shutil.which("vtp") is None and not Path(sys.executable).with_name("vtp").exists(),
    reason="vtp console script not installed",
)
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([pool("accelerator-type=NVIDIA_TESLA_A100")], "a2-highgpu"),
        (["--scheduling-strategy=cheap", GOOD], "invalid choice"),
    ],
)
def test_vtp_script_exits_2_with_message_on_stderr_only(argv: list[str], expected: str) -> None:
    vtp = shutil.which("vtp", path=str(Path(sys.executable).parent)) or "vtp"
    done = subprocess.run(
        [vtp, "custom-jobs", "create", "--display-name=j", *argv, "--dry-run"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert expected in done.stderr
