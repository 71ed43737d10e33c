"""A local pipeline run in ML Metadata, as Vertex Pipelines records one, read through the real
aiplatform SDK (REST transport): the pipeline and run contexts the job names, the run's
parameters on its `system.Run` execution, each task's execution with its input and output
artifacts, a Metrics artifact's values, `PipelineJob.submit(experiment=...)` and
the rows of `get_experiment_df`, and an artifact's lineage back to the run."""

from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import aiplatform
from kfp import compiler, dsl
from kfp.dsl import Input, Metrics, Model, Output

from tests.fixtures import LocalService, experiment_rows

IMAGE = "python:3.11-slim"


@dsl.component(base_image=IMAGE)
def fit(learning_rate: float, model: Output[Model]):
    with open(model.path, "w") as out:
        out.write(f"weights for {learning_rate}")


@dsl.component(base_image=IMAGE)
def score(model: Input[Model], metrics: Output[Metrics]):
    metrics.log_metric("accuracy", 0.75)
    metrics.log_metric("loss", 0.5)


@dsl.pipeline(name="lineage-pipeline")
def lineage_pipeline(learning_rate: float = 0.1, epochs: int = 2):
    fitted = fit(learning_rate=learning_rate)
    score(model=fitted.outputs["model"])


@pytest.fixture
def sdk(local_service: LocalService) -> Iterator[None]:
    local_service.init_sdk()
    yield
    aiplatform.init(api_endpoint=None, api_transport=None, experiment=None)


SUBMIT = """
from google.cloud import aiplatform

aiplatform.init(project="local", location="us-central1")
job = aiplatform.PipelineJob(
    display_name="lineage",
    template_path="pipeline.yaml",
    job_id="lineage-run-1",
    pipeline_root="gs://vtp-test/lineage",
    parameter_values={"learning_rate": 0.25},
    enable_caching=False,
)
job.submit(experiment="lineage-exp")
job.wait()
assert job.get_associated_experiment().name == "lineage-exp"
"""


def test_run_records_contexts_executions_artifacts_and_experiment(
    local_service: LocalService, sdk: None, tmp_path: Path
) -> None:
    compiler.Compiler().compile(lineage_pipeline, str(tmp_path / "pipeline.yaml"))
    (tmp_path / "submit.py").write_text(SUBMIT)
    local_service.run_user_program(tmp_path, "submit.py")  # as a user's program submits it
    job = aiplatform.PipelineJob.get("lineage-run-1")
    detail = job.gca_resource.job_detail
    run_context = detail.pipeline_run_context
    assert run_context.schema_title == "system.PipelineRun"
    assert run_context.display_name == "lineage-run-1"
    assert detail.pipeline_context.schema_title == "system.Pipeline"
    assert detail.pipeline_context.name in run_context.parent_contexts

    in_run = f'in_context("{run_context.name}")'
    executions = aiplatform.Execution.list(filter=in_run)
    by_schema = {e.schema_title: e for e in executions}
    assert {e.display_name for e in executions} == {"lineage-run-1", "fit", "score"}
    run = by_schema["system.Run"]
    assert run.metadata["input:learning_rate"] == 0.25
    assert run.metadata["input:epochs"] == 2  # a default, as used
    assert run.state == aiplatform.gapic.Execution.State.COMPLETE
    assert [e.display_name for e in executions if e.schema_title == "system.ContainerExecution"]

    in_pipeline = f'in_context("{detail.pipeline_context.name}") AND schema_title="system.Run"'
    assert [e.display_name for e in aiplatform.Execution.list(filter=in_pipeline)] == [
        "lineage-run-1"
    ]  # get_pipeline_df's runs

    artifacts = {a.schema_title: a for a in aiplatform.Artifact.list(filter=in_run)}
    assert artifacts["system.Metrics"].metadata == {"accuracy": 0.75, "loss": 0.5}
    model = artifacts["system.Model"]
    assert model.uri.startswith("gs://vtp-test/lineage/lineage-run-1/")
    assert model.state == aiplatform.gapic.Artifact.State.LIVE

    [row] = experiment_rows("lineage-exp")  # get_experiment_df's rows
    assert row["run_name"] == "lineage-run-1"
    assert row["run_type"] == "system.PipelineRun"
    assert row["state"] == "COMPLETE"
    assert row["param.learning_rate"] == 0.25
    assert row["metric.accuracy"] == 0.75

    # The model's lineage: fit wrote it, score read it, both executions of this run; and the
    # run's own execution, which holds score's metrics as its outputs (get_pipeline_df's columns).
    graph = model.api_client.query_artifact_lineage_subgraph(artifact=model.resource_name)
    made = {e.display_name for e in graph.executions}
    assert made == {"fit", "score", "lineage-run-1"}
    run_executions = {e.resource_name for e in executions}
    assert {e.name for e in graph.executions} <= run_executions
