"""The SDK's training classes, model versions and endpoints against the local service, run as a
user runs them: their program in a folder of their own under `vtp local exec`.

One program trains with each of `CustomTrainingJob`, `CustomContainerTrainingJob` and
`CustomPythonPackageTrainingJob` (each trains digits briefly and exports into AIP_MODEL_DIR),
deploys the first model, predicts, and undeploys; the test compares the predictions with
`vtp.trainer.predict` on the same exported directory."""

import tarfile
import textwrap

import pytest

from tests.fixtures import exec_program, serving_processes

pytestmark = pytest.mark.slow

PROJECT_IMAGE = "us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"

TASK = """
    \"\"\"Train digits briefly, then export into AIP_MODEL_DIR, as a Vertex task does.\"\"\"
    import os, subprocess, sys, tempfile
    from pathlib import Path
    from vtp.trainer.checkpoint import list_checkpoints
    from vtp.trainer.export import export_checkpoint
    from vtp.storage import local_path

    work = Path(tempfile.mkdtemp())
    flags = ["--hidden_size=32", "--max_steps=20", "--checkpoint_interval=20",
             "--eval_interval=20", f"--checkpoint_dir={work / 'ck'}",
             f"--model_dir={work / 'm'}", f"--tensorboard_dir={work / 'tb'}"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-m", "vtp.trainer", *flags], check=True, env=env)
    model_dir = local_path(os.environ["AIP_MODEL_DIR"])
    export_checkpoint(list_checkpoints(work / "ck")[0].path, model_dir)
"""

PROGRAM = """
    import json, os, sys
    from google.api_core import exceptions
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team", location="us-central1", staging_bucket="gs://team-staging")
    staging = storage.Client(project="team").bucket("team-staging")
    if not staging.exists():
        staging.create()  # Bucket.create, the other way the library makes one
    staging.blob("packages/task.tar.gz").upload_from_filename("task.tar.gz")
    serving = dict(
        model_serving_container_image_uri=IMAGE,
        model_serving_container_predict_route="/predict",
        model_serving_container_health_route="/health",
    )
    results = {}

    script = aiplatform.CustomTrainingJob(
        display_name="digits-script", script_path="task.py",
        container_uri="us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
        **serving,
    )
    model = script.run(replica_count=1, machine_type="n1-standard-4", model_display_name="digits")
    results["script_model"] = [model.display_name, model.uri]

    container = aiplatform.CustomContainerTrainingJob(
        display_name="digits-container", container_uri="python:3.11",
        command=[sys.executable, os.path.abspath("task.py")], **serving,  # in "the image"
    )
    results["container_model"] = container.run(
        replica_count=1, machine_type="n1-standard-4", parent_model=model.resource_name,
        model_version_aliases=["candidate"],
    ).version_id

    package = aiplatform.CustomPythonPackageTrainingJob(
        display_name="digits-package", python_package_gcs_uri="gs://team-staging/packages/task.tar.gz",
        python_module_name="digits_task.task",
        container_uri="us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
        **serving,
    )
    packaged = package.run(replica_count=1, machine_type="n1-standard-4")
    results["package_model"] = packaged.display_name

    endpoint = model.deploy(machine_type="n1-standard-2")
    prediction = endpoint.predict(instances=INSTANCES)
    results["predictions"] = [dict(p) for p in prediction.predictions]
    results["deployed_model_id"] = prediction.deployed_model_id
    try:
        model.delete()
    except exceptions.FailedPrecondition as exc:
        results["delete_deployed"] = exc.message
    results["endpoint"] = endpoint.resource_name
    endpoint.undeploy_all()
    results["after_undeploy"] = len(endpoint.list_models())
    try:
        endpoint.predict(instances=INSTANCES)
    except exceptions.FailedPrecondition as exc:
        results["predict_empty"] = exc.message

    # Versions: aliases, update, delete one.
    v2 = aiplatform.Model(model.resource_name, version="candidate")
    v2.versioning_registry.add_version_aliases(["best"], version="2")
    results["aliases"] = list(aiplatform.Model(model.resource_name, version="best").version_aliases)
    updated = model.update(description="digits, briefly", labels={"team": "ml"})
    results["updated"] = [updated.description, dict(updated.labels)]
    model.versioning_registry.add_version_aliases(["default"], version="1")  # moves it from 2
    model.versioning_registry.delete_version("2")
    results["versions"] = [v.version_id for v in model.versioning_registry.list_versions()]
    try:
        aiplatform.Model("projects/team/locations/us-central1/models/404")
    except exceptions.NotFound as exc:
        results["unknown_model"] = exc.message
    endpoint.delete()
    print(json.dumps(results))
"""


