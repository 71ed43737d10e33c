"""`vtp custom-jobs create` builds the CustomJob the real `gcloud ai custom-jobs create` sends.

gcloud (Cloud SDK on this machine) is pointed at a recording listener; each case runs the same
flags through gcloud and through `vtp ... --dry-run` (and `--local`, which sends the request with
the aiplatform REST client), and the bodies are compared as parsed `aiplatform_v1.CustomJob`s.
Where we differ from gcloud on purpose, a test at the end shows what gcloud does instead.
"""

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from tests.fixtures import run_vtp
from tests.vtp.cli.vertex_recorder import VertexRecorder

pytestmark = pytest.mark.skipif(shutil.which("gcloud") is None, reason="needs the gcloud CLI")

PROJECT, REGION = "test-project", "us-central1"
IMAGE = "gcr.io/my-project/pytorch-trainer:latest"
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/pytorch-xla.2-1.py310:latest"
REDUCTION_SERVER = "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"

BARE_CONFIG = """\
workerPoolSpecs:
- machineSpec: {machineType: n1-highmem-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 4}
  replicaCount: 1
  containerSpec:
    imageUri: gcr.io/my-project/pytorch-trainer:v1
    args: ["--epochs=100", "--batch-size=64"]
    env: [{name: NCCL_DEBUG, value: INFO}]
  diskSpec: {bootDiskType: pd-ssd, bootDiskSizeGb: 200}
- machineSpec: {machineType: n1-highmem-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 4}
  replicaCount: 3
  containerSpec: {imageUri: gcr.io/my-project/pytorch-trainer:v1}
scheduling: {timeout: 86400s, restartJobOnWorkerRestart: true}
network: projects/123/global/networks/vpc
reservedIpRanges: [training-range]
baseOutputDirectory: {outputUriPrefix: gs://my-bucket/runs/1}
"""

# Seed 000's job.yaml: a whole CustomJob (gcloud would nest it under jobSpec; we read it).
FULL_CONFIG = """\
displayName: "multi-node-pytorch"
labels: {team: research}
jobSpec:
  workerPoolSpecs:
  # Primary replica
  - machineSpec:
      machineType: n1-highmem-8
      acceleratorType: NVIDIA_TESLA_T4
      acceleratorCount: 4
    replicaCount: 1
    containerSpec:
      imageUri: gcr.io/my-project/pytorch-trainer:v1
  # Worker replicas
  - machineSpec:
      machineType: n1-highmem-8
      acceleratorType: NVIDIA_TESLA_T4
      acceleratorCount: 4
    replicaCount: 3
    containerSpec:
      imageUri: gcr.io/my-project/pytorch-trainer:v1
"""
# The same job as gcloud reads it: bare CustomJobSpec fields, with the rest as flags.
FULL_CONFIG_AS_GCLOUD = """\
workerPoolSpecs:
- machineSpec: {machineType: n1-highmem-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 4}
  replicaCount: 1
  containerSpec: {imageUri: gcr.io/my-project/pytorch-trainer:v1}
- machineSpec: {machineType: n1-highmem-8, acceleratorType: NVIDIA_TESLA_T4, acceleratorCount: 4}
  replicaCount: 3
  containerSpec: {imageUri: gcr.io/my-project/pytorch-trainer:v1}
"""

SCHEDULING_CONFIG = """\
scheduling: {timeout: 9000s, restartJobOnWorkerRestart: true, strategy: SPOT, disableRetries: true}
baseOutputDirectory: {outputUriPrefix: gs://my-bucket/out}
"""
FLEX_CONFIG = "scheduling: {strategy: FLEX_START, maxWaitDuration: 7200s, timeout: 86400s}\n"


def pool(**keys: Any) -> str:
    """A `--worker-pool-spec=` flag from keyword keys (underscores become dashes)."""
    return "--worker-pool-spec=" + ",".join(f"{k.replace('_', '-')}={v}" for k, v in keys.items())


def package_pool(machine_type: str, module: str, **keys: Any) -> str:
    """A pool that runs Python package `module` on the prebuilt EXECUTOR image."""
    return pool(
        machine_type=machine_type, **keys, executor_image_uri=EXECUTOR, python_module=module
    )


@dataclass(frozen=True)
class Case:
    """Flags for both CLIs, plus flags only one of them takes, and files they read."""

    id: str
    flags: tuple[str, ...]
    vtp: tuple[str, ...] = ()
    gcloud: tuple[str, ...] = ()
    files: dict[str, str] = field(default_factory=dict)


