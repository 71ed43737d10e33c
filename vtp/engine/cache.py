"""Task results kept between runs, as Vertex Pipelines caches them: a task whose component
and inputs are those of an earlier successful execution is not run again, its outputs are
that execution's.

The key is KFP's (`cache_key`, `fingerprint`: what `kubeflow/pipelines` backend/src/v2/cacheutils
computes, checked against its own tests' fingerprints): every resolved input parameter value
(an upstream output used inside a constant is an undeclared `pipelinechannel--*` input, and in
the key), the input artifacts by resource name (new for each execution that makes one, so what
follows a task that ran again runs again, as on Vertex), the output specs, and the container's
image and command line; the engine adds the container's environment, which decides outputs
too, and scopes entries to the pipeline's name, as KFP's lookup does. It leaves out where
outputs go, so a second run of the same pipeline hits. An entry is a JSON file
`<cache dir>/<key>.json` holding the outputs and the key it was made with (so a miss can say
what changed since); an entry whose output files have gone (a deleted run) is a miss. Entries
outlive runs and services.

An entry decides what later runs take as outputs, so the folder must be the user's alone
(`vtp.private_files.private_dir`: a folder another user owns or could replace is refused, a
looser one narrowed to 0700), entries are written as new files in it and renamed into place, and
an entry that is not a regular file of the user's is never read.
"""

import decimal
import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vtp import private_files

CACHE_DIR_ENV = "VTP_PIPELINE_CACHE_DIR"
"""Overrides where entries live (default: the state dir's `pipelines/.cache`)."""


def cache_key(
    parameters: Mapping[str, Any],
    artifact_names: Mapping[str, Sequence[str]],
    output_artifacts: Mapping[str, Mapping[str, Any]],
    output_parameters: Mapping[str, str],
    cmd_args: Sequence[str],
    image: str,
    pvc_names: Sequence[str] = (),
) -> dict[str, Any]:
    """KFP's cache key of one execution (`CacheKey`, `kubeflow/pipelines`
    backend/src/v2/cacheutils `GenerateCacheKey`), as protojson writes it: the executor's input
    parameter values (every resolved input, `pipelinechannel--*` ones included) and input
    artifacts by name, its output artifacts' specs (name, type, metadata: no URI) and output
    parameters' types, and its container's image and command line (placeholders unresolved).
    Empty maps and lists are left out, as protojson leaves them."""
    document: dict[str, Any] = {
        "inputArtifactNames": {
            name: ({"artifactNames": list(names)} if names else {})
            for name, names in artifact_names.items()
        },
        "inputParameterValues": dict(parameters),
        "outputArtifactsSpec": {name: dict(spec) for name, spec in output_artifacts.items()},
        "outputParametersSpec": dict(output_parameters),
        "containerSpec": {"image": image, "cmdArgs": list(cmd_args), "pvcNames": list(pvc_names)},
    }
    document["containerSpec"] = {k: v for k, v in document["containerSpec"].items() if v}
    return {k: v for k, v in document.items() if v or k == "containerSpec"}


def fingerprint(document: Mapping[str, Any]) -> str:
    """The hex SHA-256 of a cache key as KFP's `GenerateFingerPrint` takes it: its JSON
    re-marshalled by Go's encoding/json (keys sorted, compact, Go's numbers and escapes)."""
    return hashlib.sha256(go_json(document).encode()).hexdigest()


def go_json(value: Any) -> str:
    """`value` as Go's `json.Marshal` writes the same document: object keys sorted, no spaces,
    `<`, `>`, `&`, U+2028 and U+2029 escaped, numbers as Go formats a float64 (`5`, not `5.0`;
    exponents only below 1e-6 or from 1e21 on)."""
    if isinstance(value, Mapping):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_go_string(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return _go_number(float(value))
    return _go_string(value if isinstance(value, str) else str(value))


def _go_string(text: str) -> str:
    encoded = json.dumps(text, ensure_ascii=False)
    for raw, escaped in _GO_ESCAPES:
        encoded = encoded.replace(raw, escaped)
    return encoded


_GO_ESCAPES = (
    ("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
    ("\u2028", "\\u2028"), ("\u2029", "\\u2029"),
)  # fmt: skip
"""What Go's encoder escapes beyond what `json.dumps(ensure_ascii=False)` does (both write
`\\b`, `\\f`, `\\n`, `\\r`, `\\t` and `\\u00XX` for other control characters)."""


def _go_number(number: float) -> str:
    """A float64 as Go's encoding/json writes it: the shortest digits that read back, in plain
    notation unless its magnitude is below 1e-6 or at least 1e21 ("e-07" as "e-7")."""
    if not math.isfinite(number):
        raise ValueError(f"{number} is not a JSON number")
    magnitude = abs(number)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(number).replace("e-0", "e-").replace("e+0", "e+")
        return text.replace(".0e", "e")
    text = format(decimal.Decimal(repr(number)), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


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

    def remember(self, task: str, document: dict[str, Any]) -> None:
        """Keep `document`, the key `task` (a pipeline's task, by name and path) last ran with."""
        folder = private_files.private_dir(self.folder / "tasks")
        private_files.write_private(folder / f"{_digest(task)}.json", json.dumps(document))

    def last(self, task: str) -> dict[str, Any] | None:
        """The key `task` last ran with (`remember`), or None when it never ran here."""
        path = self.folder / "tasks" / f"{_digest(task)}.json"
        try:
            return json.loads(private_files.read_private(path, limit=1 << 26))
        except (OSError, ValueError, private_files.UnsafePath):
            return None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
