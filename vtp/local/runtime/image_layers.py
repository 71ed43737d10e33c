"""What a prebuilt training image holds that the service lacks, in a cached layer.

A pool whose image is one of Vertex's prebuilt training images (`executorImageUri`, or a
host `containerSpec.imageUri`: `image`) first gets what that image holds and the service lacks
(`vtp.vertex.prebuilt_images`: torchvision and torchaudio paired with the service's torch,
scikit-learn, XGBoost...) in `<cache>/<key>` (this user's cache, `pip_cache.user_cache`, shared
by their services), keyed by the image, that package set, the service's site folders and pins:
a layer over the service's site-packages, each package installed by pip on its own and then
imported once there. A package pip cannot install, one that does not import beside the
service's packages (PyPI's torchvision, built for CUDA, beside a CPU torch), and one the table
does not install here (TensorFlow) is left out and a stand-in module of its name raises
ImportError in one line naming the image, the package and the way out: a job that imports it
fails at once, saying so, and one that does not runs. The layer is kept as built, stand-ins
too (the log says to remove it to try again). The requirements' layer then lies over this one,
and a requirement it meets (`xgboost` for XGBoost's image) is not installed again; replicas read
both, in that order (`Prepared.sites`). None of this is done for a pool that runs in its image.

pip runs there as for requirements (`pip_cache`).
"""

import importlib.metadata
import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from vtp.local.runtime import isolation
from vtp.local.runtime.pip_cache import PIP_INSTALL, Pip, content_hash, once, satisfied
from vtp.vertex import prebuilt_images


@dataclass(frozen=True)
class ImageLayer:
    """What a prebuilt training image holds and the service lacks, installed in a layer."""

    image: str
    root: Path
    cached: bool
    """It was ready before this call: pip did not run."""
    provided: tuple[tuple[str, str], ...] = ()
    """(distribution, version) of what it holds, under the names the image has them by
    (`xgboost` for `xgboost-cpu`): a job's requirement one of them meets is not installed."""
    standing_in: tuple[str, ...] = ()
    """Modules it could not give: importing one raises ImportError saying why."""

    @property
    def site(self) -> str:
        """Its site-packages folder (which reads the service's after its own)."""
        return str(isolation.Layer(self.root).site_packages)


def image_layer(
    image: str, cache: Path, pip: "Pip", sites: Sequence[str], pins: Sequence[str]
) -> ImageLayer | None:
    """What the prebuilt training image `image` holds and the service lacks, in a layer at
    `<cache>/<key>` over `sites`, built unless cached; None for another image, or
    one whose packages the service has."""
    parsed = prebuilt_images.training_image(image)
    if parsed is None:
        return None
    packages = prebuilt_images.framework_packages(parsed, installed_version("torch"))
    wanted = [package for package in packages if not _service_has(package)]
    if not wanted:
        return None
    texts = [package.requirement or f"({package.module})" for package in wanted]
    root = cache / content_hash([], parsed.uri, *texts, *sites, *pins)
    built = once(
        root, pip.interrupted, lambda: _build_image_layer(parsed, wanted, root, pip, sites, pins)
    )
    found = json.loads((root / _IMAGE_RECORD).read_text())
    standing_in = tuple(found["standing_in"])
    how = "installed in" if built else "reused, already installed in"
    again = f" ({', '.join(standing_in)} stand in: remove it to try again)" if standing_in else ""
    pip.note(f"prebuilt image {parsed.uri}: {', '.join(texts)}: {how} {root}{again}")
    provided = tuple((name, version) for name, version in found["provided"])
    return ImageLayer(parsed.uri, root, not built, provided, standing_in)


_IMAGE_RECORD = "image.json"
"""What an image's layer holds and what stands in, written once it is built."""


def _build_image_layer(
    image: prebuilt_images.TrainingImage,
    packages: Sequence[prebuilt_images.FrameworkPackage],
    root: Path,
    pip: "Pip",
    sites: Sequence[str],
    pins: Sequence[str],
) -> None:
    """Each of `packages` into a new layer at `root`, or its stand-in; the record written."""
    layer = isolation.create(root, list(sites))
    constraints = root / "pins.txt"
    constraints.write_text("".join(f"{pin}\n" for pin in pins))
    provided: list[tuple[str, str]] = []
    standing_in: list[str] = []
    for package in packages:
        problem = package.reason or _install_one(package, layer, constraints, pip)
        if problem:
            _stand_in(layer, package.module, f"{image.uri} has {package.module}, {problem}")
            pip.note(f"{image.uri}: {package.module} stands in: importing it raises ImportError")
            standing_in.append(package.module)
    for dist in importlib.metadata.distributions(path=[str(layer.site_packages)]):
        provided.append((canonicalize_name(dist.metadata["Name"] or ""), dist.version))
    aliases = [
        (p.provides, v) for p in packages for n, v in provided if p.provides and n == _name(p)
    ]
    record = {"provided": sorted(provided + aliases), "standing_in": standing_in}
    (root / _IMAGE_RECORD).write_text(json.dumps(record))


