"""A tabular dataset given to the SDK's `CustomTrainingJob`, as a user runs it under `vtp local
exec`: the replica sees AIP_DATA_FORMAT and the three data URIs, reads its splits through the
Cloud Storage client and writes what it read, which the test checks against the source."""

import csv
import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import cast

import pytest
import requests

from tests.fixtures import wait_until
from tests.vtp.engine.test_tree_walk import DeepTrees
from tests.vtp.engine.test_tree_walk import deep_trees as deep_trees  # fixture
from vtp.local.app import running
from vtp.local.base import buckets
from vtp.local.base.config import ServiceConfig

ROWS = 50
FOLDS = ["training"] * 30 + ["validation"] * 12 + ["test"] * 8

TASK = """
    \"\"\"Read the three splits Vertex exported, as a training script does; write what it saw.\"\"\"
    import fnmatch, json, os
    from google.cloud import storage

    client = storage.Client()
    seen = {"format": os.environ["AIP_DATA_FORMAT"]}
    for split in ("training", "validation", "test"):
        uri = os.environ[f"AIP_{split.upper()}_DATA_URI"]
        bucket, _, pattern = uri.removeprefix("gs://").partition("/")
        prefix = pattern.split("*", 1)[0]
        blobs = [b for b in client.list_blobs(bucket, prefix=prefix)
                 if fnmatch.fnmatch(b.name, pattern)]
        lines = [line for b in blobs for line in b.download_as_text().splitlines()[1:]]
        seen[split] = {"uri": uri, "files": len(blobs), "rows": lines}
    model_dir = os.environ["AIP_MODEL_DIR"].removeprefix("gs://")
    bucket, _, path = model_dir.partition("/")
    client.bucket(bucket).blob(path + "splits.json").upload_from_string(json.dumps(seen))
"""

PROGRAM = """
    import json
    from google.api_core import exceptions
    from google.cloud import aiplatform, storage

    aiplatform.init(project="team", location="us-central1", staging_bucket="gs://team-staging")
    bucket = storage.Client(project="team").create_bucket("team-staging")
    bucket.blob("rows.csv").upload_from_string(CSV)
    dataset = aiplatform.TabularDataset.create(
        display_name="rows", gcs_source=["gs://team-staging/rows.csv"]
    )
    results = {"dataset": dataset.name}
    job = aiplatform.CustomTrainingJob(
        display_name="reads-splits", script_path="task.py",
        container_uri="us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
    )
    job.run(dataset=dataset, base_output_dir="gs://team-staging/default", replica_count=1)
    job = aiplatform.CustomTrainingJob(
        display_name="reads-predefined", script_path="task.py",
        container_uri="us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
    )
    job.run(
        dataset=dataset, base_output_dir="gs://team-staging/predefined", replica_count=1,
        predefined_split_column_name="fold",
    )
    tables = aiplatform.TabularDataset.create(display_name="bq", bq_source="bq://team.d.rows")
    try:
        job = aiplatform.CustomTrainingJob(
            display_name="reads-bigquery", script_path="task.py",
            container_uri="us-docker.pkg.dev/vertex-ai/training/pytorch-cpu.2-4.py310:latest",
        )
        job.run(dataset=tables, base_output_dir="gs://team-staging/bq", replica_count=1)
    except exceptions.GoogleAPICallError as exc:
        results["bigquery"] = [exc.code.value, exc.message]
    print(json.dumps(results))
"""


def source_csv() -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["x", "label", "fold"])
    writer.writerows([i, f"class {i % 3}", fold] for i, fold in enumerate(FOLDS))
    return buffer.getvalue()


