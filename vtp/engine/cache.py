"""Task results kept between runs, as Vertex Pipelines caches them: a task whose component
and inputs are those of an earlier successful execution is not run again, its outputs are
that execution's.

The key covers what decides the result: the component's interface, the executor (image,
command, arguments, environment, importer), and the task's input parameter values and input
artifacts (resource name, URI and metadata: the name is new for each execution that makes an
artifact, so what follows a task that ran again runs again, as on Vertex). It leaves out
where outputs go, so a second run of the same pipeline hits. An entry is a JSON file
`<cache dir>/<key>.json` holding the outputs; an entry whose output files have gone (a
deleted run) is a miss. Entries outlive runs and services.

An entry decides what later runs take as outputs, so the folder must be the user's alone
(`vtp.private_files.private_dir`: a folder another user owns or could replace is refused, a
looser one narrowed to 0700), entries are written as new files in it and renamed into place, and
an entry that is not a regular file of the user's is never read.
"""

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.protobuf import json_format

from vtp import private_files

if TYPE_CHECKING:  # for the hints only: the local service imports this module (CACHE_DIR_ENV),
    # and importing kfp's package brings its client and Kubernetes's, seconds at every start
    from kfp.pipeline_spec import pipeline_spec_pb2

CACHE_DIR_ENV = "VTP_PIPELINE_CACHE_DIR"
"""Overrides where entries live (default: the state dir's `pipelines/.cache`)."""


def key(
    component: "pipeline_spec_pb2.ComponentSpec",
    executor: "pipeline_spec_pb2.PipelineDeploymentConfig.ExecutorSpec",
    parameters: dict[str, Any],
    artifacts: dict[str, list[dict[str, Any]]],
) -> str:
    """The cache key of one execution."""
    interface = json_format.MessageToDict(component)
    interface.pop("executorLabel", None)  # the label is a name, the executor is the content
    document = {
        "component": interface,
        "executor": json_format.MessageToDict(executor),
        "parameters": parameters,
        "artifacts": {
            name: [
                {"name": a.get("name", ""), "uri": a["uri"], "metadata": a.get("metadata", {})}
                for a in items
            ]
            for name, items in sorted(artifacts.items())
        },
    }
    text = json.dumps(document, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Cache:
    """The entries under one folder."""

    def __init__(self, folder: Path) -> None:
        """UnsafePath when `folder` is not, or cannot be made, the user's alone."""
        self.folder = private_files.private_dir(folder)

    def get(self, cache_key: str) -> dict[str, Any] | None:
        """The entry for `cache_key` whose output artifacts all still exist, else None."""
        path = self.folder / f"{cache_key}.json"
        try:
            entry = json.loads(private_files.read_private(path, limit=1 << 26))
        except (OSError, ValueError, private_files.UnsafePath):
            return None
        for items in entry.get("artifacts", {}).values():
            for artifact in items:
                uri = artifact.get("uri", "")
                if uri.startswith("/") and not os.path.exists(uri):
                    return None
        return entry

    def put(self, cache_key: str, entry: dict[str, Any]) -> None:
        """Store `entry` (written whole or not at all)."""
        private_files.write_private(self.folder / f"{cache_key}.json", json.dumps(entry))
