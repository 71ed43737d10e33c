"""What the trainer publishes, all from the main process only (a disabled Reporter is silent):

- progress lines on stdout (`step 100/440 | epoch 5 | loss 0.1234 | lr 2.9e-03 | 1500 steps/s`);
- scalars for TensorBoard under `AIP_TENSORBOARD_LOG_DIR` (train/loss, train/lr,
  train/steps_per_second, eval/accuracy, eval/loss, or eval/<metric> of a task's own metrics);
- every evaluation's metric to Vertex hyperparameter tuning through `cloudml-hypertune`, with its
  global step, so intermediate measurements can drive early stopping;
- the final model, config and metrics (see vtp.trainer.export).
"""

import logging
from pathlib import Path
from typing import Any

from vtp.trainer.config import Config

log = logging.getLogger("trainer")


class Reporter:
    """Publishes progress, evaluations and the final model; does nothing when not enabled."""

    def __init__(self, tensorboard_dir: Path, hypertune_metric: str, enabled: bool) -> None:
        self.enabled = enabled
        self._metric = hypertune_metric
        self._writer: Any = None
        self._hypertune: Any = None
        if enabled:
            # Imported here, before training starts: TensorBoard takes a second to import.
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(str(tensorboard_dir))

    def train(self, step: int, total: int, epoch: int, scalars: dict[str, float]) -> None:
        """A progress line and training scalars (`loss`, `lr`, `steps_per_second`)."""
        if not self.enabled:
            return
        log.info(
            "step %d/%d | epoch %d | loss %.4f | lr %.2e | %.0f steps/s",
            step, total, epoch, scalars["loss"], scalars["lr"], scalars["steps_per_second"],
        )  # fmt: skip
        for name, value in scalars.items():
            self._writer.add_scalar(f"train/{name}", value, step)

    def evaluation(self, step: int, result: dict[str, Any]) -> None:
        """An evaluation line, its scalars, and the tuning metric for Vertex."""
        if not self.enabled:
            return
        scalars = {name: value for name, value in result.items() if isinstance(value, float)}
        shown = " | ".join(f"{name} {value:.4f}" for name, value in scalars.items())
        log.info("eval step %d | %s | %d examples", step, shown, result["examples"])
        for name, value in scalars.items():
            self._writer.add_scalar(f"eval/{name}", value, step)
        self._writer.flush()
        if self._hypertune is None:
            import hypertune  # creates the metrics file's directory, so only where it is used

            self._hypertune = hypertune.HyperTune()
        self._hypertune.report_hyperparameter_tuning_metric(
            hyperparameter_metric_tag=self._metric,
            metric_value=result[self._metric],
            global_step=step,
        )

    def final_model(
        self, model_dir: Path, model_state: dict[str, Any], config: Config, result: dict[str, Any]
    ) -> None:
        """Write the trained model, its config and its final evaluation to `model_dir`."""
        if not self.enabled:
            return
        from vtp.trainer import (
            export,  # torch.export: imported by the main process, at the end only
        )

        export.write_model_dir(model_dir, model_state, config, result)
        log.info("wrote model to %s", model_dir)

    def close(self) -> None:
        """Flush and close the TensorBoard writer."""
        if self._writer is not None:
            self._writer.close()
