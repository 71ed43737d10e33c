"""The SDK's DataFrame summaries work after the README set-up (pandas is in the default install):
a team's unchanged script, under `vtp local exec` from a folder of its own, logs an experiment
run and runs a pipeline, then reads both back with `aiplatform.get_experiment_df` and
`aiplatform.get_pipeline_df` (issue #37)."""

import json
import subprocess
import sys
import textwrap

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


def test_experiment_and_pipeline_dataframes(local_service, tmp_path):
    for name, text in (("pipeline.py", PIPELINE), ("summaries.py", SUMMARIES)):
        (tmp_path / name).write_text(textwrap.dedent(text))
    command = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", local_service.url, "--"]
    for script in ("pipeline.py", "summaries.py"):
        result = subprocess.run(
            [*command, sys.executable, script],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    line = next(li for li in result.stdout.splitlines() if li.startswith("FRAMES "))
    frames = json.loads(line.removeprefix("FRAMES "))
    assert frames["types"] == ["DataFrame", "DataFrame"]
    [experiment_row] = frames["experiment"]
    assert experiment_row["run_name"] == "run-1" and experiment_row["state"] == "COMPLETE"
    assert experiment_row["param.lr"] == 0.1 and experiment_row["metric.accuracy"] == 0.9
    [pipeline_row] = frames["pipeline"]
    assert pipeline_row["pipeline_name"] == "team-df-sum"
    assert pipeline_row["param.input:x"] == 5
