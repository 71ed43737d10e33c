"""`vtp run --from-job`: a pipeline run, as the local service describes it, runs again in
another state directory with the same parameters (one overridden); inputs it lacks are named
in one line before anything runs. `vtp submit --local --from-job` submits it again to the
service it came from. The described run is made by the team's own code through the
aiplatform SDK, against the `local_vertex` service (vtp.testing)."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from google.cloud import aiplatform, storage

from tests.vtp.cli.run_helpers import vtp_run_unpointed

PIPELINE = """
from kfp import compiler, dsl


@dsl.component(base_image="python:3.11")
def make(count: int, data: str, output_root: str) -> str:
    print(f"made {count} from {data}")
    return f"{output_root}/{count}"


@dsl.pipeline(name="replayed")
def replayed(count: int, data: str, output_root: str):
    make(count=count, data=data, output_root=output_root)


if __name__ == "__main__":
    compiler.Compiler().compile(replayed, "replayed.yaml")
"""
DATA = "gs://team-data/train.csv"


def test_a_described_local_run_replays_with_an_override(local_vertex, tmp_path: Path) -> None:
    (tmp_path / "replayed.py").write_text(PIPELINE)
    subprocess.run([sys.executable, "replayed.py"], cwd=tmp_path, check=True)
    storage.Client().bucket("team-data").blob("train.csv").upload_from_string("1,2\n")
    run = aiplatform.PipelineJob(
        display_name="replayed",
        template_path=str(tmp_path / "replayed.yaml"),
        parameter_values={"count": 3, "data": DATA, "output_root": "gs://team-out/runs"},
    )
    run.run(sync=True)
    (tmp_path / "job.json").write_text(json.dumps(run.to_dict()))
    rest = requests.get(
        f"{local_vertex.url}/v1/{run.resource_name}",
        headers={"Authorization": f"Bearer {local_vertex.info.token}"},
    )
    (tmp_path / "rest.json").write_text(rest.text)

    refused = vtp_run_unpointed(tmp_path, "--from-job", "rest.json")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"data={DATA}" in refused.stderr and "output_root" not in refused.stderr

    copy = tmp_path / "replay" / "gcs" / "team-data" / "train.csv"
    copy.parent.mkdir(parents=True)
    shutil.copy(local_vertex.storage_root / "team-data" / "train.csv", copy)
    replayed = vtp_run_unpointed(tmp_path, "--from-job", "job.json", "--param", "count=5")
    assert replayed.returncode == 0, replayed.stdout[-3000:] + replayed.stderr[-3000:]
    assert f"made 5 from {DATA}" in replayed.stdout, replayed.stdout[-3000:]

    submitted = subprocess.run(
        [sys.executable, "-m", "vtp", "submit", "--local", "--from-job", "job.json",
         "--param", "count=4", "--wait"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    first, again = local_vertex.pipeline_runs()
    assert dict(again.runtime_config.parameter_values) == {
        **dict(first.runtime_config.parameter_values),
        "count": 4,
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("not json", "is not JSON"),
        ('{"pipelineSpec": {"root": {}}}', "pipelineSpec.pipelineInfo.name is missing"),
    ],
)
def test_a_file_that_describes_no_job_is_one_line(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "job.json").write_text(text)
    result = vtp_run_unpointed(tmp_path, "--from-job", "job.json")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert says in result.stderr and "--from-job" in result.stderr
    assert not (tmp_path / "replay").exists()  # nothing started
