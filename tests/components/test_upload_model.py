"""`export_model` then `upload_model` on the local service: bodies, retries, kfp.local, GCPC."""

import inspect
import json
import re
import shutil
from pathlib import Path

import pytest
import torch
import yaml
from google.cloud import aiplatform_v1
from google_cloud_pipeline_components.types.artifact_types import VertexModel
from google_cloud_pipeline_components.v1.endpoint import EndpointCreateOp, ModelDeployOp
from kfp import compiler, dsl, local
from kfp.dsl import Model

from tests.components.conftest import models_client, upload
from tests.fixtures import PROJECT, REGION
from tests.trainer import serving
from vtp.components.upload_model import upload_model
from vtp.images import COMPONENT_IMAGE
from vtp.launchers import upload_model as registry
from vtp.trainer.config import parse_args
from vtp.trainer.export import load_program
from vtp.trainer.tasks import digits

PREBUILT = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest"
SERVED_BY_THE_PROJECT_IMAGE = aiplatform_v1.ModelContainerSpec(
    image_uri=COMPONENT_IMAGE,
    command=["python", "-m", "vtp.trainer.serve"],
    ports=[aiplatform_v1.Port(container_port=8080)],
    predict_route="/predict",
    health_route="/health",
)


def resources(out: Path) -> list[dict]:
    """The resources recorded in `gcp_resources`."""
    return json.loads((out / "gcp_resources").read_text())["resources"]


def test_export_writes_the_portable_program_and_carries_metadata(exported: Model) -> None:
    directory = Path(exported.path)
    names = {"model.pt2", "model.pt", "config.json", "metrics.json", "export.json"}
    assert {p.name for p in directory.iterdir()} == names
    assert exported.metadata["format"] == "torch.export"
    assert exported.metadata["torch_version"] == torch.__version__
    assert (exported.metadata["step"], exported.metadata["accuracy"]) == (20, 0.5)
    assert load_program(directory)(torch.zeros(3, 64)).shape == (3, 10)


def test_upload_outputs_the_vertex_model_gcpc_writes(service_env, exported, tmp_path) -> None:
    output = upload(exported, tmp_path, "run-1", labels={"team": "vision"})

    name = output.metadata["resourceName"]
    assert name.startswith(f"{service_env.parent}/models/") and name.endswith("@1")
    assert output.uri == f"{service_env.url}/v1/{name}"
    registered = models_client(service_env).get_model(name=name)
    assert registered.artifact_uri == "gs://root/run-1/export-model/model"
    assert registered.container_spec == SERVED_BY_THE_PROJECT_IMAGE
    assert registered.display_name == "digits" and registered.version_aliases == ["default"]
    assert registered.labels["team"] == "vision"
    assert re.fullmatch(r"[0-9a-f]{32}", registered.labels["vtp-task"])
    (operation,) = resources(tmp_path)
    assert operation["resourceType"] == "VertexLro"
    assert operation["resourceUri"].startswith(f"{service_env.url}/v1/{name[:-2]}/operations/")


def test_the_default_serving_image_is_the_project_image() -> None:
    # A literal in the signature (kfp copies the source); the same string, so that
    # `vtp compile --image` rewrites it with the component images.
    default = inspect.signature(upload_model.python_func).parameters["serving_container_image_uri"]
    assert default.default == COMPONENT_IMAGE


def test_an_image_compiled_in_or_named_as_the_project_image_serves_with_trainer_serve() -> None:
    for image in ("europe-docker.pkg.dev/acme/ml/vtp:7", "gcr.io/acme/serving/trainer:1"):
        # `vtp compile --image` rewrote the default, or the image carries the project's name
        spec = registry.serving(image, project_image="gcr.io/acme/serving/trainer:1")
        assert spec.command == ("python", "-m", "vtp.trainer.serve") and spec.ports == (8080,)
    other = registry.serving(PREBUILT, project_image=COMPONENT_IMAGE, health_route="/ping")
    assert other == registry.Serving(PREBUILT, health_route="/ping")


