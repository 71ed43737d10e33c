"""`vtp run train --experiment NAME`, from a user's folder outside the repository, to the `vtp
local serve` there: the run joins the experiment as `PipelineJob.submit(experiment=...)` joins
one, `get_experiment_df`'s rows hold its parameters and metrics, and the lineage of the model it
registered leads back to the run's executions."""

import re
from collections.abc import Iterator

import pytest
from google.cloud import aiplatform
from google.oauth2.credentials import Credentials

from tests.fixtures import REPO, experiment_rows
from tests.vtp.cli.run_helpers import Served, serve, vtp

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("team")
    assert not folder.is_relative_to(REPO)
    with serve(folder, folder / ".vtp" / "run") as service:
        aiplatform.init(
            project="local",
            location="us-central1",
            api_endpoint=service.url,
            api_transport="rest",
            credentials=Credentials(service.token),
        )
        yield service
        aiplatform.init(api_endpoint=None, api_transport=None)


def test_train_run_joins_experiment_with_params_metrics_and_model_lineage(served: Served) -> None:
    folder = served.state_dir.parent.parent
    ran = vtp(
        folder,
        "run", "train", "--experiment", "digits-exp", "--param", "threshold=0.1",
        "--param", 'trainer_args=["--epochs=1"]',
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    joined = re.search(r"Experiment digits-exp: run (\S+)", ran.stderr)
    assert joined, ran.stderr[-3000:]

    [row] = experiment_rows("digits-exp")
    assert row["run_name"] == joined.group(1)
    assert row["run_type"] == "system.PipelineRun"
    assert row["state"] == "COMPLETE"
    assert row["param.threshold"] == 0.1
    assert row["param.trainer_args"] == ["--epochs=1"]
    assert 0.0 < row["metric.accuracy"] <= 1.0
    store = "projects/local/locations/us-central1/metadataStores/default"
    run_context = f"{store}/contexts/{row['run_name']}"

    [model] = aiplatform.Model.list()
    registered = [
        a
        for a in aiplatform.Artifact.list(filter='schema_title="google.VertexModel"')
        if a.metadata["resourceName"].partition("@")[0] == model.resource_name
    ]
    assert len(registered) == 1
    artifact = registered[0]
    graph = artifact.api_client.query_artifact_lineage_subgraph(artifact=artifact.resource_name)
    steps = {e.display_name for e in graph.executions}
    assert {"custom-job", "evaluate-checkpoints", "export-model", "upload-model"} <= steps
    in_run = aiplatform.Execution.list(filter=f'in_context("{run_context}")')
    assert {e.name for e in graph.executions} <= {e.resource_name for e in in_run}
