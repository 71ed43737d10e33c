"""TorchServe for the PyTorch image's stand-in: the service's own, or a cached layer installed once.

The prebuilt PyTorch prediction images hold TorchServe; the service's environment usually does
not, and its user should not have to install it. So the server finds it (`find_or_install`):

- in the service's environment, when that has the `torchserve` distribution at MIN_VERSION or
  later (token authorization on by default: every call to its APIs needs a key that only the
  server reads); an operator who installed it there chose that release;
- else in a layer `<cache>/<key>` (`vtp.local.runtime.server_layers`: built once, marked ready,
  reused without pip) into which pip installs REQUIREMENT (with psutil and wheel where the
  service lacks them), torch and what ships with it pinned at the service's versions
  (`packages.service_pins`), so pip never fetches another torch.

pip reaches the index this machine is configured for: its config files under HOME and the PIP_*
and proxy variables the service passed on (`packages.index_settings`). TorchServe's workers run
on the layer's interpreter, so a handler imports torch and the rest from the service's
environment, as a prebuilt image's workers import the image's own.
"""

import importlib.metadata
import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

from vtp.local.runtime import isolation, server_layers
from vtp.local.runtime.packages import service_pins

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
    pins = service_pins()
    try:
        layer, built = server_layers.cached_layer(
            cache, REQUIREMENT, pins, lambda layer, sites: _build(layer, sites, pins, env)
        )
    except server_layers.UnusableCache as exc:
        raise InstallFailed(f"cannot keep TorchServe's layer in {cache}: {exc}") from None
    how = "installed in" if built else "cached in"
    return TorchServe(str(layer.python), layer.site_packages, f"{REQUIREMENT}, {how} {layer.root}")


def _build(
    layer: isolation.Layer, sites: list[str], pins: list[str], env: Mapping[str, str]
) -> None:
    """REQUIREMENT into a new layer at `layer.root` (made empty by `once`, which removes it
    again if this raises); InstallFailed with pip's last line."""
    print(f"torchserve_server: installing {REQUIREMENT} into {layer.root}", flush=True)
    code, output = server_layers.pip_install(layer, sites, pins, [REQUIREMENT], env)
    last = server_layers.last_line(output)
    if code == 0 and not (layer.site_packages / JAR).is_file():
        code, last = 1, f"it installed no {JAR}"
    if code == 0:
        code, output = server_layers.run_logged(
            [str(layer.python), "-c", "import ts, psutil"], layer, env
        )
        last = server_layers.last_line(output)
    if code != 0:
        raise InstallFailed(
            f"pip could not install {REQUIREMENT} for the prebuilt PyTorch image ({last}); "
            f"install it in the service's environment (pip install '{REQUIREMENT}') and deploy "
            "again"
        )
