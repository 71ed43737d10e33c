"""Compiled pipeline files as kfp writes them, and the workspace their platform spec asks for.

kfp's compiler writes one YAML document, the PipelineSpec, or two: the PipelineSpec and then
its PlatformSpec, when the pipeline has a `dsl.PipelineConfig` (a workspace) or Kubernetes
settings. A workspace is a folder the run's tasks share (`dsl.WORKSPACE_PATH_PLACEHOLDER`);
its size is the platform spec's

    platforms: {kubernetes: {pipelineConfig: {workspace: {size: 1Gi, kubernetes: {...}}}}}

a Kubernetes quantity (`1Gi`, `500Mi`, `10G`). Locally the workspace is a folder of the run's
own in the service's state directory (`vtp.engine.worker.WORKSPACE`), so a run is refused
before it starts when that disk has less free space than the size asks for. Every reader of
a compiled file here (`vtp run x.yaml`, `vtp submit`, `vtp schedule`) reads it with `documents`.
"""

import json
import re
import shutil
import tempfile
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

_UNITS = {
    "": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}  # fmt: skip
"""Kubernetes quantity suffixes (decimal and binary) and what each multiplies by."""
_QUANTITY = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<unit>[kMGTPE]i?|)")


def documents(text: str, where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The PipelineSpec and the PlatformSpec (empty when the file has none) of a compiled
    file's text; ValueError naming `where` when it holds other than one or two mappings."""
    try:
        found = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise ValueError(f"{where} is not YAML or JSON: {exc}") from None
    found = [document for document in found if document is not None]
    if not 1 <= len(found) <= 2 or not all(isinstance(d, dict) for d in found):
        raise ValueError(
            f"{where} holds {len(found)} document(s); a compiled pipeline is one mapping (the "
            "pipeline) or two (the pipeline, then its platform spec)"
        )
    return found[0], found[1] if len(found) == 2 else {}


def workspace_size(platform: dict[str, Any]) -> int | None:
    """Bytes the platform spec's workspace asks for, or None when it asks for none;
    ValueError when its size is not a Kubernetes quantity."""
    kubernetes = (platform.get("platforms") or {}).get("kubernetes") or {}
    workspace = (kubernetes.get("pipelineConfig") or {}).get("workspace")
    if not workspace:
        return None
    size = str(workspace.get("size", "")).strip()
    match = _QUANTITY.fullmatch(size)
    if not match:
        raise ValueError(
            f"the platform spec's workspace size {size!r} is not a quantity such as 1Gi or 500Mi"
        )
    try:
        return int(Decimal(match["number"]) * _UNITS[match["unit"]])
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimal numbers
        raise ValueError(f"the platform spec's workspace size {size!r} is not a number") from None


def check_workspace(platform: dict[str, Any], folder: Path) -> None:
    """ValueError when the workspace the platform spec asks for does not fit the free space of
    the disk that holds `folder` (the state directory, or the nearest folder of it that exists)."""
    size = workspace_size(platform)
    if size is None:
        return
    existing = Path(folder).resolve()
    while not existing.exists():
        existing = existing.parent
    free = shutil.disk_usage(existing).free
    if size > free:
        raise ValueError(
            f"the pipeline's workspace asks for {size / 2**30:.1f} GiB (its platform spec) but "
            f"the disk of {existing} has {free / 2**30:.1f} GiB free"
        )


def pipeline_only(path: Path, pipeline: dict[str, Any]) -> Path:
    """`path` itself when it holds the pipeline alone, else a copy of its pipeline document (as
    JSON, in a temporary folder): what the aiplatform SDK's `PipelineJob(template_path=...)`,
    which reads one document, can load. Vertex runs no KFP platform spec."""
    if len(list(yaml.safe_load_all(path.read_text()))) == 1:
        return path
    copy = Path(tempfile.mkdtemp(prefix="vtp-pipeline-")) / f"{path.stem}.json"
    copy.write_text(json.dumps(pipeline))
    return copy
