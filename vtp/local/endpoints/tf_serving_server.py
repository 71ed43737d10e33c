"""`python -m vtp.local.endpoints.tf_serving_server`: a local stand-in for Google's prebuilt
TensorFlow prediction images, started by the service for a model that names one: the model's
SavedModel loaded with TensorFlow, answering TF Serving's REST `predict` behind Vertex's routes.

Over the same HTTP server as `vtp.trainer.serve` (its secret, Host, Origin and body checks,
AIP_HTTP_PORT, AIP_HEALTH_ROUTE, AIP_PREDICT_ROUTE, AIP_STORAGE_URI):

    GET  AIP_HEALTH_ROUTE   200 once the model is loaded, 503 before
    POST AIP_PREDICT_ROUTE  {"instances": [...], "signature_name": ...} -> {"predictions": [...]}
                            (`tf_serving_predict.py`)

Started on the service's interpreter, it first finds TensorFlow (`tensorflow_layer`: the
service's own, else the cached layer under VTP_TENSORFLOW_CACHE, installed once, the log saying
so) and runs itself again on that interpreter, before it reads its secret or listens (the deploy
waits for the health route meanwhile). Then the SavedModel is copied from storage, each file
through a checked descriptor, into a new private folder (`vtp.trainer.serve_files`: a link
leading out of the storage root is refused, naming it; so is any folder link) and loaded from
there. VTP_SERVING_ALLOW_PICKLE is checked again here: a SavedModel's graph runs as it loads.
Exit statuses as `vtp.trainer.serve`'s.
"""

import importlib
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from vtp import storage
from vtp.local.endpoints.prebuilt import ALLOW_PICKLE_ENV, pickle_allowed
from vtp.local.endpoints.tf_serving import CACHE_ENV, MODULE, SAVED_MODEL
from vtp.local.endpoints.tf_serving_predict import SignaturePredictor
from vtp.local.runtime.tensorflow_layer import InstallFailed, tensorflow_python
from vtp.trainer.serve import ServeConfig, Server, run
from vtp.trainer.serve_files import UnsafeModelFile, copy_checked, storage_root_for

NAME = "tf_serving_server"


class SavedModelServer(Server):
    """`vtp.trainer.serve`'s server with a SavedModel's signatures in place of an export."""

    def __init__(self, config: ServeConfig, secret: str, env: Mapping[str, str]) -> None:
        super().__init__(config, secret, frozenset())
        self.allow_code = pickle_allowed(env)

    def load(self) -> None:
        """Load the SavedModel (in a thread: the port answers 503 meanwhile), or shut down."""
        uri = self.config.storage_uri.rstrip("/")
        try:
            if not self.allow_code:
                raise ValueError(
                    f"a SavedModel's graph runs as it loads; the service's operator allows that "
                    f"with {ALLOW_PICKLE_ENV}=1"
                )
            self.predictor = self.load_saved_model(uri)
        except (UnsafeModelFile, ValueError) as exc:
            self.failure = f"cannot serve {uri}: {exc}"
        except Exception as exc:  # TensorFlow's own word on a model it cannot load
            self.failure = f"cannot load the SavedModel at {uri}: {exc}"
        if self.failure:
            self.shutdown()
            return
        config = self.config
        print(
            f"{NAME}: serving {uri} with TensorFlow on {config.host}:{config.port} "
            f"(GET {config.health_route}, POST {config.predict_route})",
            flush=True,
        )

    def load_saved_model(self, uri: str) -> SignaturePredictor:
        """The SavedModel at `uri`, loaded from a checked private copy of all its files."""
        tf = importlib.import_module("tensorflow")
        directory = storage.local_path(uri)
        folder = Path(tempfile.mkdtemp(prefix="vtp-savedmodel-"))  # mode 0700
        try:
            copy_tree(storage_root_for(uri, directory), directory, folder, uri)
            if not (folder / SAVED_MODEL).is_file():
                raise ValueError(f"{uri} holds no {SAVED_MODEL}")
            return SignaturePredictor(tf, tf.saved_model.load(str(folder)))
        finally:  # loaded: the variables are in memory
            shutil.rmtree(folder, ignore_errors=True)


def copy_tree(root: Path, directory: Path, target: Path, uri: str) -> None:
    """Every file below `directory` copied to `target` through checked descriptors; a link to a
    folder is refused (UnsafeModelFile naming it), a file's link must stay inside `root`."""
    for top, folders, files in os.walk(directory):
        relative = Path(top).relative_to(directory)
        for name in folders:
            if (Path(top) / name).is_symlink():
                raise UnsafeModelFile(f"{uri}/{relative / name} is a link to a folder")
            (target / relative / name).mkdir(mode=0o700)
        for name in files:
            what = f"{uri}/{relative / name}"
            copy_checked(root, Path(top) / name, target / relative / name, what)


def main() -> int:
    """Run on an interpreter with TensorFlow, then serve until stopped."""
    if importlib.util.find_spec("tensorflow") is None:
        try:
            python = tensorflow_python(Path(os.environ.get(CACHE_ENV, "")), os.environ)
        except InstallFailed as exc:
            print(f"{NAME}: error: {exc}", file=sys.stderr)
            return 1
        os.execv(python, [str(python), "-m", MODULE])
    return run(NAME, lambda config, secret: SavedModelServer(config, secret, os.environ))


if __name__ == "__main__":
    sys.exit(main())
