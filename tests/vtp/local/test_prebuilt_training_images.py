"""A pool on one of Vertex's prebuilt training images gets that image's frameworks (issue #51).

Replicas run on the service's interpreter, so a job on XGBoost's image gets `xgboost` and one
on PyTorch's image gets torchvision paired with the service's torch, installed by real pip in a
cached layer (`vtp/local/runtime/packages.py`, `vtp/vertex/prebuilt_images.py`). Where the
index's torchvision cannot load beside this machine's torch (PyPI's CUDA build beside a CPU
torch), a job that imports it fails at once, its log ending in one ImportError line that names
the image, torchvision and the way out. Which of the two holds here is found out on its own, by
pip installing that torchvision into a folder of the test's and importing it.
"""

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.fixtures import State, wait_for_state
from tests.vtp.local.conftest import custom_job
from tests.vtp.local.test_job_requirements import replica_log, service_has
from vtp.vertex.prebuilt_images import framework_packages, paired_torch_libraries, training_image

XGBOOST = "us-docker.pkg.dev/vertex-ai/training/xgboost-cpu.2-1.py310:latest"
PYTORCH = "us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest"

TRAIN_XGBOOST = """
    import numpy, xgboost
    features = numpy.arange(40, dtype=float).reshape(20, 2)
    labels = (features[:, 0] > 19).astype(float)
    data = xgboost.DMatrix(features, label=labels)
    booster = xgboost.train({"objective": "binary:logistic", "nthread": 1}, data, 3)
    print("XGBOOST", xgboost.__file__, booster.predict(data).round().tolist() == labels.tolist())
"""

TENSORFLOW = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310:latest"
TRAIN_TENSORFLOW = """
    import numpy, tensorflow as tf
    weights = tf.Variable([[0.0], [0.0]])
    features = tf.constant(numpy.arange(8, dtype="float32").reshape(4, 2))
    for _ in range(200):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((features @ weights - features[:, :1]) ** 2)
        weights.assign_sub(0.01 * tape.gradient(loss, weights))
    print("TENSORFLOW", tf.__file__, float(loss) < 0.1)
"""

IMPORT_TORCHVISION = """
    import torchvision
    print("TORCHVISION", torchvision.__file__)
"""


# -- the table of images (pure) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "uri, framework, accelerator, version",
    [
        (XGBOOST, "xgboost", "cpu", "2.1"),
        (PYTORCH, "pytorch", "cpu", "2.4"),
        ("europe-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:latest", "pytorch",
         "gpu", "2.4"),
        ("asia-docker.pkg.dev/vertex-ai-restricted/training/tf-cpu.2-15.py310:latest", "tf",
         "cpu", "2.15"),
        ("gcr.io/cloud-aiplatform/training/scikit-learn-cpu.0-23:latest", "sklearn", "cpu",
         "0.23"),
        ("gcr.io/cloud-aiplatform/training/pytorch-xla.1-11", "pytorch", "xla", "1.11"),
        (f"us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-3:v1@sha256:{'a' * 64}",
         "sklearn", "cpu", "1.3"),
    ],
)  # fmt: skip
def test_a_prebuilt_training_image_is_named_by_its_uri(uri, framework, accelerator, version):
    image = training_image(uri)
    assert image is not None
    assert (image.framework, image.accelerator, image.version) == (framework, accelerator, version)


@pytest.mark.parametrize(
    "uri",
    [
        "python:3.11-slim",
        "us-docker.pkg.dev/vertex-ai/prediction/xgboost-cpu.2-1:latest",  # serving, not training
        "us-docker.pkg.dev/team-project/training/pytorch-cpu.2-4.py310:latest",  # a team's own
        "gcr.io/cloud-aiplatform/training/pytorch-cpu.2-4/extra:latest",
        "",
    ],
)
def test_any_other_image_is_not_one(uri):
    assert training_image(uri) is None


