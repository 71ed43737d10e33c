"""Vertex's prebuilt PyTorch prediction images, planned: TorchServe serving the model's model.mar.

    {us,europe,asia}-docker.pkg.dev/vertex-ai/prediction/pytorch-{cpu,gpu}.X-Y:latest

Those images run TorchServe (a Java frontend and Python workers) with the model store at the
downloaded artifactUri and the archive `model.mar` registered as the model `model`, so its
predictions are TorchServe's `/predictions/model`, with the JSON envelope: each of Vertex's
`instances` goes to the handler as one row, and what the handler returns for them comes back as
`predictions` (docs: "exporting model artifacts"; vertex-ai-samples'
`pytorch_image_classification_with_prebuilt_serving_containers`, which names its archive
`model.mar` with `torch-model-archiver --model-name model`).

Locally the service starts `torchserve_server.py`, which runs TorchServe itself (a JDK from the
machine, the `torchserve` package from the service's environment or a cached layer it installs:
`torchserve_install.py`) and answers on Vertex's routes. This module decides, before any process
starts, whether this machine can (FAILED_PRECONDITION in one line naming the way otherwise):

- artifactUri holds `model.mar`, a regular file inside the storage root (`model_files.py`);
- the operator allows model files that run code: an archive's handler is Python that TorchServe
  imports, and its weights are usually pickled, so, as for joblib and pickle files, only when the
  service was started with VTP_SERVING_ALLOW_PICKLE=1;
- Java: `$JAVA_HOME/bin/java` when JAVA_HOME is set (as TorchServe's launcher looks), else
  `java` on the service's PATH.

What the server needs from the service's environment (it gets a container's, which has neither
JAVA_HOME nor pip's settings) travels in variables only the service sets: where Java is, where the
TorchServe layer is cached (`$XDG_CACHE_HOME/vtp/torchserve`, default `~/.cache`: per user, shared
by this user's services like pip's own cache), and pip's index settings.
"""

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

from vtp.local.base import errors
from vtp.local.runtime.packages import index_settings
from vtp.local.runtime.pip_cache import user_cache_path

FRAMEWORK = "pytorch"
ARCHIVE = "model.mar"
"""The archive the image registers (`torch-model-archiver --model-name model`)."""
MODULE = "vtp.local.endpoints.torchserve_server"
JAVA_ENV = "VTP_TORCHSERVE_JAVA"
"""The Java executable the server runs TorchServe's frontend with (set by the service)."""
CACHE_ENV = "VTP_TORCHSERVE_CACHE"
"""The folder of cached TorchServe layers (set by the service)."""
GPU_ENV = "VTP_TORCHSERVE_GPU"
"""1 for a `-gpu` image (TorchServe uses the GPUs it sees), 0 for a `-cpu` one (none)."""
JAVA_PACKAGE = "openjdk-17-jre-headless"
"""Debian's and Ubuntu's package of a Java runtime TorchServe 0.12 runs on."""


def plan_torchserve(
    where: str, archive_uri: str, allow_code: bool, gpu: bool, environ: Mapping[str, str]
) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """(argv, service-owned environment) of the server that serves `archive_uri` (a checked
    model.mar) with TorchServe, on GPUs for a `-gpu` image (a `-cpu` one uses none, as on
    Vertex); FAILED_PRECONDITION when the operator does not allow archives or this machine has
    no Java. `environ` is the service's."""
    if not allow_code:
        raise errors.failed_precondition(
            f"{where}: {archive_uri} is a TorchServe model archive, and serving one runs its "
            "handler's Python code (and unpickles its weights); the local service serves one only "
            "when its operator starts it with VTP_SERVING_ALLOW_PICKLE=1, as for pickle files."
        )
    java = find_java(environ)
    if not java:
        raise errors.failed_precondition(
            f"{where}: the prebuilt PyTorch image serves model.mar with TorchServe, whose "
            f"frontend needs Java, and {java_problem(environ)}; install a Java runtime "
            f"(apt-get install {JAVA_PACKAGE}) where the service runs."
        )
    env = {
        **index_settings(environ),
        JAVA_ENV: java,
        CACHE_ENV: str(cache_dir(environ)),
        GPU_ENV: "1" if gpu else "0",
    }
    return ("python", "-m", MODULE), tuple(sorted(env.items()))


def find_java(environ: Mapping[str, str]) -> str:
    """The Java executable TorchServe's launcher would run (JAVA_HOME's, else PATH's), as an
    absolute path; "" when there is none."""
    home = environ.get("JAVA_HOME", "").strip()
    if home:
        candidate = Path(home) / "bin" / "java"
        return str(candidate) if os.access(candidate, os.X_OK) and candidate.is_file() else ""
    found = shutil.which("java", path=environ.get("PATH", os.defpath))
    return os.path.abspath(found) if found else ""


def java_problem(environ: Mapping[str, str]) -> str:
    """Why `find_java` found nothing, as a clause."""
    home = environ.get("JAVA_HOME", "").strip()
    if home:
        return f"JAVA_HOME={home} has no bin/java"
    return "there is no `java` on the service's PATH"


def cache_dir(environ: Mapping[str, str]) -> Path:
    """Where this user's TorchServe layers are cached: `$XDG_CACHE_HOME/vtp/torchserve`."""
    return user_cache_path(environ, "torchserve")
