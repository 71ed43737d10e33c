"""`python -m vtp.local.endpoints.tf_serving_server`: a local stand-in for Google's prebuilt
TensorFlow prediction images, started by the service for a model that names one: the model's
SavedModel loaded with TensorFlow, answering TF Serving's REST `predict` behind Vertex's routes.

Over the same HTTP server as `vtp.trainer.serve` (its secret, Host, Origin and body checks,
AIP_HTTP_PORT, AIP_HEALTH_ROUTE, AIP_PREDICT_ROUTE, AIP_STORAGE_URI, loopback only):

    GET  AIP_HEALTH_ROUTE   200 once the SavedModel is loaded, 503 before
    POST AIP_PREDICT_ROUTE  TF Serving's `:predict` body -> its answer (`tf_serving_json.py`):
                            {"instances": [...]} -> {"predictions": [...]},
                            {"inputs": ...} -> {"outputs": ...}, `signature_name` chosen

`predict` sends `{"instances": ..., "parameters": ...}` here and takes `predictions` from the
answer; `rawPredict` sends the caller's body as it is and returns this answer as it is, as
Vertex's image hands it to TF Serving. A body TF Serving would refuse is a 400 whose message
names the field; an error TensorFlow raises on the inputs (InvalidArgumentError) is a 400 with its
first line.

Started on the service's interpreter, it first finds TensorFlow (`tensorflow_layer`: the
service's own, else the cached layer under VTP_TENSORFLOW_CACHE, installed now, once, the log
saying so) and runs itself again on that interpreter (`os.execv`: the same process, which the
service's shim watches), before it reads its secret or listens; the deploy waits for the health
route meanwhile. Then every file of the SavedModel's folder is copied from storage through a
checked descriptor into a new private folder (`vtp.trainer.serve_files`: a link leading out of
the storage root is refused, naming it, and so is a link to a folder) and loaded from there with
`tf.saved_model.load`; the copy is removed when the server stops (SIGTERM: an undeploy, the
service's stop).
VTP_SERVING_ALLOW_PICKLE is checked again here: a SavedModel's graph runs as it loads. Exit
statuses as `vtp.trainer.serve`'s.
"""

import importlib
import importlib.util
import os
import signal
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from vtp import storage
from vtp.engine import tree_walk
from vtp.local.endpoints import tf_serving_json
from vtp.local.endpoints.model_files import MAX_TREE_FILES
from vtp.local.endpoints.prebuilt import ALLOW_PICKLE_ENV, pickle_allowed
from vtp.local.endpoints.tf_serving import CACHE_ENV, MODULE, SAVED_MODEL
from vtp.local.runtime.tensorflow_layer import InstallFailed, tensorflow_python
from vtp.trainer.predict import BadRequest
from vtp.trainer.serve import ServeConfig, Server, run
from vtp.trainer.serve_files import UnsafeModelFile, copy_checked, storage_root_for

NAME = "tf_serving_server"
AGAIN_ENV = "VTP_TF_SERVING_ON_TENSORFLOW"
"""Set when the server runs itself again on TensorFlow's interpreter (it then must import it)."""