def test_the_registered_container_serves_the_model_as_vertex_would_run_it(
    service_env, exported, tmp_path
) -> None:
    name = upload(exported, tmp_path, "run-serve").metadata["resourceName"]
    registered = models_client(service_env).get_model(name=name)
    spec = registered.container_spec
    assert spec == SERVED_BY_THE_PROJECT_IMAGE

    # Vertex sets AIP_HTTP_PORT from ports[0]; here a free port stands in for 8080.
    port = serving.free_port()
    env = serving.serve_env(
        AIP_HTTP_PORT=str(port),
        AIP_PREDICT_ROUTE=spec.predict_route,
        AIP_HEALTH_ROUTE=spec.health_route,
        AIP_STORAGE_URI=registered.artifact_uri,
        VTP_GCS_ROOT=str(service_env.gcs_root),
    )
    process = serving.start(env, tuple(spec.command))
    try:
        serving.wait_healthy(process, port, spec.health_route)
        inputs = digits.build_datasets(parse_args([]))[1].tensors[0][:5]
        status, answer = serving.Client(port).post(
            spec.predict_route, {"instances": inputs.tolist()}
        )
    finally:
        serving.stop(process)
    assert status == 200
    indices = load_program(exported.path)(inputs).argmax(dim=1).tolist()
    assert [p["index"] for p in answer["predictions"]] == indices


def test_another_image_gets_only_what_is_given(service_env, exported, tmp_path) -> None:
    bare = upload(exported, tmp_path / "a", "run-5", serving_container_image_uri=PREBUILT)
    client = models_client(service_env)
    spec = client.get_model(name=bare.metadata["resourceName"]).container_spec
    assert spec == aiplatform_v1.ModelContainerSpec(image_uri=PREBUILT)

    given = upload(
        exported,
        tmp_path / "b",
        "run-6",
        serving_container_image_uri=PREBUILT,
        serving_container_args=["--model-store", "/models"],
        serving_container_ports=[7080],
        serving_container_predict_route="/predictions/digits",
        serving_container_environment_variables={"OMP_NUM_THREADS": "4"},
    )
    spec = client.get_model(name=given.metadata["resourceName"]).container_spec
    assert spec == aiplatform_v1.ModelContainerSpec(
        image_uri=PREBUILT,
        args=["--model-store", "/models"],
        ports=[aiplatform_v1.Port(container_port=7080)],
        predict_route="/predictions/digits",
        env=[aiplatform_v1.EnvVar(name="OMP_NUM_THREADS", value="4")],
    )

    routes = upload(
        exported, tmp_path / "c", "run-7", serving_container_health_route="/ready"
    )  # the project's image: one default replaced, the others kept
    spec = client.get_model(name=routes.metadata["resourceName"]).container_spec
    assert spec.health_route == "/ready" and spec.predict_route == "/predict"
    assert list(spec.command) == ["python", "-m", "vtp.trainer.serve"]


def test_a_retried_task_reuses_its_version_and_parent_model_adds_one(
    service_env, exported, tmp_path
) -> None:
    first = upload(exported, tmp_path / "a", "run-2")
    again = upload(exported, tmp_path / "b", "run-2")
    assert again.metadata == first.metadata and again.uri == first.uri
    assert resources(tmp_path / "b")[0]["resourceType"] == "VertexModel"

    model_name = first.metadata["resourceName"].partition("@")[0]
    second = upload(exported, tmp_path / "c", "run-3", parent_model=model_name.rpartition("/")[2])
    assert second.metadata["resourceName"] == f"{model_name}@2"
    client = models_client(service_env)
    assert client.get_model(name=model_name).version_id == "2"  # the new default
    assert [m.version_id for m in client.list_model_versions(name=model_name)] == ["1", "2"]
    retried = upload(exported, tmp_path / "d", "run-3", parent_model=model_name)
    assert retried.metadata == second.metadata


