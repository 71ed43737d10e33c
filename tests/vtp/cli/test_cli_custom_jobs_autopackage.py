"""`vtp custom-jobs create` with local code (gcloud's autopackaging), against the local service.

A user's own task package (tests/components/vertex/blobs_task.py, in a temporary source tree)
is packaged by `local-package-path`, staged, pip-installed by the service and trained by the
project's trainer on two replicas; malformed local-code keys exit 2 before anything is staged.
"""

import json
import tarfile
from pathlib import Path

import pytest
import torch
from google.cloud import aiplatform_v1

from tests.fixtures import LocalService, point_vtp_at, run_vtp, wait_for_state
from tests.vtp.vertex.usercode import write_user_code

State = aiplatform_v1.JobState
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest"
MACHINE = "machine-type=n1-standard-4"
TINY = "--task=blobs.task,--hidden_size=8,--max_steps=6,--batch_size=16,--checkpoint_interval=3"


@pytest.fixture
def local(local_service: LocalService, monkeypatch: pytest.MonkeyPatch) -> LocalService:
    monkeypatch.setenv("VTP_GCS_ROOT", str(local_service.gcs_root))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    return point_vtp_at(local_service, monkeypatch)


def vtp(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    return run_vtp(capsys, "custom-jobs", "create", "--display-name=autopackaged", *argv)


def local_code_pool(code: Path, entry: str, extra: str = "") -> str:
    keys = f"{MACHINE},executor-image-uri={EXECUTOR},local-package-path={code},{entry}"
    return f"--worker-pool-spec={keys}{extra}"


@pytest.mark.slow
def test_a_packaged_user_task_trains_on_two_replicas(local: LocalService, tmp_path, capsys):
    code = write_user_code(tmp_path)
    pools = [local_code_pool(code, "python-module=vtp.trainer"), f"--worker-pool-spec={MACHINE}"]
    output = "gs://runs/blobs"
    flags = [*pools, f"--args={TINY}", f"--base-output-dir={output}"]
    status, out, err = vtp(capsys, "--local", "--restart-job-on-worker-restart", *flags)
    assert status == 0, err
    job = wait_for_state(local.client(), out.strip(), timeout=120)
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error.message

    # Both pools ran the one staged archive, which sits under the output directory.
    specs = [pool.python_package_spec for pool in job.job_spec.worker_pool_specs]
    assert specs[0] == specs[1] and specs[0].python_module == "vtp_autopackage"
    (uri,) = specs[0].package_uris
    assert uri.startswith(f"{output}/vtp-packages/") and f"[{uri}] is staged" in err
    assert (local.gcs_root / uri.removeprefix("gs://")).is_file()

    model = local.gcs_root / "runs/blobs/model"
    assert json.loads((model / "config.json").read_text())["task"] == "blobs.task"
    weights = torch.load(model / "model.pt", weights_only=True)
    assert weights["0.weight"].shape == (8, 4)  # the user's model, not the built-in digits MLP


def test_a_script_runs_and_unchanged_code_is_staged_once(local: LocalService, tmp_path, capsys):
    code = write_user_code(tmp_path)
    pool = local_code_pool(code, "script=scripts/run.py")
    first = vtp(capsys, "--local", pool, "--args=hello")
    assert first[0] == 0, first[2]
    job = wait_for_state(local.client(), first[1].strip())
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error.message
    (uri,) = job.job_spec.worker_pool_specs[0].python_package_spec.package_uris
    # With --local and no --staging-bucket or --base-output-dir, the local staging bucket.
    assert uri.startswith("gs://vtp-local-staging/vtp-packages/")

    second = vtp(capsys, "--local", pool, "--args=again")
    assert second[0] == 0 and f"[{uri}] is already staged" in second[2]


def test_dry_run_builds_the_archive_and_stages_nothing(local: LocalService, tmp_path, capsys):
    code = write_user_code(tmp_path)
    pool = local_code_pool(code, "python-module=blobs.task", ",requirements=scikit-learn>=1.5")
    status, out, err = vtp(capsys, "--dry-run", pool, "--staging-bucket=gs://dry/run")
    assert status == 0, err
    spec = json.loads(out)["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]
    (uri,) = spec["packageUris"]
    assert uri.startswith("gs://dry/run/vtp-packages/") and "not staged" in err
    assert not (local.gcs_root / "dry").exists()


CASES = [
    (
        "missing-dir",
        "local-package-path={dir}/nope,script=run.py",
        ["local-package-path", "not found"],
    ),
    (
        "script-and-module",
        "local-package-path={dir},script=scripts/run.py,python-module=blobs.task",
        ["exactly one of python-module and script"],
    ),
    ("script-outside", "local-package-path={dir},script=../x.py", ["key script", "outside"]),
    (
        "bad-requirement",
        "local-package-path={dir},python-module=blobs.task,requirements=numpy;torch>>2",
        ["key requirements", "'torch>>2' is not a valid requirement"],
    ),
    (
        "extra-dir-missing",
        "local-package-path={dir},python-module=blobs.task,extra-dirs=nope",
        ["key extra-dirs", "not found"],
    ),
    (
        "output-image",
        "local-package-path={dir},python-module=blobs.task,output-image-uri=gcr.io/p/i",
        ["key output-image-uri", "no Docker"],
    ),
    (
        "container-image",
        "local-package-path={dir},python-module=blobs.task,container-image-uri=gcr.io/p/i",
        ["key container-image-uri"],
    ),
]


@pytest.mark.parametrize(("keys", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_local_code_exits_2_naming_the_key(
    local: LocalService, tmp_path, capsys, keys: str, expected: list[str]
) -> None:
    code = write_user_code(tmp_path)
    pool = f"--worker-pool-spec={MACHINE},executor-image-uri={EXECUTOR}," + keys.replace(
        "{dir}", str(code)
    )
    status, out, err = vtp(capsys, "--local", pool, "--staging-bucket=gs://never")
    assert (status, out) == (2, "")
    for text in expected:
        assert text in err
    assert not (local.gcs_root / "never").exists()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--worker-pool-spec={m},python-module=trainer"], "key python-module"),
        (["--worker-pool-spec={m},executor-image-uri=x"], "key executor-image-uri"),
        (["--staging-bucket=/tmp/not-gcs"], "--staging-bucket: not a Cloud Storage URI"),
    ],
    ids=["module-in-later-pool", "image-in-later-pool", "staging-not-gcs"],
)
def test_later_pools_give_machines_only_and_staging_must_be_gcs(
    tmp_path, capsys, flags: list[str], expected: str
) -> None:
    pool = local_code_pool(write_user_code(tmp_path), "python-module=trainer")
    flags = [f.replace("{m}", MACHINE) for f in flags]
    status, out, err = vtp(capsys, "--dry-run", pool, "--base-output-dir=gs://b/o", *flags)
    assert (status, out) == (2, "") and expected in err


def test_staging_bucket_without_local_code_is_refused(capsys) -> None:
    pool = f"--worker-pool-spec={MACHINE},container-image-uri=gcr.io/p/i"
    status, out, err = vtp(capsys, "--dry-run", pool, "--staging-bucket=gs://b")
    assert (status, out) == (2, "") and "--staging-bucket: only used with local-package-path" in err


def test_from_a_folder_of_the_users_it_stages_where_the_service_reads_and_skips_ignored_paths(
    local_service: LocalService, tmp_path, capsys, monkeypatch
) -> None:
    """No VTP_GCS_ROOT: the command finds the running service's storage root itself."""
    code = tmp_path / "ignorecheck"  # the archive is named after the folder
    for path, text in {
        "train.py": "print('trained')\n",
        ".gitignore": "*.log\nscratch/\n",
        "run.log": "a log\n",
        "scratch/notes.txt": "notes\n",
        ".vtp/local/gcs/old-package.tar.gz": "an earlier archive\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        ".env": "SECRET=1\n",
        "data/keep.csv": "1,2\n",
    }.items():
        (code / path).parent.mkdir(parents=True, exist_ok=True)
        (code / path).write_text(text)
    monkeypatch.chdir(code)
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", local_service.url)
    monkeypatch.delenv("VTP_GCS_ROOT", raising=False)
    code_status, out, err = vtp(
        capsys, "--local", "--region=us-central1", local_code_pool(Path("."), "script=train.py")
    )
    assert code_status == 0, err
    job = wait_for_state(local_service.client(), out.strip())
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error
    (archive,) = local_service.gcs_root.rglob("ignorecheck-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = {name.split("/code-root/", 1)[-1] for name in tar.getnames() if "code-root" in name}
    assert names == {"train.py", "data/keep.csv"}