CASES = [
    # --- gcloud's documented examples ---
    Case(
        "seed000-v100x8",
        (
            "--display-name=pytorch-training",
            pool(
                machine_type="n1-standard-32",
                replica_count=1,
                accelerator_type="NVIDIA_TESLA_V100",
                accelerator_count=8,
                container_image_uri=IMAGE,
            ),
        ),
    ),
    Case(
        "seed000-4x4-t4",
        (
            "--display-name=multi-node-training",
            pool(
                machine_type="n1-highmem-16",
                replica_count=1,
                accelerator_type="NVIDIA_TESLA_T4",
                accelerator_count=4,
                container_image_uri="gcr.io/my-project/trainer:latest",
            ),
            pool(
                machine_type="n1-highmem-16",
                replica_count=3,
                accelerator_type="NVIDIA_TESLA_T4",
                accelerator_count=4,
                container_image_uri="gcr.io/my-project/trainer:latest",
            ),
        ),
    ),
    Case(
        "seed000-web-access",
        (
            "--display-name=debug-job",
            "--enable-web-access",
            pool(
                machine_type="n1-standard-8",
                replica_count=1,
                container_image_uri="gcr.io/my-project/trainer:latest",
            ),
        ),
    ),
    Case(
        "seed000-job-yaml-full-form",
        (),
        vtp=("--config={dir}/job.yaml",),
        gcloud=(
            "--config={dir}/bare.yaml",
            "--display-name=multi-node-pytorch",
            "--labels=team=research",
        ),
        files={"job.yaml": FULL_CONFIG, "bare.yaml": FULL_CONFIG_AS_GCLOUD},
    ),
    # --- documented examples with their placeholders filled in ---
    Case(
        "seed001-python-package",
        (
            "--display-name=hello",
            "--python-package-uris=gs://my-bucket/training/hello-custom-training-1.0.tar.gz",
            package_pool("n1-standard-4", "trainer.task", replica_count=1),
        ),
    ),
    Case(
        "seed001-container",
        (
            "--display-name=hello",
            pool(machine_type="n1-standard-4", replica_count=1, container_image_uri=IMAGE),
        ),
    ),
    Case(
        "seed001-python-two-pools",
        (
            "--display-name=hello",
            "--python-package-uris=gs://b/trainer-0.1.tar.gz,gs://b/dep-2.0.whl",
            package_pool("n1-standard-4", "trainer.task", replica_count=1),
            package_pool("n1-standard-8", "trainer.worker", replica_count=4),
        ),
    ),
    Case(
        "seed001-container-two-pools",
        (
            "--display-name=hello",
            pool(machine_type="n1-standard-4", replica_count=1, container_image_uri=IMAGE),
            pool(machine_type="n1-standard-8", replica_count=2, container_image_uri=IMAGE + "-2"),
        ),
    ),
    Case(
        "seed001-config-bare",
        ("--display-name=hello", "--config={dir}/config.yaml"),
        files={"config.yaml": BARE_CONFIG},
    ),
    # --- more ---
    Case(
        "reduction-server-pool-2",
        (
            "--display-name=rs",
            pool(
                machine_type="a2-highgpu-8g",
                accelerator_type="NVIDIA_TESLA_A100",
                accelerator_count=8,
                container_image_uri=IMAGE,
            ),
            pool(
                machine_type="a2-highgpu-8g",
                replica_count=3,
                accelerator_type="NVIDIA_TESLA_A100",
                accelerator_count=8,
                container_image_uri=IMAGE,
            ),
            pool(
                machine_type="n1-highcpu-16", replica_count=2, container_image_uri=REDUCTION_SERVER
            ),
        ),
    ),
    Case(
        "skipped-pools-and-evaluator",
        (
            "--display-name=ps",
            pool(machine_type="n1-standard-4", container_image_uri=IMAGE),
            "--worker-pool-spec=",
            pool(machine_type="n1-highmem-2", replica_count=2, container_image_uri=IMAGE),
            pool(
                machine_type="g2-standard-24",
                accelerator_type="NVIDIA_L4",
                accelerator_count=2,
                container_image_uri=IMAGE,
            ),
        ),
    ),
    Case(
        "h100-args-command",
        (
            "--display-name=h100",
            "--args=--epochs=3,--lr=0.1",
            "--command=python,-m,trainer",
            pool(
                machine_type="a3-highgpu-8g",
                accelerator_type="NVIDIA_H100_80GB",
                accelerator_count=8,
                container_image_uri=IMAGE,
            ),
        ),
    ),
    Case(
        "repeated-args-alt-delimiter",
        (
            "--display-name=args",
            "--args=^:^--layers=1,2:--x=y",
            "--args=--z",
            "--python-package-uris=gs://b/t.tar.gz",
            package_pool("n1-standard-4", "trainer.task"),
        ),
    ),
    Case(
        "labels-network-sa-persistent",
        (
            "--display-name=net",
            "--labels=team=ml,env=dev",
            "--labels=cost-center=42",
            "--network=projects/123/global/networks/vpc",
            "--service-account=trainer@test-project.iam.gserviceaccount.com",
            "--persistent-resource-id=my-pool",
            "--enable-web-access",
            "--enable-dashboard-access",
            pool(machine_type="n1-standard-4", container_image_uri=IMAGE),
        ),
    ),
    Case(
        "config-overridden-by-flags",
        (
            "--display-name=override",
            "--config={dir}/c.yaml",
            "--args=--epochs=1",
            "--command=bash,-c",
            "--network=projects/9/global/networks/other",
            "--service-account=other@p.iam.gserviceaccount.com",
        ),
        files={"c.yaml": BARE_CONFIG},
    ),
    Case(
        "config-pools-replaced-by-worker-pool-spec",
        (
            "--display-name=replace",
            "--config={dir}/c.yaml",
            pool(machine_type="n1-standard-16", container_image_uri=IMAGE),
        ),
        files={"c.yaml": BARE_CONFIG},
    ),
    Case(
        "tpu-v3",
        (
            "--display-name=tpu",
            pool(
                machine_type="cloud-tpu",
                accelerator_type="TPU_V3",
                accelerator_count=8,
                container_image_uri=IMAGE,
            ),
        ),
    ),
    Case(
        "kms-key",
        (
            "--display-name=cmek",
            "--kms-key=projects/test-project/locations/us-central1/keyRings/ring/cryptoKeys/key",
            pool(machine_type="n1-standard-4", container_image_uri=IMAGE),
        ),
    ),
    # --- our scheduling and output flags = the same fields in gcloud's --config ---
    Case(
        "scheduling-flags-spot",
        ("--display-name=sched", pool(machine_type="n1-standard-4", container_image_uri=IMAGE)),
        vtp=(
            "--timeout=2h30m",
            "--restart-job-on-worker-restart",
            "--scheduling-strategy=spot",
            "--disable-retries",
            "--base-output-dir=gs://my-bucket/out",
        ),
        gcloud=("--config={dir}/s.yaml",),
        files={"s.yaml": SCHEDULING_CONFIG},
    ),
    Case(
        "scheduling-flags-flex-start",
        (
            "--display-name=flex",
            pool(
                machine_type="a3-highgpu-8g",
                accelerator_type="NVIDIA_H100_80GB",
                accelerator_count=8,
                container_image_uri=IMAGE,
            ),
        ),
        vtp=("--scheduling-strategy=FLEX_START", "--max-wait-duration=2h", "--timeout=1d"),
        gcloud=("--config={dir}/f.yaml",),
        files={"f.yaml": FLEX_CONFIG},
    ),
]


