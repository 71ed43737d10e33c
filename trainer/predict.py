"""Predictions from an exported model directory: request bodies in, JSON-ready predictions out.

What `python -m vtp.trainer.serve` answers with (see vtp.trainer.serve for the HTTP side):

    body         {"instances": [instance, ...], "parameters": {}}   (the model takes no parameters)
    instance     one input without its batch dimension: export.json `inputs[0].shape[1:]`
    prediction   {"label": "7", "index": 7, "probabilities": [p0, p1, ...]}   (a classifier)
                 151.2                                                     (a regression)

Per instance of a classifier, `index` is the most probable class, `label` its name (export.json
`labels`) and `probabilities` the softmax of the logits, in label order. A task that says what
its outputs mean (its own `predictions`, vtp.trainer.tasks; the diabetes task's is the predicted
progression in the target's own units) answers with that instead. The instances of one request go
through one forward pass of the model (rebuilt by its task, weights from model.pt loaded with
`weights_only=True`; model.pt2 is never unpickled here), under `torch.inference_mode`.

Where the directory is: a `gs://` URI is read where `storage` maps it (VTP_GCS_ROOT locally, /gcs
where Cloud Storage FUSE is mounted, as in training jobs). Vertex mounts no /gcs in prediction
containers, so there export.json, config.json and model.pt are downloaded first, through the Cloud
Storage JSON API with the service account's token from the metadata server.
"""

import json
import os
import shutil
import tempfile
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from vtp import storage
from vtp.trainer.export import CONFIG_FILE, FORMAT, METADATA_FILE, MODEL_FILE, load_model
from vtp.trainer.tasks import Predictions, load_task, task_predictions

_TOKEN_URL = (
    "http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token"
)
_MEDIA_URL = "https://storage.googleapis.com/storage/v1/b/{bucket}/o/{blob}?alt=media"


class ModelError(Exception):
    """The model directory cannot be served: missing, incomplete, or not a torch.export export."""


class BadRequest(ValueError):
    """A request the model cannot answer; its message is the 400 answer's error."""


class Predictor:
    """The exported program and its export.json: request bodies in, predictions out."""

    def __init__(
        self,
        program: torch.nn.Module,
        metadata: Mapping[str, Any],
        answers: Predictions | None = None,
    ) -> None:
        self.program = program
        self.answers = answers
        """The task's own `predictions`; None: a classifier's answer."""
        (spec,) = metadata["inputs"]
        self.input = f"{spec['name']!r} of shape {json.dumps(spec['shape'])}, {spec['dtype']}"
        self.instance_shape: list[int | None] = spec["shape"][1:]
        self.dtype: torch.dtype = getattr(torch, spec["dtype"])
        self.labels = [str(label) for label in metadata["labels"]]

    @classmethod
    def load(cls, directory: Path, allowed: Callable[[str], object] | None = None) -> "Predictor":
        """The model of an exported directory, loaded without running anything from it.

        export.json and config.json are JSON; the weights (model.pt) load with
        `weights_only=True` into the model the task builds (a task `allowed` accepts, when
        given). model.pt2 is never loaded here: `torch.export.load` unpickles, and the
        directory may come from anyone.
        """
        try:
            metadata = json.loads((directory / METADATA_FILE).read_text())
        except (OSError, ValueError) as exc:
            raise ModelError(f"{directory} is not an exported model directory: {exc}") from exc
        if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
            raise ModelError(f"{directory / METADATA_FILE}: format is not {FORMAT!r}")
        try:
            model, config = load_model(directory, allowed)
        except Exception as exc:  # missing files, a refused pickle, weights of another shape
            raise ModelError(f"cannot load the model in {directory}: {exc}") from exc
        # Imported already by load_model, once `allowed` had seen its name.
        return cls(model.eval(), metadata, task_predictions(load_task(config.task)))

    def predict(self, body: Any) -> list[Any]:
        """One prediction per instance of a request body (parsed JSON); BadRequest if malformed."""
        batch = self.batch(instances(body))
        with torch.inference_mode():
            outputs = self.program(batch).float()
        if self.answers is not None:
            return list(self.answers(outputs))
        probabilities = torch.softmax(outputs, dim=1)
        indices = probabilities.argmax(dim=1).tolist()
        return [
            {"label": self.label(index), "index": index, "probabilities": row}
            for index, row in zip(indices, probabilities.tolist(), strict=True)
        ]

    def batch(self, rows: list[Any]) -> torch.Tensor:
        """The instances as one input batch; BadRequest names the first one that does not fit."""
        try:
            batch = torch.tensor(rows, dtype=self.dtype)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            batch = None
        if batch is None or not _fits(list(batch.shape[1:]), self.instance_shape):
            raise BadRequest(self._misfit(rows))
        if batch.is_floating_point() and not torch.isfinite(batch).all():
            raise BadRequest("instances hold NaN or infinite values")
        return batch

    def label(self, index: int) -> str:
        """The name of class `index`."""
        return self.labels[index] if index < len(self.labels) else str(index)

    def _misfit(self, rows: list[Any]) -> str:
        expected = f"each instance must have shape {json.dumps(self.instance_shape)} (export.json"
        expected += f" input {self.input}, without the batch dimension)"
        for i, row in enumerate(rows):
            try:
                shape = list(torch.tensor(row, dtype=self.dtype).shape)
            except (TypeError, ValueError, RuntimeError, OverflowError) as exc:
                return f"instances[{i}] is not an array of numbers ({exc}); {expected}"
            if not _fits(shape, self.instance_shape):
                return f"instances[{i}] has shape {shape}; {expected}"
        return f"the instances do not stack into one batch; {expected}"


