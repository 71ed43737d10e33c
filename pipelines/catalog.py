"""The pipelines this project ships, by the name `vtp compile`, `vtp run` and `vtp submit` use.

Each entry also says what a local run fills in: project and location are plain parameters
(Vertex-only placeholders do not resolve under kfp.local), and outputs go to a bucket under the
local Cloud Storage root.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

LOCAL_PROJECT = "local"
LOCAL_OUTPUT_ROOT = "gs://vtp-local/runs"


@dataclass(frozen=True)
class Entry:
    """A pipeline and the parameter values a local run starts from."""

    module: str
    function: str
    local_params: dict[str, Any] = field(default_factory=dict)

    def load(self) -> Callable[..., Any]:
        """The pipeline function (imported on demand: kfp loads only when needed)."""
        import importlib

        return getattr(importlib.import_module(self.module), self.function)


_LOCAL = {"project": LOCAL_PROJECT, "output_root": LOCAL_OUTPUT_ROOT, "poll_interval_seconds": 1.0}

PIPELINES: dict[str, Entry] = {
    "train": Entry("vtp.pipelines.train", "train_pipeline", _LOCAL),
    "tune": Entry("vtp.pipelines.tune", "tune_pipeline", _LOCAL),
    "export": Entry("vtp.pipelines.export", "export_pipeline", {"project": LOCAL_PROJECT}),
}


COMPONENTS: dict[str, Entry] = {
    name: Entry(f"vtp.components.{name}", name)
    for name in (
        "autopackage",
        "custom_job",
        "hyperparameter_tuning",
        "evaluate_checkpoints",
        "export_model",
        "upload_model",
        "deploy_model",
    )
}
"""Every component, compiled on its own to `compiled/components/<name>.yaml` (kfp's component
YAML: `kfp.components.load_component_from_file` loads it without importing this project)."""


def entry(name: str) -> Entry:
    """The catalog entry for `name`; ValueError listing the names otherwise."""
    if name not in PIPELINES:
        raise ValueError(f"unknown pipeline {name!r}; choose from {', '.join(PIPELINES)}")
    return PIPELINES[name]
