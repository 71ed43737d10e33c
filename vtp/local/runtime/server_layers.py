"""A model server's framework in a layer of this user's cache, installed once by pip: what the
TorchServe (`vtp.local.endpoints.torchserve_install`) and TensorFlow (`tensorflow_layer.py`)
stand-ins share.

A layer is a virtual environment over the service's site-packages (`isolation.create`, as a
job's requirements get one) at `<cache>/<key>`, keyed by the requirement, the service's site
folders, the pins (`packages.service_pins`: what pip must leave at the service's versions) and
the Python version. It is built once under `pip_cache.once` (a thread lock and a file lock:
several servers, of several services of this user, may start at once), marked ready, then reused
by every later caller without pip; one without its mark (a server stopped mid-install) is built
again, and a build that fails leaves nothing.

pip runs on the layer's own interpreter, so it writes only into the layer and resolves against
everything the layer sees; the pins are a constraints file, so a requirement that wants another
version of a pinned package fails the install (pip naming the conflict) instead of shadowing the
service's copy. It reaches the index this machine is configured for: its config files under HOME
and the PIP_* and proxy variables of the environment the caller gives (`packages.index_settings`),
with the user's own site (`~/.local`) out of its sight and a scratch TMPDIR of its own. Its output
is copied to stdout (a server's log).
"""

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from vtp import private_files
from vtp.engine import tree_walk
from vtp.local.runtime import isolation
from vtp.local.runtime.packages import content_hash, index_settings
from vtp.local.runtime.pip_cache import PIP_INSTALL, once

KEY_LENGTH = 24
"""Hex digits of a layer's folder name."""
FAILURE_PREFIXES = ("ERROR:", "ModuleNotFoundError", "ImportError")
"""How the lines that say why pip or an import failed start."""

Build = Callable[[isolation.Layer, list[str]], None]
"""What fills a new layer, given it and the service's site folders; it raises to fail."""


class UnusableCache(Exception):
    """The cache folder cannot hold layers (another user could plant files in it, or it cannot
    be made); the message says why."""


def cached_layer(
    cache: Path, requirement: str, pins: Sequence[str], build: Build
) -> tuple[isolation.Layer, bool]:
    """The layer for `requirement` and `pins` under `cache`, built by `build` unless it is
    ready; whether it was built now. UnusableCache when `cache` cannot be made private."""
    try:
        private_files.private_dir(cache)
    except (private_files.UnsafePath, OSError) as exc:
        raise UnusableCache(str(exc)) from None
    sites = isolation.service_site_packages()
    key = content_hash([], requirement, *sites, *pins, sys.version)[:KEY_LENGTH]
    layer = isolation.Layer(cache / key)
    built = once(layer.root, lambda: False, lambda: build(layer, sites))
    return layer, built


def pip_install(
    layer: isolation.Layer,
    sites: Sequence[str],
    pins: Sequence[str],
    requirements: Sequence[str],
    env: Mapping[str, str],
) -> tuple[int, str]:
    """A new environment at `layer.root` over `sites`, and pip, run on its interpreter,
    installing `requirements` with `pins` as constraints: pip's exit status and output."""
    isolation.create(layer.root, list(sites))
    constraints = layer.root / "pins.txt"
    constraints.write_text("".join(f"{pin}\n" for pin in pins))
    command = [str(layer.python), *PIP_INSTALL, "--constraint", str(constraints), *requirements]
    return run_logged(command, layer, env)


def run_logged(
    command: Sequence[str], layer: isolation.Layer, env: Mapping[str, str]
) -> tuple[int, str]:
    """Run `command` in `layer.root` with pip's settings from `env` and a scratch TMPDIR of its
    own (removed after), its output copied to stdout: its exit status and output."""
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
            list(command), env=own, cwd=layer.root, capture_output=True, text=True, check=False
        )
    finally:
        tree_walk.remove_tree(scratch, ignore_errors=True)
    output = done.stdout + done.stderr
    sys.stdout.write(output)
    sys.stdout.flush()
    return done.returncode, output


def last_line(output: str) -> str:
    """The line of `output` that says why it failed: its last ERROR or import error, else its
    last line that says something."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    failures = [line for line in lines if line.startswith(FAILURE_PREFIXES)]
    return (failures or lines or ["no output"])[-1]


def last_lines(output: str, count: int = 5) -> list[str]:
    """The last `count` lines of `output` that say something."""
    return [line.rstrip() for line in output.splitlines() if line.strip()][-count:]