@pytest.fixture(scope="module")
def recorder() -> Iterator[VertexRecorder]:
    rec = VertexRecorder()
    yield rec
    rec.close()


@pytest.fixture(scope="module")
def gcloud_create(recorder: VertexRecorder, tmp_path_factory: pytest.TempPathFactory) -> Callable:
    """Run `gcloud ai custom-jobs create` against the recorder; return the body it sent."""
    home = tmp_path_factory.mktemp("gcloud")
    (home / "token").write_text("test-token\n")
    env = dict(
        os.environ,
        CLOUDSDK_CONFIG=str(home / "config"),
        CLOUDSDK_CORE_PROJECT=PROJECT,
        CLOUDSDK_CORE_DISABLE_PROMPTS="1",
        CLOUDSDK_CORE_DISABLE_USAGE_REPORTING="true",
        CLOUDSDK_CORE_CHECK_GCE_METADATA="false",
        CLOUDSDK_COMPONENT_MANAGER_DISABLE_UPDATE_CHECK="true",
        CLOUDSDK_AUTH_ACCESS_TOKEN_FILE=str(home / "token"),
    )
    override = ["gcloud", "config", "set", "api_endpoint_overrides/aiplatform", recorder.url + "/"]
    subprocess.run(override, env=env, check=True, capture_output=True)

    sent: dict[tuple[str, ...], dict[str, Any]] = {}

    def run(flags: list[str]) -> dict[str, Any]:
        if tuple(flags) not in sent:
            sent[tuple(flags)] = send(flags)
        return sent[tuple(flags)]

    def send(flags: list[str]) -> dict[str, Any]:
        argv = ["gcloud", "ai", "custom-jobs", "create", f"--region={REGION}", *flags]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        request = recorder.last("POST", "/customJobs")
        assert request.query.get("alt") == ["json"], "not gcloud's request"
        return request.body

    return run


