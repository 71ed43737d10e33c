"""Fixtures of the component tests that register and deploy models: a short digits run
exported into the service's storage root, the environment `vtp run` gives component bodies,
and upload_model's body."""

from pathlib import Path

import pytest
import torch
from google.api_core.client_options import ClientOptions
from google.cloud import aiplatform_v1
from google_cloud_pipeline_components.types.artifact_types import VertexModel
from kfp.dsl import Model

from tests.fixtures import PROJECT, REGION, LocalService
from vtp.components.export_model import export_model
from vtp.components.upload_model import upload_model
from vtp.trainer import train
from vtp.trainer.checkpoint import list_checkpoints
from vtp.trainer.config import parse_args
from vtp.trainer.distributed import Runtime


@pytest.fixture(scope="module")
def exported(local_service: LocalService, tmp_path_factory: pytest.TempPathFactory) -> Model:
    """export_model's output for a short digits run, in the service's local Cloud Storage."""
    out = tmp_path_factory.mktemp("run")
    flags = {"hidden_size": 16, "max_steps": 20, "checkpoint_interval": 20, "eval_interval": 20}
    dirs = {f"{name}_dir": out / name for name in ("checkpoint", "model", "tensorboard")}
    argv = [f"--{key}={value}" for key, value in {**flags, **dirs}.items()]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CLOUD_ML_HP_METRIC_FILE", str(out / "hypertune.metrics"))
        train.run(parse_args(argv), Runtime(0, 1, 0, torch.device("cpu")))
    torch.set_num_threads(threads)
    best = list_checkpoints(out / "checkpoint")[0].path
    checkpoint = Model(uri=str(best), metadata={"step": 20, "metric": "accuracy", "accuracy": 0.5})
    model = Model(uri=str(local_service.gcs_root / "root" / "run-1" / "export-model" / "model"))
    export_model.python_func(checkpoint=checkpoint, model=model)
    return model


@pytest.fixture
def service_env(local_service: LocalService, monkeypatch: pytest.MonkeyPatch) -> LocalService:
    """The environment `vtp run` gives component bodies: the service and its storage root."""
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", local_service.url)
    monkeypatch.setenv("VTP_GCS_ROOT", str(local_service.gcs_root))
    return local_service


def models_client(service: LocalService) -> aiplatform_v1.ModelServiceClient:
    """The GAPIC ModelServiceClient on the service."""
    return aiplatform_v1.ModelServiceClient(
        transport="rest",
        client_options=ClientOptions(api_endpoint=service.url),
        credentials=service.credentials(),
    )


def upload(model: Model, out: Path, run: str, task: str = "upload-model", **kwargs) -> VertexModel:
    """Run the upload_model body; return its VertexModel output."""
    vertex_model = VertexModel(uri=str(out / "vertex_model"))
    upload_model.python_func(
        project=PROJECT,
        location=REGION,
        display_name=kwargs.pop("display_name", "digits"),
        model=model,
        vertex_model=vertex_model,
        gcp_resources=str(out / "gcp_resources"),
        pipeline_run=run,
        task_name=task,
        **kwargs,
    )
    return vertex_model
