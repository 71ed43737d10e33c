"""A team's programs, unchanged, under `vtp local exec`: written for Vertex (no endpoint, no
credentials, default transport), run from a folder of their own outside the repository. The
start-up hook points their SDK and Cloud Storage clients at the service; replicas and pipeline
tasks get the same, so code inside a job reaches the service as it would reach Vertex."""

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

REPLICA_TASK = """
    import argparse
    from google.cloud import storage

    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    client = storage.Client()  # inside the replica: no credentials, as on Vertex
    config = client.bucket("team-data").blob("inputs/config.txt").download_as_text()
    result = f"{config.strip()} epochs={args.epochs}"
    client.bucket("team-data").blob("outputs/result.txt").upload_from_string(result)
"""

SUBMIT_JOB = """
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team-project", location="us-central1", staging_bucket="gs://team-data")
    client = storage.Client(project="team-project")
    if not client.bucket("team-data").exists():
        client.create_bucket("team-data")
    client.bucket("team-data").blob("inputs/config.txt").upload_from_string("lr=0.1")
    job = aiplatform.CustomJob.from_local_script(
        display_name="from-local-script",
        script_path="task.py",
        container_uri="us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
        args=["--epochs", "3"],
    )
    job.run()
    print("STATE", job.state.name)
"""

PIPELINE = """
    from kfp import compiler, dsl

    @dsl.component(base_image="python:3.11")
    def add(a: int, b: int) -> int:
        return a + b

    @dsl.pipeline(name="team-sum")
    def team_sum(x: int = 1, y: int = 2):
        add(a=add(a=x, b=y).output, b=10)

    compiler.Compiler().compile(team_sum, "team_sum.yaml")
"""

SUBMIT_PIPELINE = """
    from google.cloud import aiplatform

    aiplatform.init(project="team-project", location="us-central1")
    job = aiplatform.PipelineJob(
        display_name="sum", template_path="team_sum.yaml", parameter_values={"x": 5}
    )
    job.submit()
    job.wait()
    print("STATE", job.state.name)
"""

EXPERIMENT = """
    from google.cloud import aiplatform, resourcemanager

    project = resourcemanager.ProjectsClient().get_project(name="projects/team-project")
    print("PROJECT", project.name, project.project_id)
    aiplatform.init(project="team-project", location="us-central1", experiment="exp-1")
    with aiplatform.start_run("run-1") as run:
        run.log_params({"lr": 0.1})
        run.log_metrics({"accuracy": 0.9})
        run.log_time_series_metrics({"loss": 0.5})
    found = aiplatform.ExperimentRun(run_name="run-1", experiment="exp-1")
    print("RUN", found.state.name, found.get_params(), found.get_metrics())
"""

UNSUPPORTED = """
    from google.api_core import exceptions
    from google.cloud import aiplatform

    aiplatform.init(project="team-project", location="us-central1")
    try:
        aiplatform.Featurestore.list()
    except exceptions.MethodNotImplemented as exc:
        print("NOT SUPPORTED:", exc.message)
"""


def vtp_exec(local_service, folder, *argv: str) -> subprocess.CompletedProcess[str]:
    """`vtp local exec -- ARGV` from the user's folder; fails with its output."""
    command = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", local_service.url]
    result = subprocess.run(
        [*command, "--", *argv], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result


def write(folder, **files: str) -> None:
    for name, text in files.items():
        (folder / name.replace("_py", ".py")).write_text(textwrap.dedent(text))


def test_from_local_script_runs_to_succeeded_and_its_replica_uses_cloud_storage(
    local_service, tmp_path
):
    write(tmp_path, task_py=REPLICA_TASK, submit_py=SUBMIT_JOB)
    result = vtp_exec(local_service, tmp_path, sys.executable, "submit.py")
    assert "STATE JOB_STATE_SUCCEEDED" in result.stdout
    assert (local_service.gcs_root / "team-data/outputs/result.txt").read_text() == (
        "lr=0.1 epochs=3"
    )
    staged = list((local_service.gcs_root / "team-data").glob("aiplatform-*.tar.gz"))
    assert staged, "the SDK staged the script's package through the storage API"


def test_pipeline_job_submit_creates_its_bucket_here_and_runs(local_service, tmp_path):
    write(tmp_path, pipeline_py=PIPELINE, submit_py=SUBMIT_PIPELINE)
    vtp_exec(local_service, tmp_path, sys.executable, "pipeline.py")
    result = vtp_exec(local_service, tmp_path, sys.executable, "submit.py")
    assert "STATE PIPELINE_STATE_SUCCEEDED" in result.stdout
    # The SDK made its artifacts bucket through the service, not storage.googleapis.com.
    assert "Error when trying to get or create a GCS bucket" not in result.stderr
    assert list(local_service.gcs_root.glob("team-project-vertex-pipelines-us-central1*"))


def test_an_experiment_run_and_a_project_lookup_over_grpc(local_service, tmp_path):
    write(tmp_path, experiment_py=EXPERIMENT)
    result = vtp_exec(local_service, tmp_path, sys.executable, "experiment.py")
    assert "PROJECT projects/100000000001 team-project" in result.stdout
    assert "RUN COMPLETE {'lr': 0.1} {'accuracy': 0.9}" in result.stdout


def test_an_unserved_api_says_it_is_not_supported(local_service, tmp_path):
    write(tmp_path, unsupported_py=UNSUPPORTED)
    result = vtp_exec(local_service, tmp_path, sys.executable, "unsupported.py")
    assert "NOT SUPPORTED:" in result.stdout
    assert "not supported by the local Vertex service" in result.stdout
    assert "customJobs" in result.stdout  # and it says what is
