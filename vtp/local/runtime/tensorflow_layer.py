"""An interpreter where `import tensorflow` works: the service's own, or a cached layer built once.

Google's prebuilt TensorFlow prediction images hold TensorFlow (their stand-in loads a
SavedModel with it: `vtp.local.endpoints.tf_serving_server`), and so may a user's program that
reads `gs://` with `tf.io.gfile`; the service's environment usually does not, and its user
should not have to install it. `tensorflow_python(cache, env)` answers:

- the service's own interpreter (`sys.executable`) when its environment has TensorFlow (one of
  DISTRIBUTIONS, and a `tensorflow` package to import): an operator who installed it there
  chose that release;
- else the interpreter of a layer under `cache` (`server_layers.cached_layer`: a virtual
  environment over the service's site-packages, keyed by the requirement, the service's site
  folders, the pins and the Python version, built once under a file lock, marked ready, then
  reused without pip) into which pip installs REQUIREMENT, with what TensorFlow requires that
  the service has (SHARED: numpy, protobuf, grpcio...) and torch's family pinned at the
  service's versions (`packages.service_pins`), so pip never installs another numpy or protobuf
  in front of the service's: the layer's programs import google-cloud-storage and the SDK from
  the service's environment beside TensorFlow. The build ends with `import tensorflow` on the
  layer's interpreter; a failure raises InstallFailed with pip's (or the import's) last lines,
  and leaves nothing behind.

The cache is this user's, shared by their services: `pip_cache.user_cache_path(environ,
CACHE_NAME)`, `$XDG_CACHE_HOME/vtp/tensorflow` (default `~/.cache`). pip's output goes to
stdout (the server's log), after a line saying that TensorFlow is being installed, once.
"""

import importlib.metadata
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path

from vtp.local.runtime import isolation, server_layers
from vtp.local.runtime.packages import service_pins

REQUIREMENT = "tensorflow-cpu==2.21.*"
"""What a layer installs: TensorFlow's CPU build (274 MB for cp311), which accepts the service's
numpy 2.4 and protobuf 6.33."""
CACHE_NAME = "tensorflow"
"""The folder of this user's cache (`pip_cache.user_cache_path`) that holds the layers."""
DISTRIBUTIONS = (
    "tensorflow",
    "tensorflow-cpu",
    "tensorflow-gpu",
    "tensorflow-intel",
    "tensorflow-macos",
    "tf-nightly",
    "tf-nightly-cpu",
)
"""The distributions that give the `tensorflow` package."""
SHARED = (
    "numpy",
    "protobuf",
    "grpcio",
    "ml-dtypes",
    "h5py",
    "requests",
    "absl-py",
    "typing-extensions",
)
"""What TensorFlow requires that the service's own packages (google-cloud-storage, the SDK) share
with it: held at the service's versions where the service has them."""
PROBE = "import tensorflow as tf; print('tensorflow', tf.__version__)"
"""What a new layer must run before it is marked ready."""


class InstallFailed(Exception):
    """TensorFlow could not be installed; the message says why (pip's last lines) and the way
    out."""


def tensorflow_python(cache: Path, env: Mapping[str, str]) -> Path:
    """The interpreter of an environment where `import tensorflow` works: this one's
    (`sys.executable`) when it has TensorFlow, else a layer's under `cache`, installed now
    unless it is ready (pip's output on stdout); InstallFailed saying why not. `env`: where pip
    finds the index (its PIP_* and proxy variables, PATH, HOME)."""
    if service_has_tensorflow():
        return Path(sys.executable)
    pins = service_pins(SHARED)
    try:
        layer, _ = server_layers.cached_layer(
            cache, REQUIREMENT, pins, lambda layer, sites: _build(layer, sites, pins, env)
        )
    except server_layers.UnusableCache as exc:
        raise InstallFailed(f"cannot keep TensorFlow's layer in {cache}: {exc}") from None
    return layer.python


def service_has_tensorflow() -> bool:
    """Whether this interpreter's environment has TensorFlow installed (found, not imported)."""
    if importlib.util.find_spec("tensorflow") is None:
        return False
    for name in DISTRIBUTIONS:
        try:
            importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        return True
    return False


def _build(
    layer: isolation.Layer, sites: list[str], pins: list[str], env: Mapping[str, str]
) -> None:
    """REQUIREMENT into a new layer at `layer.root` (made empty by `once`, which removes it
    again if this raises), then imported there; InstallFailed with the last lines."""
    print(
        f"tensorflow: installing {REQUIREMENT} into {layer.root}, once: every later use on this "
        "machine reuses it (this takes a few minutes)",
        flush=True,
    )
    code, output = server_layers.pip_install(layer, sites, pins, [REQUIREMENT], env)
    what = "pip could not install"
    if code == 0:
        code, output = server_layers.run_logged([str(layer.python), "-c", PROBE], layer, env)
        what = "the installed TensorFlow does not import: after installing"
    if code != 0:
        tail = "\n".join(server_layers.last_lines(output))
        raise InstallFailed(
            f"{what} {REQUIREMENT} ({server_layers.last_line(output)}); install TensorFlow "
            f"in the service's environment (pip install '{REQUIREMENT}') and try again. "
            f"The last lines:\n{tail}"
        )
    print(f"tensorflow: {REQUIREMENT} installed in {layer.root}", flush=True)