@pytest.fixture(scope="module")
def files_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cases")


def write_files(case: Case, root: Path) -> Callable[[tuple[str, ...]], list[str]]:
    """Write the case's files under root/<case id>; return a filler for `{dir}` in flags."""
    directory = root / case.id
    directory.mkdir(exist_ok=True)
    for name, text in case.files.items():
        (directory / name).write_text(text)
    return lambda flags: [f.format(dir=directory) for f in flags]


def vtp(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_vtp(capsys, "custom-jobs", "create", *argv)


def custom_job(body: dict[str, Any]) -> aiplatform_v1.CustomJob:
    return aiplatform_v1.CustomJob.from_json(json.dumps(body), ignore_unknown_fields=False)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_dry_run_matches_gcloud(
    case: Case, gcloud_create: Callable, files_root: Path, capsys
) -> None:
    fill = write_files(case, files_root)
    sent_by_gcloud = gcloud_create(fill(case.flags + case.gcloud))
    code, out, err = vtp([*fill(case.flags + case.vtp), "--dry-run"], capsys)
    assert (code, err) == (0, "")
    assert custom_job(json.loads(out)) == custom_job(sent_by_gcloud)


@pytest.mark.parametrize("case", CASES[:6] + CASES[-2:], ids=lambda c: c.id)
def test_local_submission_sends_what_gcloud_sends(
    case: Case,
    gcloud_create: Callable,
    recorder: VertexRecorder,
    files_root: Path,
    capsys,
    monkeypatch,
) -> None:
    fill = write_files(case, files_root)
    sent_by_gcloud = gcloud_create(fill(case.flags + case.gcloud))
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", recorder.url)
    argv = [*fill(case.flags + case.vtp), "--local", f"--project={PROJECT}", f"--region={REGION}"]
    code, out, _ = vtp(argv, capsys)
    request = recorder.last("POST", f"/projects/{PROJECT}/locations/{REGION}/customJobs")
    assert request.query.get("$alt") == ["json;enum-encoding=int"], "not the aiplatform client"
    assert code == 0 and out.strip() == recorder.jobs[out.strip()]["name"]
    assert custom_job(request.body) == custom_job(sent_by_gcloud)


# --- where we differ from gcloud on purpose ---


def test_gcloud_passes_unknown_config_fields_through_we_reject_them(
    gcloud_create: Callable, tmp_path: Path, capsys
) -> None:
    (tmp_path / "c.yaml").write_text(BARE_CONFIG + "tensorbord: projects/1/tensorboards/2\n")
    flags = ["--display-name=typo", f"--config={tmp_path}/c.yaml"]
    sent = gcloud_create(flags)
    assert sent["jobSpec"]["tensorbord"] == "projects/1/tensorboards/2"  # Vertex rejects it later
    code, out, err = vtp([*flags, "--dry-run"], capsys)
    assert (code, out) == (2, "")
    assert "tensorbord" in err and "did you mean 'tensorboard'" in err


def test_gcloud_nests_a_full_custom_job_config_we_read_it(
    gcloud_create: Callable, tmp_path: Path
) -> None:
    (tmp_path / "job.yaml").write_text(FULL_CONFIG)
    sent = gcloud_create(["--display-name=x", f"--config={tmp_path}/job.yaml"])
    assert sent["jobSpec"]["jobSpec"]["workerPoolSpecs"]  # not a CustomJobSpec any more
    with pytest.raises(json_format.ParseError):
        custom_job(sent)  # ... so it is not a valid request (the seed-000 case above reads it)


def test_gcloud_drops_python_package_uris_with_config_pools_we_reject_them(
    gcloud_create: Callable, tmp_path: Path, capsys
) -> None:
    (tmp_path / "c.yaml").write_text(BARE_CONFIG)
    flags = ["--display-name=p", f"--config={tmp_path}/c.yaml", "--python-package-uris=gs://b/t.gz"]
    sent = gcloud_create(flags)
    assert "gs://b/t.gz" not in json.dumps(sent)
    code, out, err = vtp([*flags, "--dry-run"], capsys)
    assert (code, out) == (2, "")
    assert "--python-package-uris" in err


def test_gcloud_sends_python_module_without_package_we_reject_it(
    gcloud_create: Callable, capsys
) -> None:
    flags = [
        "--display-name=p",
        package_pool("n1-standard-4", "trainer.task"),
    ]
    sent = gcloud_create(flags)
    assert sent["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"].get("packageUris", []) == []
    code, out, err = vtp([*flags, "--dry-run"], capsys)
    assert (code, out) == (2, "")
    assert "--python-package-uris" in err