def test_train_with_each_sdk_class_then_deploy_and_predict(local_service, tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "task.py").write_text(textwrap.dedent(TASK))
    package = folder / "pkg"
    (package / "digits_task").mkdir(parents=True)
    (package / "digits_task" / "__init__.py").write_text("")
    (package / "digits_task" / "task.py").write_text(textwrap.dedent(TASK))
    (package / "setup.py").write_text(
        "from setuptools import setup\nsetup(name='digits_task', version='0.1', "
        "packages=['digits_task'])\n"
    )
    with tarfile.open(folder / "task.tar.gz", "w:gz") as archive:
        archive.add(package, arcname="digits_task-0.1")
    instances = [[float(i % 17) for i in range(64)], [0.0] * 64]
    header = f"IMAGE = {PROJECT_IMAGE!r}\nINSTANCES = {instances!r}\n"
    (folder / "program.py").write_text(header + textwrap.dedent(PROGRAM))

    results = exec_program(local_service.url, folder)

    assert results["script_model"][0] == "digits"
    assert results["container_model"] == "2"
    assert results["package_model"] == "digits-package-model"
    assert "is deployed to" in results["delete_deployed"]
    assert results["after_undeploy"] == 0
    assert "has no deployed model" in results["predict_empty"]
    assert "best" in results["aliases"] and "candidate" in results["aliases"]
    assert results["updated"] == ["digits, briefly", {"team": "ml"}]
    assert results["versions"] == ["1"]
    assert "not found" in results["unknown_model"]

    # The endpoint's predictions are vtp.trainer.predict's on the registered directory.
    from vtp.trainer.predict import Predictor, model_dir

    uri = results["script_model"][1]
    expected = Predictor.load(
        model_dir(uri.replace("gs://", f"{local_service.gcs_root}/", 1))
    ).predict({"instances": instances})
    served = results["predictions"]
    assert [p["label"] for p in served] == [p["label"] for p in expected]
    for got, want in zip(served, expected, strict=True):
        assert got["probabilities"] == pytest.approx(want["probabilities"], abs=1e-6)
    assert serving_processes(results["endpoint"].rsplit("/", 1)[1]) == []  # undeploy stopped it


def test_deploy_errors_name_what_is_wrong(local_service):
    session, base = local_service.session(), f"{local_service.url}/v1/{local_service.parent}"
    created = session.post(f"{base}/endpoints", json={"displayName": "e"}, timeout=30).json()
    endpoint = created["response"]["name"]
    missing = session.post(
        f"{local_service.url}/v1/{endpoint}:deployModel",
        json={"deployedModel": {"model": f"{local_service.parent}/models/404"}},
        timeout=30,
    )
    assert missing.status_code == 404 and "models/404" in missing.json()["error"]["message"]
    empty = session.post(
        f"{local_service.url}/v1/{endpoint}:predict", json={"instances": [[1]]}, timeout=30
    )
    assert empty.status_code == 400 and "no deployed model" in empty.json()["error"]["message"]
    unknown = session.get(f"{base}/endpoints/404", timeout=30)
    assert unknown.status_code == 404
    renamed = session.patch(
        f"{local_service.url}/v1/{endpoint}?updateMask=displayName",
        json={"displayName": "renamed", "description": "not in the mask"},
        timeout=30,
    )
    assert renamed.status_code == 200 and renamed.json()["displayName"] == "renamed"
    assert "description" not in renamed.json()
    refused = session.patch(
        f"{local_service.url}/v1/{endpoint}?updateMask=deployedModels", json={}, timeout=30
    )
    assert refused.status_code == 400 and "deployed_models" in refused.json()["error"]["message"]
    pipeline = session.post(
        f"{base}/trainingPipelines",
        json={
            "displayName": "automl",
            "trainingTaskDefinition": "gs://google-cloud-aiplatform/schema/trainingjob/"
            "definition/automl_tabular_1.0.0.yaml",
            "trainingTaskInputs": {},
        },
        timeout=30,
    )
    assert pipeline.status_code == 501
    assert "not supported by the local Vertex service" in pipeline.json()["error"]["message"]
