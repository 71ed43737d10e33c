"""Every expected failure is one line and the right exit status, never a traceback.

The commands run as a user runs them (a subprocess, a HOME of their own): without Google
credentials, and with credentials but no way to reach Google (this machine reaches no Google
endpoint), the message says what to do and the exit status is 1; usage mistakes exit 2 with the
subcommand's own usage, before anything starts.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.api_core import exceptions as api_exceptions

from vtp.cli import failures

POOL = "--worker-pool-spec=machine-type=n1-standard-4,container-image-uri=IMAGE"
ON_VERTEX = {
    "custom-jobs create": ["custom-jobs", "create", "--project=p", "--region=us-central1",
                           "--display-name=x", POOL],
    "custom-jobs list": ["custom-jobs", "list", "--project=p", "--region=us-central1"],
    "custom-jobs describe": ["custom-jobs", "describe", "123", "--project=p",
                             "--region=us-central1"],
    "hp-tuning-jobs list": ["hp-tuning-jobs", "list", "--project=p", "--region=us-central1"],
    "submit": ["submit", "train", "--project=p", "--region=us-central1",
               "--pipeline-root=gs://my-bucket/root", "--param", "output_root=gs://my-bucket/o",
               "--image=us-central1-docker.pkg.dev/p/ml/vtp:1"],
    "schedule create": ["schedule", "create", "nightly", "--pipeline", "train", "--cron",
                        "0 3 * * *", "--project=p", "--region=us-central1",
                        "--pipeline-root=gs://my-bucket/root", "--param",
                        "output_root=gs://my-bucket/o", "--via", "vertex",
                        "--image=us-central1-docker.pkg.dev/p/ml/vtp:1"],
}  # fmt: skip


def vtp(args: list[str], home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "CLOUDSDK_"))}
    clean |= {"HOME": str(home), "CLOUDSDK_CONFIG": str(home / "gcloud"), **env}
    return subprocess.run(
        [sys.executable, "-m", "vtp", *args], env=clean, capture_output=True, text=True,
        timeout=300, cwd=home,
    )  # fmt: skip


def service_account_key(path: Path) -> Path:
    """A well-formed service-account key no Google endpoint knows."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "p", "private_key_id": "k", "private_key": pem,
        "client_email": "sa@p.iam.gserviceaccount.com", "client_id": "1",
        "token_uri": "https://oauth2.googleapis.com/token",
    }))  # fmt: skip
    return path


@pytest.mark.parametrize("case", ON_VERTEX, ids=list(ON_VERTEX))
def test_without_credentials_one_line_and_exit_1(case: str, tmp_path: Path) -> None:
    result = vtp(ON_VERTEX[case], tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [
        "vtp: error: no Google credentials; run `gcloud auth application-default login`"
    ]
    assert result.stdout == ""


@pytest.mark.parametrize("case", ["custom-jobs list", "submit", "schedule create"])
def test_with_credentials_but_offline_one_line_and_exit_1(case: str, tmp_path: Path) -> None:
    key = service_account_key(tmp_path / "key.json")
    result = vtp(ON_VERTEX[case], tmp_path, GOOGLE_APPLICATION_CREDENTIALS=str(key))
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("vtp: error: ") and "Traceback" not in result.stderr
    assert "cannot reach" in line or "credentials were refused" in line, line


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = vtp(["--debug", *ON_VERTEX["custom-jobs list"]], tmp_path)
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "DefaultCredentialsError" in result.stderr


BAD_USAGE = {
    "vtp run option": (["run", "train", "--parm", "x"], "usage: vtp run "),
    "custom-jobs option": (["custom-jobs", "create", "--dryrun"], "usage: vtp custom-jobs create"),
    "missing parameter": (["run", "export"], "--param checkpoints_uri=VALUE is required"),
    "metric": (["run", "train", "--param", "metric=f1"], "'f1' is not one of accuracy, loss"),
    "pool typo": (
        [
            "run",
            "train",
            "--param",
            'worker_pool_specs=["machine-type=n1-standard-4,contaner-image-uri=x"]',
        ],
        "did you mean 'container-image-uri'",
    ),
    "region": (
        ["custom-jobs", "create", "--region=us-centrl1", "--display-name=x", POOL, "--dry-run"],
        "did you mean us-central1?",
    ),
}


@pytest.mark.parametrize("case", BAD_USAGE, ids=list(BAD_USAGE))
def test_usage_mistakes_exit_2_before_anything_starts(case: str, tmp_path: Path) -> None:
    argv, message = BAD_USAGE[case]
    result = vtp([*argv, *(["--state-dir", "state"] if argv[0] == "run" else [])], tmp_path)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and result.stdout == ""
    assert not (tmp_path / "state").exists()  # no service was started


def test_a_new_region_can_be_allowed(tmp_path: Path) -> None:
    argv = ["custom-jobs", "create", "--region=mars-north1", "--display-name=x", POOL, "--dry-run"]
    assert vtp(argv, tmp_path).returncode == 2
    allowed = vtp(argv, tmp_path, VTP_EXTRA_REGIONS="mars-north1")
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (api_exceptions.BadRequest("POST https://x/v1/y: no field"), "BAD_REQUEST: no field"),
        (api_exceptions.Cancelled("stopped"), "CANCELLED: stopped"),  # its code is a bare 499
    ],
)
def test_a_refused_call_is_named_by_its_status(error: Exception, line: str) -> None:
    assert failures.describe(error) == line