class SavedModel:
    """A loaded SavedModel's signatures, answering TF Serving's predict bodies."""

    def __init__(self, tf: Any, loaded: Any) -> None:
        self.tf = tf
        self.loaded = loaded  # the signatures' variables live as long as it does
        self.functions = dict(loaded.signatures)
        self.specs = {name: input_specs(fn) for name, fn in self.functions.items()}

    def respond(self, body: Any) -> dict[str, Any]:
        """TF Serving's answer to the predict request `body`; BadRequest naming what is wrong."""
        try:
            request = tf_serving_json.parse_request(body, self.specs)
        except tf_serving_json.RequestError as exc:
            raise BadRequest(str(exc)) from None
        function = self.functions[request.signature]
        specs = self.specs[request.signature]
        tf = self.tf
        try:
            tensors = {
                key: tf.constant(value, dtype=tf.as_dtype(specs[key].dtype))
                for key, value in request.inputs.items()
            }
            outputs = function(**tensors)
        except (tf.errors.InvalidArgumentError, TypeError, ValueError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            raise BadRequest(f"{request.signature}: {message.strip().splitlines()[0]}") from None
        if not isinstance(outputs, Mapping):  # a signature returns a dict of named tensors
            outputs = {"output_0": outputs}
        arrays = {key: value.numpy() for key, value in outputs.items()}
        try:
            return tf_serving_json.make_response(arrays, request.row)
        except tf_serving_json.RequestError as exc:
            raise BadRequest(str(exc)) from None

    def predict(self, body: Any) -> list[Any]:
        """The predictions of a row-format body (`vtp.trainer.serve`'s predictor protocol)."""
        answer = self.respond(body)
        if "predictions" not in answer:
            raise BadRequest("instances: this route answers the row format ('instances')")
        return answer["predictions"]


def input_specs(function: Any) -> dict[str, tf_serving_json.TensorSpec]:
    """The inputs of a signature's concrete function, by name."""
    _, named = function.structured_input_signature
    return {
        key: tf_serving_json.TensorSpec(
            spec.dtype.name, None if spec.shape.rank is None else tuple(spec.shape.as_list())
        )
        for key, spec in named.items()
    }


class SavedModelServer(Server):
    """`vtp.trainer.serve`'s server with a SavedModel's signatures in place of an export."""

    allow_nan = True  # TF Serving writes NaN and Infinity as JSON's extension tokens

    def __init__(self, config: ServeConfig, secret: str, env: Mapping[str, str]) -> None:
        super().__init__(config, secret, frozenset())
        self.allow_code = pickle_allowed(env)
        self.model: SavedModel | None = None
        self.copy = Path(tempfile.mkdtemp(prefix="vtp-savedmodel-"))  # mode 0700

    def load(self) -> None:
        """Load the SavedModel (in a thread: the port answers 503 meanwhile), or shut down."""
        uri = self.config.storage_uri.rstrip("/")
        try:
            if not self.allow_code:
                raise ValueError(
                    f"a SavedModel's graph runs as it loads; the service's operator allows that "
                    f"with {ALLOW_PICKLE_ENV}=1"
                )
            self.model = self.load_saved_model(uri)
        except (UnsafeModelFile, ValueError) as exc:
            self.failure = f"cannot serve {uri}: {exc}"
        except Exception as exc:  # TensorFlow's own word on a model it cannot load
            self.failure = f"cannot load the SavedModel at {uri}: {type(exc).__name__}: {exc}"
        if self.failure:
            self.shutdown()
            return
        self.predictor = self.model
        config = self.config
        signatures = ", ".join(sorted(self.model.functions)) if self.model else ""
        print(
            f"{NAME}: serving {uri} (signatures: {signatures or 'none'}; its private copy: "
            f"{self.copy}) with TensorFlow on {config.host}:{config.port} "
            f"(GET {config.health_route}, POST {config.predict_route})",
            flush=True,
        )

    def respond(self, body: Any) -> dict[str, Any]:
        """TF Serving's answer, `predictions` or `outputs`, as it is."""
        if self.model is None:
            raise RuntimeError("the model is not loaded")
        return self.model.respond(body)

    def load_saved_model(self, uri: str) -> SavedModel:
        """The SavedModel at `uri`, loaded from a checked private copy of all its files (kept
        until the server stops: a graph may read its assets when it runs)."""
        tf = importlib.import_module("tensorflow")
        directory = storage.local_path(uri)
        copy_tree(storage_root_for(uri, directory), directory, self.copy, uri)
        if not (self.copy / SAVED_MODEL).is_file():
            raise ValueError(f"{uri} holds no {SAVED_MODEL}")
        return SavedModel(tf, tf.saved_model.load(str(self.copy)))

    def server_close(self) -> None:
        """Close the port, then remove the SavedModel's private copy."""
        super().server_close()
        tree_walk.remove_tree(self.copy, ignore_errors=True)


def copy_tree(root: Path, directory: Path, target: Path, uri: str) -> None:
    """Every file below `directory` copied to `target` through checked descriptors
    (UnsafeModelFile naming it otherwise: a link leading out of `root`, not a regular file); a
    link to a folder is refused, and so are more than MAX_TREE_FILES files."""
    count = 0
    for top, folders, files in os.walk(directory):
        relative = Path(top).relative_to(directory)
        for name in folders:
            if (Path(top) / name).is_symlink():
                raise UnsafeModelFile(f"{uri}/{(relative / name).as_posix()} is a link to a folder")
            (target / relative / name).mkdir(mode=0o700)
        for name in files:
            count += 1
            if count > MAX_TREE_FILES:
                raise UnsafeModelFile(f"{uri} holds more than {MAX_TREE_FILES} files")
            what = f"{uri}/{(relative / name).as_posix()}"
            copy_checked(root, Path(top) / name, target / relative / name, what)


def on_tensorflow(env: Mapping[str, str]) -> str:
    """An interpreter that imports TensorFlow, other than this one, to run this server on; ""
    when this one does. InstallFailed when there is none."""
    if importlib.util.find_spec("tensorflow") is not None:
        return ""
    if env.get(AGAIN_ENV):
        raise InstallFailed(f"{sys.executable} was to import tensorflow, and does not")
    cache = env.get(CACHE_ENV, "")
    if not cache:
        raise InstallFailed(f"{CACHE_ENV} must be set (the service sets it)")
    python = tensorflow_python(Path(cache), env)
    print(f"{NAME}: TensorFlow from {python}", flush=True)
    return str(python)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # `run` returns 130; leaving its `with server` removes the copy


def main() -> int:
    """Run on an interpreter with TensorFlow, then serve until stopped."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # TensorFlow's start-up notes aside
    try:
        python = on_tensorflow(os.environ)
    except InstallFailed as exc:
        print(f"{NAME}: error: {exc}", file=sys.stderr, flush=True)
        return 1
    if python:
        sys.stdout.flush()
        os.environ[AGAIN_ENV] = "1"
        os.execv(python, [python, "-m", MODULE])
    signal.signal(signal.SIGTERM, _interrupt)
    return run(NAME, lambda config, secret: SavedModelServer(config, secret, os.environ))


if __name__ == "__main__":
    sys.exit(main())