def _fits(shape: list[int], expected: list[int | None]) -> bool:
    """True when `shape` matches `expected`, where None (a dynamic dimension) matches any size."""
    if len(shape) != len(expected):
        return False
    return all(e in (None, n) for n, e in zip(shape, expected, strict=True))


def instances(body: Any) -> list[Any]:
    """The instances of a request body; BadRequest names what is wrong with the body."""
    if not isinstance(body, dict):
        raise BadRequest('the body must be a JSON object: {"instances": [...]}')
    unknown = sorted(set(body) - {"instances", "parameters"})
    if unknown:
        raise BadRequest(f"unknown fields {unknown}: the body has instances and parameters")
    rows = body.get("instances")
    if not isinstance(rows, list) or not rows:
        raise BadRequest("instances must be a non-empty array of inputs")
    if body.get("parameters"):
        raise BadRequest(f"parameters: this model takes none, got {body['parameters']!r}")
    return rows


def model_dir(uri: str) -> Path:
    """The local directory of the model at `uri`: where storage maps it, else a downloaded copy."""
    path = storage.local_path(uri)
    if path.is_dir():
        return path
    mapped = os.environ.get(storage.GCS_ROOT_ENV) or Path(storage.FUSE_ROOT).is_dir()
    if storage.is_gcs_uri(uri) and not mapped:  # Vertex prediction: no FUSE mount
        return download(uri, Path(tempfile.mkdtemp(prefix="model-")))
    raise ModelError(f"the model directory AIP_STORAGE_URI={uri} ({path}) does not exist")


def download(uri: str, into: Path) -> Path:
    """Copy what serving loads (export.json, config.json, model.pt) from `uri` (gs://) into
    `into`; return `into`."""
    bucket, prefix = storage.split_gcs_uri(uri)
    token = _access_token()
    for name in (METADATA_FILE, CONFIG_FILE, MODEL_FILE):
        _fetch(bucket, prefix, name, token, into)
    return into


def _fetch(bucket: str, prefix: str, name: str, token: str, into: Path) -> None:
    blob = f"{prefix.strip('/')}/{name}".lstrip("/")
    url = _MEDIA_URL.format(bucket=bucket, blob=urllib.parse.quote(blob, safe=""))
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    out = into / name
    try:
        with urllib.request.urlopen(request, timeout=600) as answer, out.open("wb") as file:
            shutil.copyfileobj(answer, file, 1 << 20)
    except OSError as exc:  # urllib's URLError and HTTPError included
        raise ModelError(f"cannot download gs://{bucket}/{blob}: {exc}") from exc


def _access_token() -> str:
    request = urllib.request.Request(_TOKEN_URL, headers={"Metadata-Flavor": "Google"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)["access_token"]
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(
            f"Cloud Storage is not mounted and the metadata server gave no token: {exc}"
        ) from exc