def _install_one(
    package: prebuilt_images.FrameworkPackage,
    layer: isolation.Layer,
    constraints: Path,
    pip: "Pip",
) -> str:
    """pip installs `package` into `layer`, which then imports it; why it cannot be used here
    (pip's or the import's last line, and the way out) or ""."""
    extra = {"PYTHONUSERBASE": str(layer.user_base)}
    command = [
        str(layer.python),
        *PIP_INSTALL,
        "--constraint",
        str(constraints),
        package.requirement,
    ]
    code, text = pip.execute(command, layer.root, extra)
    if code != 0:
        return f"which pip could not install here ({_last_line(text)}); {_way_out(package)}"
    probe = _PROBE.format(module=package.module)
    code, text = pip.execute([str(layer.python), "-c", probe], layer.root, extra)
    if code == 0:
        return ""
    uninstall = [str(layer.python), "-m", "pip", "uninstall", "--quiet", "--yes", _name(package)]
    pip.execute(uninstall, layer.root, extra)
    torch = installed_version("torch")
    beside = f"this machine's torch {torch}" if package.pairs_with_torch else "the service's"
    return (
        f"but {package.requirement} from the package index does not load beside {beside} "
        f"({_last_line(text)}); {_way_out(package)}"
    )


_PROBE = """
import sys
try:
    import {module}
except Exception as exc:
    sys.exit(f"{{type(exc).__name__}}: {{exc}}".splitlines()[0])
"""
"""The import of a package just installed, which says in one line (not a traceback in the
replica's log, ahead of the job's own) why it fails."""


def _way_out(package: prebuilt_images.FrameworkPackage) -> str:
    """How to give replicas `package` all the same: in the service's environment (for a
    library paired with torch, from PyTorch's index of the service's build: `+cpu`, `+cu126`),
    or in the image itself."""
    hint = f"pip install '{package.requirement}'"
    build = installed_version("torch").partition("+")[2]
    if package.pairs_with_torch and build:
        hint += f" --index-url https://download.pytorch.org/whl/{build}"
    return (
        f"install a build of it for this machine in the service's environment ({hint}), or run "
        "the job in the image itself with a container engine (VTP_CONTAINER_ENGINE=podman)"
    )


def _stand_in(layer: isolation.Layer, module: str, message: str) -> None:
    """A module `module` in `layer` whose import raises ImportError(`message`). The message is
    its docstring, so the traceback's line of it is short and the line after it says it all."""
    folder = layer.site_packages / module
    folder.mkdir(parents=True, exist_ok=True)
    text = f"{message!r}\n\nraise ImportError(__doc__, name={module!r})\n"
    (folder / "__init__.py").write_text(text)


def _name(package: prebuilt_images.FrameworkPackage) -> str:
    """The distribution `package.requirement` names."""
    return canonicalize_name(Requirement(package.requirement).name)


def _last_line(text: str) -> str:
    """The last line of `text` that says something (pip's ERROR, an exception's message)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [
        line
        for line in lines
        if line.startswith(("ERROR:", "ImportError", "RuntimeError", "OSError"))
    ]
    return (errors or lines or ["no output"])[-1]


def installed_version(name: str) -> str:
    """The version of distribution `name` in this interpreter's environment, or ""."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _service_has(package: prebuilt_images.FrameworkPackage) -> bool:
    """Whether the service's environment already gives what `package` is for: its module, at
    the version it asks (`provides` counts: a service's `xgboost` is XGBoost's image's)."""
    if not _importable(package.module):
        return False
    if not package.requirement or satisfied(package.requirement):
        return True
    return bool(package.provides and installed_version(package.provides))


def _importable(module: str) -> bool:
    """Whether this interpreter's environment has `module` (found, not imported)."""
    return importlib.util.find_spec(module) is not None