def test_each_image_holds_its_frameworks():
    """torchvision and torchaudio at the releases paired with the service's torch (not the
    image's); XGBoost as PyPI's CPU build, meeting a requirement of `xgboost`; TensorFlow's CPU
    build for a CPU image; without a torch 2.x, PyTorch's libraries only explained."""
    pytorch = training_image(PYTORCH)
    xgboost = training_image(XGBOOST)
    tf = training_image("us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310:latest")
    assert pytorch and xgboost and tf
    paired = framework_packages(pytorch, "2.13.0+cpu")
    assert [p.requirement for p in paired] == ["torchvision==0.28.*", "torchaudio==2.13.*"]
    assert paired_torch_libraries("2.4.1") == {"torchvision": "==0.19.*", "torchaudio": "==2.4.*"}
    (xgb, *tabular) = framework_packages(xgboost, "")
    assert (xgb.requirement, xgb.module, xgb.provides) == ("xgboost-cpu", "xgboost", "xgboost")
    assert [p.module for p in tabular] == ["sklearn", "pandas", "scipy"]
    (tensorflow,) = framework_packages(tf, "2.13.0+cpu")
    assert (tensorflow.requirement, tensorflow.module, tensorflow.provides) == (
        "tensorflow-cpu",
        "tensorflow",
        "tensorflow",
    )
    assert all(
        not p.requirement and "no torch" in p.reason for p in framework_packages(pytorch, "")
    )


# -- jobs on the real service ---------------------------------------------------------------


@pytest.fixture(scope="module")
def torchvision_loads(tmp_path_factory) -> bool:
    """Whether the index's torchvision for the service's torch imports beside it here: pip
    installs it (alone) into a folder of its own, and a fresh interpreter imports it there."""
    if service_has("torchvision"):
        return True
    spec = paired_torch_libraries(importlib.metadata.version("torch"))
    target = tmp_path_factory.mktemp("torchvision")
    pip = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target)]
    subprocess.run([*pip, f"torchvision{spec['torchvision']}"], check=True, timeout=600)
    probe = subprocess.run(
        [sys.executable, "-c", "import torchvision"],
        env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=300,
    )
    return probe.returncode == 0


def host_pool(image: str, script: Path) -> dict:
    """A pool of `image` whose command runs `script` (a host process: no container engine)."""
    return {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": image, "command": ["python", str(script)]},
    }


def run_job(local_service, image: str, script: Path, code: str) -> tuple[object, str]:
    """Run `code` as `script` on `image`: the ended job and its primary replica's log."""
    script.write_text(textwrap.dedent(code))
    client = local_service.client()
    job = custom_job(host_pool(image, script), display_name=script.stem)
    created = client.create_custom_job(parent=local_service.parent, custom_job=job)
    done = wait_for_state(client, created.name, timeout=600)
    return done, replica_log(local_service, created.name.rsplit("/", 1)[-1])