def test_an_empty_display_name_follows_the_models_task(service_env, exported, tmp_path) -> None:
    registered = upload(exported, tmp_path, "run-5", display_name=" ")
    model = models_client(service_env).get_model(name=registered.metadata["resourceName"])
    assert model.display_name == "vtp-digits"  # config.json's task: vtp.trainer.tasks.digits


def test_bad_inputs_fail_before_anything_is_registered(service_env, exported, tmp_path) -> None:
    client = models_client(service_env)
    before = len(list(client.list_models(parent=service_env.parent)))
    outside = Model(uri=str(tmp_path / "elsewhere"))
    with pytest.raises(ValueError, match=r"model: .*elsewhere is neither a gs:// URI nor under"):
        upload(outside, tmp_path, "run-4")
    with pytest.raises(ValueError, match="parent_model 'models/1' is neither"):
        upload(exported, tmp_path, "run-4", parent_model="models/1")
    with pytest.raises(ValueError, match="serving_container_ports: '8080' is not a port number"):
        upload(exported, tmp_path, "run-4", serving_container_ports=["8080"])
    with pytest.raises(ValueError, match="serving_container_health_route 'health' must start"):
        upload(exported, tmp_path, "run-4", serving_container_health_route="health")
    with pytest.raises(ValueError, match="serving_container_image_uri is required"):
        upload(exported, tmp_path, "run-4", serving_container_image_uri="")
    assert len(list(client.list_models(parent=service_env.parent))) == before
    assert not (tmp_path / "gcp_resources").exists()


def test_runs_under_kfp_local_and_feeds_gcpc_deploy(service_env, exported, tmp_path) -> None:
    @dsl.pipeline(name="register")
    def register(model_uri: str) -> VertexModel:
        imported = dsl.importer(artifact_uri=model_uri, artifact_class=Model)
        uploaded = upload_model(
            project=PROJECT, location=REGION, display_name="kfp-local", model=imported.output
        )
        return uploaded.outputs["vertex_model"]

    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(tmp_path))
    output = register(model_uri="gs://root/run-1/export-model/model").output
    name = output.metadata["resourceName"]
    assert output.uri == f"{service_env.url}/v1/{name}"
    assert models_client(service_env).get_model(name=name).display_name == "kfp-local"

    @dsl.pipeline(name="register-and-deploy")
    def deploy(model_uri: str):
        imported = dsl.importer(artifact_uri=model_uri, artifact_class=Model)
        uploaded = upload_model(
            project=PROJECT, location=REGION, display_name="d", model=imported.output
        )
        endpoint = EndpointCreateOp(project=PROJECT, location=REGION, display_name="e")
        ModelDeployOp(
            model=uploaded.outputs["vertex_model"],
            endpoint=endpoint.outputs["endpoint"],
            dedicated_resources_machine_type="n1-standard-4",
            dedicated_resources_min_replica_count=1,
        )

    compiler.Compiler().compile(deploy, str(tmp_path / "deploy.yaml"))
    spec = yaml.safe_load((tmp_path / "deploy.yaml").read_text())
    outputs = spec["components"]["comp-upload-model"]["outputDefinitions"]["artifacts"]
    assert outputs["vertex_model"]["artifactType"]["schemaTitle"] == "google.VertexModel"
    model_input = spec["root"]["dag"]["tasks"]["model-deploy"]["inputs"]["artifacts"]["model"]
    assert model_input["taskOutputArtifact"] == {
        "outputArtifactKey": "vertex_model",
        "producerTask": "upload-model",
    }


def test_parallel_for_iterations_register_their_own_models(service_env, exported, tmp_path) -> None:
    """Iterations share the task name; what they register tells them apart, retries match."""
    other = Model(uri=str(Path(exported.path).parent / "model-copy"), metadata=exported.metadata)
    shutil.copytree(exported.path, other.path)
    first = upload(exported, tmp_path / "a", "run-pf")
    second = upload(other, tmp_path / "b", "run-pf")
    again = upload(other, tmp_path / "c", "run-pf")  # a retry of the second iteration
    names = [m.metadata["resourceName"] for m in (first, second, again)]
    assert names[0] != names[1] and names[1] == names[2]
