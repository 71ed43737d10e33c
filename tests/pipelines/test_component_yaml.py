"""A pipeline built only from `compiled/components/*.yaml`, as a team would use our components
without importing our Python packages, compiles and runs locally through `vtp run`'s path."""

from pathlib import Path

import pytest
from google.protobuf import json_format
from kfp import compiler, components, dsl

from vtp.pipelines.compile import compiled_dir
from vtp.run.local_run import run_pipeline

TRAINER_ARGS = ["--epochs=2", "--hidden_size=32", "--checkpoint_interval=10"]


def load(name: str):
    return components.load_component_from_file(str(compiled_dir() / "components" / f"{name}.yaml"))


@pytest.mark.slow
def test_pipeline_from_component_yaml_compiles_and_runs_locally(tmp_path: Path) -> None:
    custom_job, evaluate = load("custom_job"), load("evaluate_checkpoints")

    @dsl.pipeline(name="yaml-only")
    def yaml_only(project: str, output_root: str) -> None:
        job = custom_job(
            project=project,
            location="us-central1",
            display_name="yaml-only",
            output_root=output_root,
            worker_pool_specs=[
                "machine-type=n1-standard-4,"
                "container-image-uri=us-docker.pkg.dev/vertex-torch-pipelines/vtp/vtp:0.1.0"
            ],
            args=TRAINER_ARGS,
            poll_interval_seconds=1.0,
        )
        evaluate(checkpoints=job.outputs["checkpoints"], threshold=0.5)

    compiler.Compiler().compile(yaml_only, str(tmp_path / "yaml_only.yaml"))
    arguments = {"project": "local", "output_root": "gs://vtp-local/runs"}
    spec = json_format.MessageToDict(yaml_only.pipeline_spec)
    result = run_pipeline("yaml-only", spec, arguments, tmp_path / "state", report=print)
    assert result is not None and result.succeeded, result and result.job.error.message
    assert (tmp_path / "yaml_only.yaml").read_text().count("custom-job") >= 1