@pytest.mark.slow
def test_a_custom_training_job_reads_the_splits_of_a_tabular_dataset(local_service, tmp_path):
    folder = tmp_path / "team"
    folder.mkdir()
    (folder / "task.py").write_text(textwrap.dedent(TASK))
    source = source_csv()
    (folder / "program.py").write_text(f"CSV = {source!r}\n" + textwrap.dedent(PROGRAM))

    command = [sys.executable, "-m", "vtp", "local", "exec", "--endpoint", local_service.url]
    result = subprocess.run(
        [*command, "--", sys.executable, "program.py"],
        cwd=folder, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    results = json.loads(result.stdout.strip().splitlines()[-1])
    rows = source.splitlines()[1:]

    def seen(run: str) -> dict:
        path = local_service.gcs_root / "team-staging" / run / "model" / "splits.json"
        return json.loads(path.read_text())

    default = seen("default")
    assert default["format"] == "csv"
    folder_uri = f"gs://team-staging/default/dataset-{results['dataset']}-tables-"
    for split in ("training", "validation", "test"):
        assert default[split]["uri"].startswith(folder_uri)
        assert default[split]["uri"].endswith(f"/{split}-*.csv")
        assert default[split]["files"] == 1
    counts = [len(default[s]["rows"]) for s in ("training", "validation", "test")]
    assert counts == [40, 5, 5]  # the default 0.8/0.1/0.1 of 50 rows
    assert sorted(r for s in ("training", "validation", "test") for r in default[s]["rows"]) == (
        sorted(rows)
    )

    predefined = seen("predefined")
    for split in ("training", "validation", "test"):
        assert predefined[split]["rows"] == [r for r in rows if r.endswith(f",{split}")]

    code, message = results["bigquery"]
    assert 400 <= code < 500 and "BigQuery" in message and "bq://team.d.rows" in message


SCHEMAS = "gs://google-cloud-aiplatform/schema/"
CUSTOM_TASK = SCHEMAS + "trainingjob/definition/custom_task_1.0.0.yaml"


@pytest.mark.parametrize(
    ("kind", "source", "config", "words"),
    [
        ("tabular", "gs://b/rows.csv", {"filterSplit": {"trainingFilter": "-"}}, "filterSplit"),
        ("tabular", "gs://b/rows.csv", {"fractionSplit": {"trainingFraction": 1.5}}, "at most 1"),
        (
            "tabular",
            "gs://b/rows.csv",
            {"bigqueryDestination": {"outputUri": "bq://p"}},
            "BigQuery",
        ),
        ("tabular", "bq://p.d.t", {}, "BigQuery table bq://p.d.t"),
        ("image", "", {}, "holds image data items"),
        ("tabular", "gs://b/rows.csv", {"datasetId": "404"}, "datasets/404"),
    ],
)
def test_a_dataset_the_service_cannot_export_is_refused_at_create(
    local_service, kind, source, config, words
) -> None:
    session, base = local_service.session(), f"{local_service.url}/v1/{local_service.parent}"
    metadata = {}
    if source:
        key = "bigquerySource" if source.startswith("bq://") else "gcsSource"
        metadata = {"inputConfig": {key: {"uri": source if key == "bigquerySource" else [source]}}}
    dataset = {
        "displayName": "d",
        "metadataSchemaUri": f"{SCHEMAS}dataset/metadata/{kind}_1.0.0.yaml",
        "metadata": metadata,
    }
    created = session.post(f"{base}/datasets", json=dataset, timeout=30).json()
    dataset_id = created["response"]["name"].rsplit("/", 1)[1]
    data = {"datasetId": dataset_id, "gcsDestination": {"outputUriPrefix": "gs://b/out"}}
    data.update(config)
    if "bigqueryDestination" in config:
        del data["gcsDestination"]
    pipeline = {
        "displayName": "p",
        "trainingTaskDefinition": CUSTOM_TASK,
        "trainingTaskInputs": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": "1",
                    "containerSpec": {"imageUri": "python:3.11", "command": ["true"]},
                }
            ]
        },
        "inputDataConfig": data,
    }
    response = session.post(f"{base}/trainingPipelines", json=pipeline, timeout=30)
    assert 400 <= response.status_code < 500, response.text
    assert words in response.json()["error"]["message"]


def test_a_source_is_stored_as_vertex_types_it(local_service) -> None:
    session, base = local_service.session(), f"{local_service.url}/v1/{local_service.parent}"
    sources = {"bigquerySource": {"uri": ["bq://p.d.t"]}, "gcsSource": {"uri": "gs://b/r.csv"}}
    dataset = {
        "displayName": "d",
        "metadataSchemaUri": f"{SCHEMAS}dataset/metadata/time_series_1.0.0.yaml",
        "metadata": {"inputConfig": sources},
    }
    created = session.post(f"{base}/datasets", json=dataset, timeout=30).json()
    stored = created["response"]["metadata"]["inputConfig"]
    assert stored == {
        "bigquerySource": {"uri": "bq://p.d.t"},
        "gcsSource": {"uri": ["gs://b/r.csv"]},
    }
    dataset["metadata"]["inputConfig"] = {"bigquerySource": {"uri": ["bq://a.b.c", "bq://d.e.f"]}}
    refused = session.post(f"{base}/datasets", json=dataset, timeout=30)
    assert refused.status_code == 400 and "one table" in refused.json()["error"]["message"]


