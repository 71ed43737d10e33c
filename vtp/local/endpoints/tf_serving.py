"""Vertex's prebuilt TensorFlow prediction images, planned: a SavedModel served in TF Serving's
REST format.

    {us,europe,asia}-docker.pkg.dev/vertex-ai/prediction/tf2-{cpu,gpu}.X-Y:latest

Those images run TensorFlow Serving on the SavedModel at the downloaded artifactUri
(`saved_model.pb`, `variables/`, `assets/`): `predict` reaches TF Serving's REST `predict`, and
`rawPredict` hands it the body unchanged and returns its answer (`tf_serving_json.py`: the row
and columnar formats). Locally the service starts `tf_serving_server.py`, which loads the model
with TensorFlow itself, from the service's environment or a cached layer it installs once
(`vtp.local.runtime.tensorflow_layer`), and answers on Vertex's routes. This module decides,
before any process starts, whether it may (FAILED_PRECONDITION in one line naming the way
otherwise):

- artifactUri holds `saved_model.pb`, and every file below it is a regular file inside the
  storage root, with no link to a folder (`model_files.check_model_tree`);
- the operator allows model files that run code: a SavedModel's graph is a program, whose ops
  read and write files (ReadFile, WriteFile, the checkpoint ops) with the server's rights, so, as
  for joblib and pickle files and TorchServe archives, only when the service was started with
  VTP_SERVING_ALLOW_PICKLE=1.

What the server needs from the service's environment (it gets a container's) travels in
variables only the service sets: where the TensorFlow layer is cached
(`$XDG_CACHE_HOME/vtp/tensorflow`, per user, shared with `tensorflow_layer`'s other callers),
pip's index settings, and for a `-cpu` image no GPU (CUDA_VISIBLE_DEVICES empty, as a CPU
machine has none; the layer's `tensorflow-cpu` uses none for a `-gpu` image either).
"""

from collections.abc import Mapping

from vtp.local.base import errors
from vtp.local.runtime.packages import index_settings
from vtp.local.runtime.pip_cache import user_cache_path
from vtp.local.runtime.tensorflow_layer import CACHE_NAME

FRAMEWORK = "tf2"
SAVED_MODEL = "saved_model.pb"
"""The file a SavedModel folder holds (its graph and signatures), beside `variables/`."""
MODULE = "vtp.local.endpoints.tf_serving_server"
CACHE_ENV = "VTP_TENSORFLOW_CACHE"
"""The folder of cached TensorFlow layers (set by the service)."""


def plan_tf_serving(
    where: str, model_uri: str, allow_code: bool, gpu: bool, environ: Mapping[str, str]
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(argv, service-owned environment) of the server that serves the SavedModel whose
    `saved_model.pb` is `model_uri`, with no GPU unless `gpu` (a `-gpu` image);
    FAILED_PRECONDITION when the operator does not allow model files that run code. `environ`
    is the service's."""
    if not allow_code:
        raise errors.failed_precondition(
            f"{where}: {model_uri} is a TensorFlow SavedModel, and serving one runs its graph, "
            "whose ops may read and write files; the local service serves one only when its "
            "operator starts it with VTP_SERVING_ALLOW_PICKLE=1, as for pickle files."
        )
    env = {**index_settings(environ), CACHE_ENV: str(user_cache_path(environ, CACHE_NAME))}
    if not gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return ("python", "-m", MODULE), tuple(sorted(env.items()))
