"""The SDK's DataFrame summaries work after the README set-up (pandas is in the default install):
a team's unchanged script, under `vtp local exec` from a folder of its own, logs an experiment
run and runs a pipeline, then reads both back with `aiplatform.get_experiment_df` and
`aiplatform.get_pipeline_df` (issue #37)."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PIPELINE = """
    from kfp import compiler, dsl

    @dsl.component(base_image="python:3.11")
    def add(a: int, b: int) -> int:
        return a + b

    @dsl.pipeline(name="team-df-sum")
    def team_sum(x: int = 1, y: int = 2):
        add(a=x, b=y)

    compiler.Compiler().compile(team_sum, "team_sum.yaml")
"""

SUMMARIES = """
    import json
    from google.cloud import aiplatform

    aiplatform.init(project="team-project", location="us-central1", experiment="exp-df")
    with aiplatform.start_run("run-1") as run:
        run.log_params({"lr": 0.1})
        run.log_metrics({"accuracy": 0.9})
    job = aiplatform.PipelineJob(
        display_name="sum", template_path="team_sum.yaml", parameter_values={"x": 5}
    )
    job.submit()
    job.wait()
    experiments = aiplatform.get_experiment_df("exp-df")
    pipelines = aiplatform.get_pipeline_df("team-df-sum")
    print("FRAMES", json.dumps({
        "types": [type(experiments).__name__, type(pipelines).__name__],
        "experiment": experiments.to_dict("records"),
        "pipeline": pipelines.to_dict("records"),
    }))
"""


def printed_frames(url: str, folder: Path, pipeline: str, script: str) -> dict:
    """Run `pipeline` (which compiles it) then `script` from `folder` under `vtp local exec`;
    what `script` printed after `FRAMES `."""
    (folder / "pipeline.py").write_text(textwrap.dedent(pipeline))
    (folder / "script.py").write_text(textwrap.dedent(script))
    command = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", url, "--"]
    for name in ("pipeline.py", "script.py"):
        result = subprocess.run(
            [*command, sys.executable, name],
            cwd=folder, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    line = next(li for li in result.stdout.splitlines() if li.startswith("FRAMES "))
    return json.loads(line.removeprefix("FRAMES "))


def test_experiment_and_pipeline_dataframes(local_service, tmp_path):
    frames = printed_frames(local_service.url, tmp_path, PIPELINE, SUMMARIES)
    assert frames["types"] == ["DataFrame", "DataFrame"]
    [experiment_row] = frames["experiment"]
    assert experiment_row["run_name"] == "run-1" and experiment_row["state"] == "COMPLETE"
    assert experiment_row["param.lr"] == 0.1 and experiment_row["metric.accuracy"] == 0.9
    [pipeline_row] = frames["pipeline"]
    assert pipeline_row["pipeline_name"] == "team-df-sum"
    assert pipeline_row["param.input:x"] == 5


TEAM_PIPELINE = """
    from kfp import compiler, dsl
    from kfp.dsl import Input, Metrics, Output
    from google_cloud_pipeline_components.types import artifact_types

    @dsl.component(base_image="python:3.11")
    def evaluate(model: Input[artifact_types.UnmanagedContainerModel], threshold: float,
                 metrics: Output[Metrics]):
        metrics.log_metric("accuracy", 0.5 + threshold)

    @dsl.pipeline(name="team-eval")
    def team_eval(threshold: float = 0.25):
        model = dsl.importer(
            artifact_uri="gs://team-bucket/models/1",
            artifact_class=artifact_types.UnmanagedContainerModel,
            metadata={"containerSpec": {"imageUri": "us-docker.pkg.dev/vertex-ai/prediction/x"}},
        )
        evaluate(model=model.output, threshold=threshold)

    compiler.Compiler().compile(team_eval, "team_eval.yaml")
"""

TWO_RUNS = """
    import json
    from google.cloud import aiplatform

    aiplatform.init(project="team-project", location="us-central1")
    for run, threshold in enumerate((0.25, 0.25)):  # the second run is all cache hits
        # IDs of their own: the SDK's default ID is the pipeline's name and the second, and
        # the second run is done within the same second (Vertex would refuse it just the same)
        job = aiplatform.PipelineJob(display_name="eval", template_path="team_eval.yaml",
                                     job_id=f"team-eval-run-{run}",
                                     parameter_values={"threshold": threshold})
        job.submit()
        job.wait()
    rows = aiplatform.get_pipeline_df("team-eval").to_dict("records")
    models = aiplatform.Artifact.list(filter='schema_title="google.UnmanagedContainerModel"')
    print("FRAMES", json.dumps({
        "rows": rows,
        "models": [{"uri": m.uri, "metadata": m.metadata} for m in models],
    }))
"""


def test_runs_metrics_and_an_importers_artifact_are_recorded_as_vertex_records_them(
    local_service, tmp_path
):
    """A team's pipeline with an importer and a Metrics output, run twice: one row per run in
    `get_pipeline_df`, each with `metric.accuracy`; the imported model in ML Metadata under its
    declared schema, once (the same URI is the same artifact)."""
    frames = printed_frames(local_service.url, tmp_path, TEAM_PIPELINE, TWO_RUNS)
    rows = frames["rows"]
    assert len(rows) == 2, rows
    assert [row["metric.accuracy"] for row in rows] == [0.75, 0.75]
    assert all(row["param.input:threshold"] == 0.25 for row in rows)
    assert frames["models"] == [
        {
            "uri": "gs://team-bucket/models/1",
            "metadata": {"containerSpec": {"imageUri": "us-docker.pkg.dev/vertex-ai/prediction/x"}},
        }
    ]