def trained_on(url: str, session: requests.Session, source: str, out: str) -> dict:
    """The training pipeline, once ended, of a replica that does nothing on a tabular dataset
    read from `source` (all rows to training), its splits written under `out`."""
    base = f"{url}/v1/projects/local/locations/us-central1"
    dataset = {
        "displayName": "source",
        "metadataSchemaUri": f"{SCHEMAS}dataset/metadata/tabular_1.0.0.yaml",
        "metadata": {"inputConfig": {"gcsSource": {"uri": [source]}}},
    }
    created = session.post(f"{base}/datasets", json=dataset, timeout=30).json()
    data = {
        "datasetId": created["response"]["name"].rsplit("/", 1)[1],
        "gcsDestination": {"outputUriPrefix": out},
        "fractionSplit": {"trainingFraction": 1.0},
    }
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": "python:3.11", "command": ["true"]},
    }
    pipeline = {
        "displayName": "trained",
        "trainingTaskDefinition": CUSTOM_TASK,
        "trainingTaskInputs": {"workerPoolSpecs": [pool]},
        "inputDataConfig": data,
    }
    response = session.post(f"{base}/trainingPipelines", json=pipeline, timeout=30)
    assert response.status_code == 200, response.text
    name = response.json()["name"]

    def ended() -> dict | None:
        got = session.get(f"{url}/v1/{name}", timeout=30).json()
        return got if got["state"] in ENDED else None

    return cast(dict, wait_until(ended, 60, "the training pipeline to end"))


ENDED = ("PIPELINE_STATE_SUCCEEDED", "PIPELINE_STATE_FAILED", "PIPELINE_STATE_CANCELLED")


def test_a_wildcard_source_beside_a_deep_tree_is_read_within_bounds(
    local_service, deep_trees: DeepTrees
) -> None:
    """Issue #49: a `**` source over a folder tree a replica left 1,200 levels deep failed the
    pipeline with RecursionError (`Path.glob`); the walk is bounded now, where no object name
    reaches."""
    folder = local_service.gcs_root / "deep-source"
    deep_trees.make(folder / "deep", 1_200, leaf="x.csv")  # its name is past 1,024 bytes
    (folder / "data" / "more").mkdir(parents=True)
    (folder / "data" / "x.csv").write_text("x,label\n1,a\n2,b\n")
    (folder / "data" / "more" / "x.csv").write_text("x,label\n3,c\n")
    (folder / "data" / "y.csv").write_text("x,label\n4,d\n")
    session = local_service.session()
    done = trained_on(
        local_service.url, session, "gs://deep-source/**/x.csv", "gs://deep-source/out"
    )
    assert done["state"] == "PIPELINE_STATE_SUCCEEDED", done.get("error")  # was INTERNAL
    (training,) = (folder / "out").glob("dataset-*-tables-*/training-00000-of-00001.csv")
    assert sorted(training.read_text().splitlines()) == ["1,a", "2,b", "3,c", "x,label"]


def test_a_wildcard_past_the_walk_limit_fails_the_pipeline_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(buckets, "MAX_WALKED", 10)  # the service runs in this process here
    config = ServiceConfig(tmp_path / "state", port=0)
    folder = config.storage_root / "wide"
    for index in range(11):
        (folder / "in" / str(index)).mkdir(parents=True)
    (folder / "in" / "x.csv").write_text("x,label\n1,a\n")
    with running(config) as served:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {served.token}"
        done = trained_on(served.url, session, "gs://wide/in/**/x.csv", "gs://wide/out")
    assert done["state"] == "PIPELINE_STATE_FAILED"
    assert done["error"]["code"] == 9, done["error"]  # FAILED_PRECONDITION: the request's fault
    assert (
        "matching gs://wide/in/**/x.csv would walk more than 10 files and folders"
        in (done["error"]["message"])
    )
