"""Each replica's own Python environment, layered over the service's: what it installs stays there.

On Vertex a replica starts from a fresh container, and nothing it installs outlives it. Here a
replica runs on the service's interpreter, so without this `pip install --upgrade pip` would
upgrade the service's own pip and `pip install --user` would be refused inside its virtualenv.

Every start of a replica gets a new virtual environment (`venv`, no pip, no copy of anything:
a few symlinks and two small files, milliseconds) whose `site-packages` comes first and which
reaches the service's packages through a `.pth` file after its own, with the system site
enabled so that `--user` installs are allowed and land in the replica's own `PYTHONUSERBASE`.
Its `bin/` holds `python` and `pip`, ahead of the service interpreter's on PATH: a `pip install`
(any package, pip itself, `--user`) writes only under the replica's environment, and pip leaves
the service's copy of an upgraded package alone because it lies outside that environment. The
environment is removed when the replica's process is reaped.
"""

import os
import site
import sys
import sysconfig
import venv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vtp.engine import tree_walk

PTH_NAME = "_vtp_service_site.pth"
"""The file in the replica's site-packages that adds the service's."""

_PIP = """#!/bin/sh
'''exec' "$(dirname "$0")/python" "$0" "$@"
' '''
import sys
from pip._internal.cli.main import main
sys.exit(main())
"""
"""pip's own launcher, run by the environment's python whatever the length of its path (a `#!`
line is cut at 127 characters on older kernels; `sh` finds the interpreter next to the script)."""


@dataclass(frozen=True)
class Layer:
    """One replica start's environment, at `root`."""

    root: Path

    @property
    def bin(self) -> Path:
        """Its `python` and `pip`, and the scripts of what it installs."""
        return self.root / "bin"

    @property
    def python(self) -> Path:
        """The interpreter that runs with this environment."""
        return self.bin / "python"

    @property
    def user_base(self) -> Path:
        """Where `pip install --user` puts packages (PYTHONUSERBASE)."""
        return self.root / "user"

    @property
    def site_packages(self) -> Path:
        """Its own site-packages: what `pip install` writes into, read first."""
        base = {"base": str(self.root), "platbase": str(self.root)}
        return Path(sysconfig.get_path("purelib", "venv", base))


def create(root: Path, service_sites: Sequence[str] | None = None) -> Layer:
    """A fresh environment at `root` (whatever was there is removed) over `service_sites`, the
    service's site-packages folders (its interpreter's when None)."""
    tree_walk.remove_tree(root, ignore_errors=True)
    venv.EnvBuilder(system_site_packages=True, symlinks=True).create(root)
    layer = Layer(root)
    sites = service_site_packages() if service_sites is None else list(service_sites)
    # `addsitedir` (not a bare path line) so that the service's own .pth files are read too.
    layer.site_packages.joinpath(PTH_NAME).write_text(
        f"import site; list(map(site.addsitedir, {sites!r}))\n"
    )
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for name in ("pip", f"pip{sys.version_info.major}", f"pip{version}"):
        script = layer.bin / name
        script.write_text(_PIP)
        script.chmod(0o755)
    return layer


def remove(layer: Layer) -> None:
    """Remove the environment and everything installed into it."""
    tree_walk.remove_tree(layer.root, ignore_errors=True)


def service_site_packages() -> list[str]:
    """The site-packages folders of this interpreter (its user site too when it uses one)."""
    sites = list(site.getsitepackages())
    if site.ENABLE_USER_SITE and os.path.isdir(site.getusersitepackages()):
        sites.append(site.getusersitepackages())
    return sites


def command(argv: Sequence[str], layer: Layer) -> list[str]:
    """`argv` with the service's interpreter (how `launch.py` writes `python`) as the layer's."""
    if argv and argv[0] == sys.executable:
        return [str(layer.python), *argv[1:]]
    return list(argv)


def environment(env: Mapping[str, str], layer: Layer) -> dict[str, str]:
    """`env` run in `layer`: its `bin` ahead of the service interpreter's on PATH (or first),
    VIRTUAL_ENV, and PYTHONUSERBASE unless `env` sets one."""
    service_bin = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", os.defpath).split(os.pathsep) if p]
    at = path.index(service_bin) if service_bin in path else 0
    path.insert(at, str(layer.bin))
    return {
        "PYTHONUSERBASE": str(layer.user_base),
        **env,
        "PATH": os.pathsep.join(path),
        "VIRTUAL_ENV": str(layer.root),
    }
