"""Vertex's prebuilt prediction images, recognised and planned (pure, apart from reading a folder).

A model whose `containerSpec.imageUri` is one of Google's prebuilt prediction images and that
names no command (what `Model.upload_xgboost_model_file` and `upload_scikit_learn_model_file`
create, and `Model.upload` with a PyTorch or TensorFlow prediction image) is served by a local
stand-in that does what those images document: load the model file found under AIP_STORAGE_URI,
answer `{"instances": [...]}` with `{"predictions": [...]}` (the TensorFlow images: TF Serving's
REST formats, `inputs` and `signature_name` too). The images, as the SDK names them:

    {us,europe,asia}-docker.pkg.dev/vertex-ai[-restricted]/prediction/{framework}-{cpu,gpu}.X-Y:TAG

The model files each image loads (docs: "exporting model artifacts"), and what serves them:

    xgboost   model.bst (the Booster's format: data), model.joblib, model.pkl  prebuilt_server.py
    sklearn   model.joblib, model.pkl                                         prebuilt_server.py
    pytorch   model.mar (a TorchServe archive)                   TorchServe (torchserve.py)
    tf2       saved_model.pb, with variables/ (a SavedModel folder)  TensorFlow (tf_serving.py)

Safe by default: joblib and pickle files run code when loaded, and so do a TorchServe archive
(its handler) and a SavedModel (its graph's ops read and write files), so they are refused
unless the operator starts the service with VTP_SERVING_ALLOW_PICKLE=1; model.bst is data and
always loads. The file must be a regular file inside the storage root: one that is a link
leading out of it is refused, naming it (`model_files.py`; the server loads a checked copy); for
a SavedModel, which loads whole, so must every file below artifactUri, and no folder there may be
a link.
Other prebuilt images are refused, naming the ways that work here. Every refusal comes before a
process starts (FAILED_PRECONDITION, 400).
"""

import importlib.util
import os
import re
from collections.abc import Mapping
from pathlib import Path

from vtp.local.base import errors
from vtp.local.endpoints import tf_serving, torchserve
from vtp.local.endpoints.model_files import check_model_tree, model_file_exists
from vtp.storage import path_under

PREBUILT_IMAGE = re.compile(
    r"(?:[a-z0-9-]+-docker\.pkg\.dev/vertex-ai(?:-restricted)?|gcr\.io/cloud-aiplatform)"
    r"/prediction/(?P<framework>[a-z0-9]+)-(?P<accelerator>cpu|gpu)\.(?P<version>[0-9-]+)"
    r"(?::[\w.-]+)?"
)
MODEL_FILES = {
    "xgboost": ("model.bst", "model.joblib", "model.pkl"),
    "sklearn": ("model.joblib", "model.pkl"),
    torchserve.FRAMEWORK: (torchserve.ARCHIVE,),
    tf_serving.FRAMEWORK: (tf_serving.SAVED_MODEL,),
}
"""The files each served image looks for, in the order it prefers them."""
HINTS = {
    torchserve.FRAMEWORK: " Make it with `torch-model-archiver --model-name model ...`.",
    tf_serving.FRAMEWORK: " Make it with `tf.saved_model.save(model, folder)`.",
}
"""How to make the model file an image wants, where that is worth saying."""
LIBRARIES = {"xgboost": "xgboost", "sklearn": "sklearn"}
CODE_FORMATS = (".joblib", ".pkl")
"""Formats whose loading runs code from the file (pickle); a TorchServe archive's handler is code
too (`torchserve.plan_torchserve` refuses it likewise)."""
ALLOW_PICKLE_ENV = "VTP_SERVING_ALLOW_PICKLE"
"""The operator's setting (the service's environment, "1") that lets model files that run code
load (pickle-based ones, TorchServe archives); the service passes it on to the server, which
checks it again."""
PREBUILT_MODULE = "vtp.local.endpoints.prebuilt_server"
FRAMEWORK_ENV = "VTP_PREBUILT_FRAMEWORK"
"""Which image the server stands in for (set by the service)."""
MODEL_FILE_ENV = "VTP_PREBUILT_MODEL_FILE"
"""The model file's name under AIP_STORAGE_URI, chosen by the service."""


def prebuilt_framework(image_uri: str) -> str:
    """The framework of a prebuilt prediction image (`xgboost`, `sklearn`, `tf2`, ...), or ""."""
    match = PREBUILT_IMAGE.fullmatch(image_uri)
    return match["framework"] if match else ""


