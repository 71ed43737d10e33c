"""An interpreter with TensorFlow: the service's own, or a cached layer installed once.

The prebuilt TensorFlow prediction images' stand-in (`vtp.local.endpoints.tf_serving_server`)
runs on it. The service's environment usually has no TensorFlow, and its user should not have
to install it, so `tensorflow_python` finds one:

- the service's interpreter, when it imports `tensorflow` (an operator who installed it there
  chose that release);
- else a layer `<cache>/<key>`: a virtual environment over the service's site-packages
  (`isolation.create`, as a job's requirements get one) into which pip, run on the layer's own
  interpreter, installs REQUIREMENT with the service's numpy, protobuf, grpcio and torch held at
  their versions (a layer never replaces what the service runs on). Keyed by the requirement,
  the service's site folders, the pins and the Python version; built once under a file lock
  (`pip_cache.once`: several servers, of several services of this user, may start at once),
  marked ready, then reused by every later deploy without pip.

pip reaches the index this machine is configured for (`packages.index_settings`); the server's
log says when the install starts and ends, and a failure's message holds pip's last lines.
"""

import importlib.metadata
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path

from vtp import private_files
from vtp.local.runtime import isolation
from vtp.local.runtime.packages import content_hash, index_settings, service_pins
from vtp.local.runtime.pip_cache import InstallError, Pip, once

REQUIREMENT = "tensorflow-cpu==2.21.*"
"""What a layer installs: the release this stand-in is tested with (274 MB for CPython 3.11; it
accepts this project's numpy 2 and protobuf 6)."""
HELD = ("numpy", "protobuf", "grpcio", "ml-dtypes", "requests")
"""The service's own distributions that the layer keeps at their versions, beside torch's."""


class InstallFailed(Exception):
    """TensorFlow could not be installed; the message says why and what to do."""


def tensorflow_python(cache: Path, env: Mapping[str, str]) -> Path:
    """An interpreter that imports `tensorflow`: this one when it does, else the layer's under
    `cache`, built now unless it is ready; InstallFailed saying why."""
    if importlib.util.find_spec("tensorflow") is not None:
        return Path(sys.executable)
    try:
        private_files.private_dir(cache)
    except (private_files.UnsafePath, OSError) as exc:
        raise InstallFailed(f"cannot keep TensorFlow's layer in {cache}: {exc}") from None
    sites, pins = isolation.service_site_packages(), [*service_pins(), *_held()]
    root = cache / content_hash([], REQUIREMENT, *sites, *pins, sys.version)[:24]
    layer = isolation.Layer(root)
    if once(root, lambda: False, lambda: _build(layer, sites, pins, env)):
        print(f"installed {REQUIREMENT} into {root}", flush=True)
    return layer.python


def _held() -> list[str]:
    """`name==version` of each of HELD this interpreter has."""
    pins = []
    for name in HELD:
        try:
            pins.append(f"{name}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return pins


def _build(
    layer: isolation.Layer, sites: list[str], pins: list[str], env: Mapping[str, str]
) -> None:
    """REQUIREMENT into a new layer at `layer.root` (made empty by `once`, which removes it
    again if this raises), then one import of it; InstallFailed with pip's last lines."""
    print(f"installing {REQUIREMENT} into {layer.root} (once for this user)", flush=True)
    pip = Pip({"PATH": env.get("PATH", ""), "HOME": env.get("HOME", ""), **index_settings(env)},
              lambda: False, None)  # fmt: skip
    try:
        pip.install_requirements([REQUIREMENT], layer.root, pins, sites)
        code, text = pip.execute([str(layer.python), "-c", "import tensorflow"], layer.root)
    except InstallError as exc:
        raise InstallFailed(_advice(str(exc))) from None
    if code != 0:
        raise InstallFailed(_advice(f"the installed TensorFlow does not import: {text[-1500:]}"))


def _advice(why: str) -> str:
    return (
        f"pip could not install {REQUIREMENT} for the prebuilt TensorFlow image ({why}); "
        f"install TensorFlow in the service's environment (pip install '{REQUIREMENT}') and "
        "deploy again"
    )