def image_layers(local_service) -> Path:
    """This user's cache of image layers, which every service of theirs shares."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vtp" / "images"


@pytest.mark.slow
def test_an_xgboost_job_trains_a_model_and_the_next_reuses_the_layer(local_service, tmp_path):
    assert not service_has("xgboost"), "the service has xgboost: this test shows nothing"
    first, first_log = run_job(local_service, XGBOOST, tmp_path / "first.py", TRAIN_XGBOOST)
    assert first.state == State.JOB_STATE_SUCCEEDED, first_log[-3000:]
    (trained,) = [line.split() for line in first_log.splitlines() if line.startswith("XGBOOST ")]
    assert Path(trained[1]).is_relative_to(image_layers(local_service)) and trained[2] == "True"
    second, second_log = run_job(local_service, XGBOOST, tmp_path / "second.py", TRAIN_XGBOOST)
    assert second.state == State.JOB_STATE_SUCCEEDED, second_log[-3000:]
    assert f"prebuilt image {XGBOOST}: xgboost-cpu: reused, already installed in" in second_log
    assert "Looking in indexes" not in second_log and "Installing collected" not in second_log
    assert not service_has("xgboost")


@pytest.mark.slow
def test_a_tensorflow_job_trains_with_the_images_tensorflow(local_service, tmp_path):
    assert not service_has("tensorflow"), "the service has tensorflow: this test shows nothing"
    done, log = run_job(local_service, TENSORFLOW, tmp_path / "tf_train.py", TRAIN_TENSORFLOW)
    assert done.state == State.JOB_STATE_SUCCEEDED, log[-3000:]
    (trained,) = [line.split() for line in log.splitlines() if line.startswith("TENSORFLOW ")]
    assert Path(trained[1]).is_relative_to(image_layers(local_service)) and trained[2] == "True"
    assert not service_has("tensorflow")


@pytest.mark.slow
def test_a_pytorch_job_imports_torchvision_or_fails_in_one_line(
    local_service, tmp_path, torchvision_loads
):
    job, log = run_job(local_service, PYTORCH, tmp_path / "vision.py", IMPORT_TORCHVISION)
    check_torchvision(job.state.name, job.error.message, log, torchvision_loads)


def check_torchvision(state: str, error: str, log: str, loads: bool) -> None:
    """The job imported torchvision where it loads here, and otherwise failed with one line
    naming the image, torchvision and the way out."""
    if loads:
        assert state == "JOB_STATE_SUCCEEDED", log[-3000:]
        assert any(line.startswith("TORCHVISION ") for line in log.splitlines()), log[-3000:]
        return
    assert state == "JOB_STATE_FAILED", log[-3000:]
    assert "exited with a non-zero status of 1" in error
    (line,) = [line for line in log.splitlines() if line.startswith("ImportError")]
    assert line.startswith(f"ImportError: {PYTORCH} has torchvision, but torchvision==0."), line
    assert "pip install 'torchvision==" in line and "VTP_CONTAINER_ENGINE=podman" in line, line
    assert log.rstrip().endswith(line), log[-3000:]  # nothing of ours after it


# -- a team's script, from a folder of its own --------------------------------------------------

SUBMIT = """
    import json, sys
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team-project", location="us-central1", staging_bucket="gs://team-img")
    client = storage.Client(project="team-project")
    if not client.bucket("team-img").exists():
        client.create_bucket("team-img")
    outcome = {}
    for name, image, requirements in json.loads(sys.argv[1]):
        job = aiplatform.CustomJob.from_local_script(
            display_name=name, script_path=f"{name}.py", container_uri=image,
            requirements=requirements,
        )
        try:
            job.run()
        except RuntimeError as exc:
            outcome[name] = {"id": job.name, "state": job.state.name, "error": str(exc)}
            continue
        outcome[name] = {"id": job.name, "state": job.state.name, "error": ""}
    print("OUTCOME", json.dumps(outcome))
"""


@pytest.mark.slow
def test_a_teams_sdk_script_from_its_own_folder(local_service, tmp_path, torchvision_loads):
    """`CustomJob.from_local_script(container_uri=<prebuilt image>)` under `vtp local exec`:
    the XGBoost job's own requirement of `xgboost` is met by the image's layer (no layer of
    requirements is installed), and the PyTorch job imports torchvision or fails as above."""
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "submit.py").write_text(textwrap.dedent(SUBMIT))
    (folder / "train.py").write_text(textwrap.dedent(TRAIN_XGBOOST))
    (folder / "vision.py").write_text(textwrap.dedent(IMPORT_TORCHVISION))
    jobs = [["train", XGBOOST, ["xgboost"]], ["vision", PYTORCH, []]]
    command = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", local_service.url]
    result = subprocess.run(
        [*command, "--", sys.executable, "submit.py", json.dumps(jobs)],
        cwd=folder, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    line = next(li for li in result.stdout.splitlines() if li.startswith("OUTCOME "))
    outcome = json.loads(line.removeprefix("OUTCOME "))
    train = replica_log(local_service, outcome["train"]["id"].rsplit("/", 1)[-1])
    assert outcome["train"]["state"] == "JOB_STATE_SUCCEEDED", train[-3000:]
    (trained,) = [li.split() for li in train.splitlines() if li.startswith("XGBOOST ")]
    assert Path(trained[1]).is_relative_to(image_layers(local_service)) and trained[2] == "True"
    assert "requirements xgboost" not in train, train[-3000:]
    vision = outcome["vision"]
    log = replica_log(local_service, vision["id"].rsplit("/", 1)[-1])
    check_torchvision(vision["state"], vision["error"], log, torchvision_loads)
