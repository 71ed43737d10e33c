"""The shipped export pipeline (`compiled/export.yaml`) submitted with `vtp submit --local`."""

from pathlib import Path

import pytest
import torch

from tests.fixtures import LocalService, train_digits
from vtp.cli import main
from vtp.trainer.export import load_model
from vtp.trainer.tasks import load_task


@pytest.mark.slow
def test_export_pipeline_runs_on_the_local_service(
    local_service: LocalService, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    run = local_service.gcs_root / "vtp-test" / "export-run"
    train_digits(run, max_steps=40, checkpoint_interval=20)
    monkeypatch.setenv("VTP_LOCAL_ENDPOINT", local_service.url)
    argv = ["export", "--local", "--param=checkpoints_uri=gs://vtp-test/export-run/checkpoints"]
    assert main(["submit", *argv, "--pipeline-root=gs://vtp-test/export-root", "--wait"]) == 0
    assert "PIPELINE_STATE_SUCCEEDED" in capsys.readouterr().err
    (exported,) = (local_service.gcs_root / "vtp-test" / "export-root").rglob("export-model/model")
    model, config = load_model(Path(exported))
    inputs, targets = load_task(config.task).build_datasets(config)[1].tensors
    with torch.no_grad():
        accuracy = (model.eval()(inputs).argmax(dim=1) == targets).float().mean().item()
    assert accuracy > 0.5  # a trained digits model, reloaded from what the pipeline exported