def prebuilt_accelerator(image_uri: str) -> str:
    """`cpu` or `gpu` for a prebuilt prediction image, or ""."""
    match = PREBUILT_IMAGE.fullmatch(image_uri)
    return match["accelerator"] if match else ""


def pickle_allowed(environ: Mapping[str, str]) -> bool:
    """True when the operator set VTP_SERVING_ALLOW_PICKLE=1 in the service's environment."""
    return environ.get(ALLOW_PICKLE_ENV, "").strip() == "1"


def plan_prebuilt(
    where: str,
    image_uri: str,
    artifact_uri: str,
    storage_root: Path,
    allow_pickle: bool,
    environ: Mapping[str, str] | None = None,
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(argv, service-owned environment) of the server standing in for `image_uri`;
    FAILED_PRECONDITION naming the way when this machine cannot serve the model. `environ`: the
    service's (this process's when None), where the PyTorch image finds Java."""
    framework = prebuilt_framework(image_uri)
    if framework not in MODEL_FILES:
        raise errors.failed_precondition(
            f"{where}: the prebuilt image {image_uri!r} is not served locally; the local "
            f"service stands in for the prebuilt {', '.join(sorted(MODEL_FILES))} images "
            "only. Serve the model with a custom container (containerSpec.command) or with "
            "this project's serving image (`python -m vtp.trainer.serve`)."
        )
    model_file = _model_file(where, framework, artifact_uri, storage_root)
    model_uri = f"{artifact_uri.rstrip('/')}/{model_file}"
    if framework == torchserve.FRAMEWORK:
        gpu = prebuilt_accelerator(image_uri) == "gpu"
        service = os.environ if environ is None else environ
        argv, env = torchserve.plan_torchserve(where, model_uri, allow_pickle, gpu, service)
        return argv, (*env, (ALLOW_PICKLE_ENV, "1"))  # allowed, or refused above
    if framework == tf_serving.FRAMEWORK:
        gpu = prebuilt_accelerator(image_uri) == "gpu"
        service = os.environ if environ is None else environ
        argv, env = tf_serving.plan_tf_serving(where, model_uri, allow_pickle, gpu, service)
        check_model_tree(storage_root, artifact_uri, where)  # the server loads all of it
        return argv, (*env, (ALLOW_PICKLE_ENV, "1"))  # allowed, or refused above
    return _plan_library(where, framework, model_uri, allow_pickle)


def _plan_library(
    where: str, framework: str, model_uri: str, allow_pickle: bool
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """`prebuilt_server.py`'s plan for the XGBoost or scikit-learn model file `model_uri`."""
    model_file = model_uri.rsplit("/", 1)[1]
    if model_file.endswith(CODE_FORMATS) and not allow_pickle:
        raise errors.failed_precondition(
            f"{where}: {model_uri} is a pickle-based file, and loading one runs code from it; "
            "the local service refuses it unless its operator "
            f"starts it with {ALLOW_PICKLE_ENV}=1. Export XGBoost models as model.bst "
            "(Booster.save_model), which is data."
        )
    library = LIBRARIES[framework]
    if importlib.util.find_spec(library) is None:
        raise errors.failed_precondition(
            f"{where}: serving the prebuilt {framework} image locally needs the {library!r} "
            "package in the service's Python environment, which does not have it; install "
            f"it there (pip install {'scikit-learn' if library == 'sklearn' else library})."
        )
    allowed = "1" if allow_pickle else "0"
    env = ((FRAMEWORK_ENV, framework), (MODEL_FILE_ENV, model_file), (ALLOW_PICKLE_ENV, allowed))
    return ("python", "-m", PREBUILT_MODULE), env


def _model_file(where: str, framework: str, artifact_uri: str, storage_root: Path) -> str:
    names = MODEL_FILES[framework]
    if not artifact_uri:
        raise errors.failed_precondition(
            f"{where}: the prebuilt {framework} image loads the model from artifactUri, "
            "which the model does not have."
        )
    try:
        path_under(storage_root, artifact_uri)
    except ValueError as exc:
        raise errors.failed_precondition(f"{where}: artifactUri: {exc}") from None
    for name in names:  # a link leading out of the storage root is refused, naming it
        if model_file_exists(storage_root, artifact_uri, name, where):
            return name
    wanted, missing = (
        (names[0], "which does not hold it")
        if len(names) == 1
        else (f"one of {', '.join(names)}", "which holds none of them")
    )
    raise errors.failed_precondition(
        f"{where}: the prebuilt {framework} image loads {wanted} from artifactUri "
        f"{artifact_uri}, {missing}.{HINTS.get(framework, '')}"
    )
