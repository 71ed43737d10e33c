"""TorchServe for the PyTorch image's stand-in: the service's own, or a cached layer installed once.

The prebuilt PyTorch prediction images hold TorchServe; the service's environment usually does
not, and its user should not have to install it. So the server finds it (`find_or_install`):

- in the service's environment, when that has the `torchserve` distribution at MIN_VERSION or
  later (token authorization on by default: every call to its APIs needs a key that only the
  server reads); an operator who installed it there chose that release;
- else in a layer `<cache>/<key>`: a virtual environment over the service's site-packages
  (`isolation.create`, as a job's requirements get one) into which pip, run on the layer's own
  interpreter, installs REQUIREMENT (with psutil and wheel where the service lacks them), torch
  and what ships with it pinned at the service's versions (`packages.service_pins`), so pip
  never fetches another torch. Keyed by the requirement, the service's site folders, the pins and
  the Python version; built once under a file lock (several servers, of several services of this
  user, may start at once), marked ready, then reused by every later deploy without pip. A layer
  without its mark (a server stopped mid-install) is built again.

pip reaches the index this machine is configured for: its config files under HOME and the PIP_*
and proxy variables the service passed on (`packages.index_settings`). TorchServe's workers run
on the layer's interpreter, so a handler imports torch and the rest from the service's
environment, as a prebuilt image's workers import the image's own.
"""

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from vtp import private_files
from vtp.engine import tree_walk
from vtp.local.runtime import isolation
from vtp.local.runtime.packages import content_hash, index_settings, service_pins
from vtp.local.runtime.pip_cache import PIP_INSTALL, once

REQUIREMENT = "torchserve==0.12.0"
"""What a layer installs: the release this stand-in is tested with."""
MIN_VERSION = Version("0.11.0")
"""The first TorchServe whose APIs need a key by default: an older one in the service's
environment is passed over for the layer."""
JAR = Path("ts") / "frontend" / "model-server.jar"
"""TorchServe's frontend, relative to its home (the folder holding the `ts` package)."""


class InstallFailed(Exception):
    """TorchServe could not be installed; the message says why in one line, and the way out."""


@dataclass(frozen=True)
class TorchServe:
    """An installed TorchServe."""

    python: str
    """The interpreter its workers run on (its environment imports `ts`)."""
    home: Path
    """The folder holding the `ts` package: TorchServe's `model_server_home`."""
    source: str
    """Where it came from, for the log: the service's environment, or the layer's folder."""

    @property
    def jar(self) -> Path:
        """Its Java frontend."""
        return self.home / JAR


def find_or_install(cache: Path, env: Mapping[str, str]) -> TorchServe:
    """The service's TorchServe, else the cached layer's, installed now when it is not yet
    (pip's output on stdout, the server's log); InstallFailed saying why not."""
    return service_torchserve() or layer_torchserve(cache, env)


def service_torchserve() -> TorchServe | None:
    """The TorchServe of this interpreter's environment (the service's), when it has one of
    MIN_VERSION or later in its site-packages; None otherwise."""
    try:
        version = Version(importlib.metadata.version("torchserve"))
    except (importlib.metadata.PackageNotFoundError, InvalidVersion):
        return None
    spec = importlib.util.find_spec("ts")
    if version < MIN_VERSION or spec is None or spec.origin is None:
        return None
    home = Path(spec.origin).resolve().parent.parent
    sites = [Path(site).resolve() for site in isolation.service_site_packages()]
    if home not in sites or not (home / JAR).is_file():  # a `ts` folder of the project's
        return None
    return TorchServe(sys.executable, home, f"the service's environment (torchserve {version})")


def layer_torchserve(cache: Path, env: Mapping[str, str]) -> TorchServe:
    """The layer holding REQUIREMENT under `cache`, built unless it is ready."""
    try:
        private_files.private_dir(cache)
    except (private_files.UnsafePath, OSError) as exc:
        raise InstallFailed(f"cannot keep TorchServe's layer in {cache}: {exc}") from None
    sites, pins = isolation.service_site_packages(), service_pins()
    key = content_hash([], REQUIREMENT, *sites, *pins, sys.version)[:24]
    root = cache / key
    layer = isolation.Layer(root)
    built = once(root, lambda: False, lambda: _build(layer, sites, pins, env))
    how = "installed in" if built else "cached in"
    return TorchServe(str(layer.python), layer.site_packages, f"{REQUIREMENT}, {how} {root}")


def _build(
    layer: isolation.Layer, sites: list[str], pins: list[str], env: Mapping[str, str]
) -> None:
    """REQUIREMENT into a new layer at `layer.root` (made empty by `once`, which removes it
    again if this raises); InstallFailed with pip's last line."""
    print(f"torchserve_server: installing {REQUIREMENT} into {layer.root}", flush=True)
    isolation.create(layer.root, sites)
    constraints = layer.root / "pins.txt"
    constraints.write_text("".join(f"{pin}\n" for pin in pins))
    command = [str(layer.python), *PIP_INSTALL, "--constraint", str(constraints), REQUIREMENT]
    code, last = _run(command, layer, env)
    if code == 0 and not (layer.site_packages / JAR).is_file():
        code, last = 1, f"it installed no {JAR}"
    if code == 0:
        code, last = _run([str(layer.python), "-c", "import ts, psutil"], layer, env)
    if code != 0:
        raise InstallFailed(
            f"pip could not install {REQUIREMENT} for the prebuilt PyTorch image ({last}); "
            f"install it in the service's environment (pip install '{REQUIREMENT}') and deploy "
            "again"
        )


def _run(command: list[str], layer: isolation.Layer, env: Mapping[str, str]) -> tuple[int, str]:
    """Run `command` with pip's settings and a scratch TMPDIR of its own, its output copied to
    stdout: its status and its last line that says something."""
    scratch = tempfile.mkdtemp(prefix=".pip-tmp-", dir=layer.root.parent)
    own = {
        "PATH": env.get("PATH", os.defpath),
        "HOME": env.get("HOME", str(Path.home())),
        "PYTHONUSERBASE": str(layer.user_base),  # the user's ~/.local stays out of pip's sight
        "TMPDIR": scratch,
        **index_settings(env),
    }
    try:
        done = subprocess.run(
            command, env=own, cwd=layer.root, capture_output=True, text=True, check=False
        )
    finally:
        tree_walk.remove_tree(scratch, ignore_errors=True)
    output = done.stdout + done.stderr
    sys.stdout.write(output)
    sys.stdout.flush()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("ERROR:", "ModuleNotFoundError"))]
    return done.returncode, (errors or lines or ["no output"])[-1]
