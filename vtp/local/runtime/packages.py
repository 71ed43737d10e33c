"""Install a pythonPackageSpec's packages with what they require, as Vertex's prebuilt images do.

On Vertex the executor image pip-installs the package URIs, each with its dependencies (the
`requirements` of `CustomJob.from_local_script`, `CustomTrainingJob` and gcloud's autopackaging
are the package's own), before it runs the module. Here that is two cached steps, each folder
built once and marked ready (a folder without its mark, left by a service stopped mid-install,
is built again):

- The archives themselves go into `<cache>/archives/<sha256 of their bytes>` (`pip install
  --no-deps --target`, from the local files alone). Each is read from storage once, copied into
  a private folder of the cache and hashed as it is copied, and pip installs that copy
  (`staged`): an archive another user or job replaces in storage meanwhile never reaches the
  cache under the original's hash.
- What they require (`Requires-Dist`, its environment markers evaluated for this interpreter,
  less what the archives hold themselves and what the service's environment already satisfies)
  goes into `<cache>/requirements/<key>`, keyed by the requirements, the service's site folders
  and the pins below: a layer over the service's site-packages (`isolation.create`) into which
  pip, run on the layer's own interpreter, installs them. pip resolves against everything the
  layer sees and writes only into it (it leaves packages outside its environment alone): the
  service's environment never changes. The next job with the same requirements, even with
  other code, starts without pip. A requirement that cannot be read, or whose marker cannot be
  evaluated, fails the install naming the package, the requirement and the marker.

Replicas have the archives' folder first on PYTHONPATH (so a user's package named as one of the
project's folders, `trainer`, is theirs), and read the requirements' layer, which reads the
service's site-packages, right after their own (`Prepared.sites`, `replicas.py`).

pip reaches the package index this machine is configured for: its own config files (under HOME,
which a replica keeps), the `PIP_*` and proxy variables of the service's environment
(`index_settings`; nothing else of it), and its own download cache. Sources build against the
setuptools the service has (`--no-build-isolation`), which the SDK's and gcloud's packages need.
torch and what ships with it (`PINNED`) stay at the versions the service has: a requirement that
asks for another torch fails the install, pip naming the conflict, rather than pull a multi-GB
build. pip's output goes to the log the caller names (the pool's first replica's); a failure
raises InstallError with its last lines.

A pool whose image is one of Vertex's prebuilt training images (`executorImageUri`, or a
host `containerSpec.imageUri`: `image`) first gets what that image holds and the service lacks
(`vtp.vertex.prebuilt_images`: torchvision and torchaudio paired with the service's torch,
scikit-learn, XGBoost...) in `<cache>/images/<key>`, keyed by the image and that package set: a
layer over the service's site-packages, each package installed by pip on its own and then
imported once there. A package pip cannot install, one that does not import beside the
service's packages (PyPI's torchvision, built for CUDA, beside a CPU torch), and one the table
does not install here (TensorFlow) is left out and a stand-in module of its name raises
ImportError in one line naming the image, the package and the way out: a job that imports it
fails at once, saying so, and one that does not runs. The layer is kept as built, stand-ins
too (the log says to remove it to try again). The requirements' layer then lies over this one,
and a requirement it meets (`xgboost` for XGBoost's image) is not installed again; replicas read
both, in that order (`Prepared.sites`). None of this is done for a pool that runs in its image.

pip runs as any process of the service does (`process.start`: under the shim, in a group of its
own) with the environment the caller gives (a replica's container environment, never the
service's own), and `interrupted` is asked while it runs: a cancelled job kills it at once.
"""

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from vtp.engine import tree_walk
from vtp.local.base import stored_files
from vtp.local.runtime import isolation
from vtp.local.runtime.process import signal_group, start
from vtp.storage import is_gcs_uri, path_under
from vtp.vertex import prebuilt_images

_POLL = 0.05
"""Seconds between looks at `interrupted` while pip runs or another job installs the same set."""

PINNED = frozenset({"torch", "torchvision", "torchaudio", "triton"})
PINNED_PREFIX = "nvidia-"
"""Distributions kept at the service's versions (torch's CUDA builds weigh gigabytes)."""

READY = ".vtp-ready"
"""The mark a cached folder gets once pip has succeeded in it."""

MAX_ARCHIVE_BYTES = 4 << 30
"""The largest package archive (packageUris) hashed and installed."""

TAIL_LINES = 15
"""How many of pip's last lines a failure's message carries."""

_PIP = ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar=off"]
_NOTE = "[vtp local] "
"""How a line of the service's own starts in a replica's log (`ReplicaSet.note`)."""
_PROXIES = frozenset({"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"})

_locks: dict[Path, threading.Lock] = {}
_locks_guard = threading.Lock()

Interrupted = Callable[[], bool]


class InstallError(Exception):
    """The package URIs could not be installed; the message says why (pip's output included)."""


class InstallInterrupted(Exception):
    """`interrupted` said so while installing: pip was killed, nothing was cached."""


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


@dataclass(frozen=True)
class Prepared:
    """The installed packages of a pool and what they require."""

    archives: Path | None
    """The folder holding the archives' packages; None for a pool without package URIs."""
    requirements: tuple[str, ...]
    """What they require that the service's environment does not already satisfy."""
    environment: Path | None
    """The layer holding `requirements`; None when there are none."""
    cached: bool
    """`environment` was ready before this call: pip did not reach the index."""
    image: ImageLayer | None = None
    """What the pool's prebuilt training image holds, under `environment`; None for others."""

    @property
    def sites(self) -> list[str]:
        """What a replica's environment reads after its own site-packages, in order: the
        requirements' layer, the image's (each of which reads the service's after its own);
        empty: the service's alone. Both are named, not only the first, as a warm replica puts
        these ahead of the service's folders itself (`warm_replica.py`)."""
        sites = [str(isolation.Layer(self.environment).site_packages)] if self.environment else []
        return sites + ([self.image.site] if self.image is not None else [])


def archive_path(uri: str, gcs_root: Path) -> Path:
    """The local file behind a package URI: gs:// only, as on Vertex, always under `gcs_root`;
    ValueError for anything else."""
    if not is_gcs_uri(uri):
        raise ValueError(f"{uri!r} is not a Cloud Storage URI: packageUris take gs:// URIs")
    return path_under(gcs_root, uri)


def missing_archives(uris: Sequence[str], gcs_root: Path) -> list[str]:
    """The URIs whose archives do not exist locally."""
    return [uri for uri in uris if not archive_path(uri, gcs_root).is_file()]


def content_hash(paths: Sequence[Path], *extra: str, root: Path | None = None) -> str:
    """SHA-256 over the archives' names and bytes, in order, then `extra`: a cache key.
    StoredFileError for an archive that is not a regular file inside `root` (the storage root;
    its own folder by default) of at most MAX_ARCHIVE_BYTES, read to that many bytes at most."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        with stored_files.opened(root or path.parent, path, MAX_ARCHIVE_BYTES, path.name) as file:
            left = MAX_ARCHIVE_BYTES
            while left > 0 and (chunk := file.read(min(1 << 20, left))):
                digest.update(chunk)
                left -= len(chunk)
    for text in extra:
        digest.update(b"\0" + text.encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Staged:
    """The package archives as pip installs them: private copies, and the cache key of their
    names and bytes (`content_hash`'s, computed from the very bytes copied)."""

    paths: tuple[Path, ...]
    key: str


@contextlib.contextmanager
def staged(archives: Sequence[Path], gcs_root: Path, cache_dir: Path) -> Iterator[Staged]:
    """Each archive read once from storage into a new folder of the service's own under
    `cache_dir` (mode 0700, in the state directory) and hashed as it is copied; the copies are
    removed on exit. StoredFileError as `content_hash` raises it.

    The storage root is shared: whoever can write there (another user, a job) could replace an
    archive between the hash that names the cache folder and pip's read of it, and so put their
    code into the cached install that later jobs with the original archive run. pip reads these
    copies instead, which no one else can reach, so what is installed is what was hashed."""
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder = Path(tempfile.mkdtemp(prefix=".staged-", dir=cache_dir))
    try:
        digest = hashlib.sha256()
        copies = []
        for index, path in enumerate(archives):
            digest.update(path.name.encode() + b"\0")
            copy = folder / str(index) / path.name  # a folder each: two URIs may share a name
            copy.parent.mkdir(mode=0o700)
            _copy_archive(path, copy, gcs_root, digest.update)
            copies.append(copy)
        yield Staged(tuple(copies), digest.hexdigest())
    finally:
        tree_walk.remove_tree(folder, ignore_errors=True)


def _copy_archive(source: Path, copy: Path, root: Path, update: Callable[[bytes], object]) -> None:
    """Copy `source` (checked by `stored_files`: a regular file inside `root`) to the new file
    `copy` (mode 0600), passing every byte copied to `update`; StoredFileError as well for an
    archive that grows past MAX_ARCHIVE_BYTES while it is copied."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with (
        stored_files.opened(root, source, MAX_ARCHIVE_BYTES, source.name) as file,
        open(os.open(copy, flags, 0o600), "wb") as out,
    ):
        left = MAX_ARCHIVE_BYTES
        while chunk := file.read(min(1 << 20, left + 1)):
            left -= len(chunk)
            if left < 0:
                raise stored_files.StoredFileError(
                    f"{source.name} grew to more than the limit of {MAX_ARCHIVE_BYTES} bytes "
                    "while it was copied"
                )
            update(chunk)
            out.write(chunk)


def service_pins() -> list[str]:
    """`name==version` of each `PINNED` distribution this interpreter has, the first found."""
    pins: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"] or "")
        if name in PINNED or name.startswith(PINNED_PREFIX):
            pins.setdefault(name, dist.version)
    return sorted(f"{name}=={version}" for name, version in pins.items())


def index_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """What of `environ` tells pip where the package index is and how to reach it: `PIP_*`
    (but where to install) and the proxy variables."""
    where = ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER", "PIP_SRC")
    return {
        k: v
        for k, v in environ.items()
        if (k.startswith("PIP_") and k not in where) or k.upper() in _PROXIES
    }


def requirements_of(folder: Path, provided: Sequence[tuple[str, str]] = ()) -> list[str]:
    """What the distributions in `folder` require (extras left out) that neither they, nor
    `provided` (a prebuilt image's layer: distribution and version), nor this interpreter's
    environment already satisfy; all of those when any is unmet, else nothing. InstallError,
    naming the package and the requirement, for one that cannot be read or whose environment
    marker cannot be evaluated."""
    dists = list(importlib.metadata.distributions(path=[str(folder)]))
    own = {canonicalize_name(d.metadata["Name"] or "") for d in dists}
    wanted: set[str] = set()
    for dist in dists:
        for text in dist.requires or ():
            requirement = _parsed(dist, text)
            if canonicalize_name(requirement.name) in own or not _marker_holds(dist, requirement):
                continue
            requirement.marker = None  # evaluated: replicas run on this interpreter
            if not _provided(requirement, dict(provided)):
                wanted.add(str(requirement))
    return sorted(wanted) if not all(map(_satisfied, wanted)) else []


def _provided(requirement: Requirement, provided: Mapping[str, str]) -> bool:
    """Whether the image's layer already holds what `requirement` asks (no extras, no URL)."""
    found = provided.get(canonicalize_name(requirement.name))
    if found is None or requirement.extras or requirement.url:
        return False
    return requirement.specifier.contains(found, prereleases=True)


def _package(dist: importlib.metadata.Distribution) -> str:
    """`package NAME VERSION`: how an install error names the distribution at fault, since a
    pool's packageUris may hold several."""
    return f"package {dist.metadata['Name']} {dist.version}"


def _parsed(dist: importlib.metadata.Distribution, text: str) -> Requirement:
    """`text`, a requirement of `dist`, parsed; InstallError naming both when it cannot be (an
    unknown marker variable, say), rather than an error the job's outcome would not explain."""
    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        raise InstallError(
            f"{_package(dist)} requires {text!r}, which is not a valid requirement: {exc}"
        ) from None


def _marker_holds(dist: importlib.metadata.Distribution, requirement: Requirement) -> bool:
    """Whether `requirement`'s environment marker (if any) holds on this interpreter, which the
    replicas run on. packaging raises for a marker it cannot evaluate (`python_version ~= "x"`
    compares a version with something that is none): InstallError naming the package, the
    requirement and the marker, so the job fails saying so instead of with "Internal error"."""
    if requirement.marker is None:
        return True
    try:
        return requirement.marker.evaluate({"extra": ""})
    except ValueError as exc:  # packaging's UndefinedComparison, UndefinedEnvironmentName, ...
        raise InstallError(
            f"{_package(dist)} requires {str(requirement)!r}, whose environment marker "
            f"{str(requirement.marker)!r} cannot be evaluated on this interpreter: {exc}"
        ) from None


def install(
    uris: Sequence[str],
    gcs_root: Path,
    cache_dir: Path,
    env: Mapping[str, str] | None = None,
    interrupted: Interrupted = lambda: False,
    log: Path | None = None,
    image: str = "",
) -> Prepared:
    """The packages of `uris` and what they require, over what the prebuilt training image
    `image` holds (nothing for another image), installed now unless cached; pip runs with
    `env` (PATH and HOME of this one when None) and appends its output to `log`.
    InstallInterrupted once `interrupted()`; InstallError when pip fails."""
    missing = missing_archives(uris, gcs_root)
    if missing:
        raise InstallError(f"package archive not found: {', '.join(missing)}")
    if env is None:
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(Path.home())}
    pip = _Pip(env, interrupted, log)
    sites, pins = isolation.service_site_packages(), service_pins()
    layer = image_layer(image, cache_dir, pip, sites, pins)
    folder = _archives(uris, gcs_root, cache_dir, pip) if uris else None
    requirements = requirements_of(folder, layer.provided if layer else ()) if folder else []
    if not requirements:
        return Prepared(folder, (), None, True, layer)
    below = [layer.site, *sites] if layer else sites
    root = cache_dir / "requirements" / content_hash([], *requirements, *below, *pins)
    built = _once(
        root, interrupted, lambda: pip.install_requirements(requirements, root, pins, below)
    )
    return Prepared(folder, tuple(requirements), root, not built, layer)


def _archives(uris: Sequence[str], gcs_root: Path, cache_dir: Path, pip: "_Pip") -> Path:
    """The folder of the archives' own packages (`--no-deps`), installed unless cached."""
    archives = [archive_path(uri, gcs_root) for uri in uris]
    try:
        with staged(archives, gcs_root, cache_dir) as copies:
            folder = cache_dir / "archives" / copies.key
            _once(folder, pip.interrupted, lambda: pip.install_archives(list(copies.paths), folder))
    except stored_files.StoredFileError as exc:
        raise InstallError(f"package archive: {exc}") from None
    return folder


def image_layer(
    image: str, cache_dir: Path, pip: "_Pip", sites: Sequence[str], pins: Sequence[str]
) -> ImageLayer | None:
    """What the prebuilt training image `image` holds and the service lacks, in a layer at
    `<cache_dir>/images/<key>` over `sites`, built unless cached; None for another image, or
    one whose packages the service has."""
    parsed = prebuilt_images.training_image(image)
    if parsed is None:
        return None
    packages = prebuilt_images.framework_packages(parsed, _installed_version("torch"))
    wanted = [package for package in packages if not _service_has(package)]
    if not wanted:
        return None
    texts = [package.requirement or f"({package.module})" for package in wanted]
    root = cache_dir / "images" / content_hash([], parsed.uri, *texts, *sites, *pins)
    built = _once(
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
    pip: "_Pip",
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
    pip: "_Pip",
) -> str:
    """pip installs `package` into `layer`, which then imports it; why it cannot be used here
    (pip's or the import's last line, and the way out) or ""."""
    extra = {"PYTHONUSERBASE": str(layer.user_base)}
    command = [str(layer.python), *_PIP, "--constraint", str(constraints), package.requirement]
    code, text = pip.execute(command, layer.root, extra)
    if code != 0:
        return f"which pip could not install here ({_last_line(text)}); {_way_out(package)}"
    probe = _PROBE.format(module=package.module)
    code, text = pip.execute([str(layer.python), "-c", probe], layer.root, extra)
    if code == 0:
        return ""
    uninstall = [str(layer.python), "-m", "pip", "uninstall", "--quiet", "--yes", _name(package)]
    pip.execute(uninstall, layer.root, extra)
    torch = _installed_version("torch")
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
    build = _installed_version("torch").partition("+")[2]
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


def _installed_version(name: str) -> str:
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
    if not package.requirement or _satisfied(package.requirement):
        return True
    return bool(package.provides and _installed_version(package.provides))


def _importable(module: str) -> bool:
    """Whether this interpreter's environment has `module` (found, not imported)."""
    return importlib.util.find_spec(module) is not None


@dataclass(frozen=True)
class _Pip:
    """pip as a job's install runs it."""

    env: Mapping[str, str]
    interrupted: Interrupted
    log: Path | None

    def install_archives(self, archives: list[Path], target: Path) -> None:
        """The archives alone into `target`, from their files."""
        command = [sys.executable, *_PIP, "--no-deps", "--no-build-isolation", "--no-index"]
        self.run([*command, "--target", str(target), *map(str, archives)], target)

    def install_requirements(
        self, requirements: list[str], root: Path, pins: list[str], sites: Sequence[str]
    ) -> None:
        """`requirements` into a layer at `root` over `sites` (the image's layer, if any, and
        the service's site-packages), `pins` held."""
        layer = isolation.create(root, list(sites))
        constraints = root / "pins.txt"
        constraints.write_text("".join(f"{pin}\n" for pin in pins))
        command = [str(layer.python), *_PIP, "--constraint", str(constraints), *requirements]
        # The user's own site (~/.local) stays out of what pip sees, as it does for replicas.
        self.run(command, root, {"PYTHONUSERBASE": str(layer.user_base)})

    def run(self, command: list[str], cwd: Path, extra: Mapping[str, str] | None = None) -> None:
        """Run pip; InstallInterrupted or InstallError (with its last lines) when it stops."""
        code, text = self.execute(command, cwd, extra)
        if code != 0:
            tail = "\n".join(text.strip().splitlines()[-TAIL_LINES:])
            raise InstallError(f"pip install failed with status {code}:\n{tail}")

    def execute(
        self, command: list[str], cwd: Path, extra: Mapping[str, str] | None = None
    ) -> tuple[int, str]:
        """Run `command` (pip, or the layer's python), its output appended to the log: its exit
        status and output; InstallInterrupted when interrupted. Its temporary files (unpacked
        archives, builds) go to a folder of its own beside `cwd`, removed however it ends: a
        job's pip never fills the machine's shared /tmp."""
        cwd.parent.mkdir(parents=True, exist_ok=True)
        scratch = tempfile.mkdtemp(prefix=f".{cwd.name}.pip-tmp-", dir=cwd.parent)
        own = {"TMPDIR": scratch, "TEMP": scratch, "TMP": scratch}
        try:
            with _output(self.log) as output:
                offset = output.tell()
                process = start(command, {**self.env, **(extra or {}), **own}, cwd, output)
                code = _wait(process, self.interrupted)
                output.seek(offset)
                text = output.read().decode(errors="replace")
        finally:
            tree_walk.remove_tree(scratch, ignore_errors=True)
        if code is None:
            raise InstallInterrupted()
        return code, text

    def note(self, text: str) -> None:
        """A line of the service's own in the log."""
        with _output(self.log) as output:
            output.write(f"{_NOTE}{text}\n".encode())


def _once(folder: Path, interrupted: Interrupted, build: Callable[[], None]) -> bool:
    """Run `build` unless `folder` is ready (one build per folder at a time); whether it ran.
    A build that raises leaves nothing behind."""
    lock = _lock_for(folder)
    while not lock.acquire(timeout=_POLL):
        if interrupted():
            raise InstallInterrupted()
    try:
        if (folder / READY).is_file():
            return False
        tree_walk.remove_tree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        try:
            build()
        except BaseException:
            tree_walk.remove_tree(folder, ignore_errors=True)
            raise
        (folder / READY).write_text("")
        return True
    finally:
        lock.release()


def _satisfied(text: str) -> bool:
    """Whether this interpreter's environment already has what `text` asks (no extras, no URL)."""
    requirement = Requirement(text)
    if requirement.extras or requirement.url:
        return False
    try:
        found = importlib.metadata.version(requirement.name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return requirement.specifier.contains(found, prereleases=True)


@contextlib.contextmanager
def _output(log: Path | None) -> Iterator[IO[bytes]]:
    """`log` opened to append and read back, or a temporary file."""
    if log is None:
        with tempfile.TemporaryFile() as scratch:
            yield scratch
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "a+b") as appended:
        yield appended


def _wait(process: subprocess.Popen, interrupted: Interrupted) -> int | None:
    """pip's exit status, or None when `interrupted` (pip and all it started killed)."""
    while True:
        try:
            return process.wait(timeout=_POLL)
        except subprocess.TimeoutExpired:
            if interrupted():
                signal_group(process.pid, signal.SIGKILL)
                process.wait()
                return None


def _lock_for(folder: Path) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(folder, threading.Lock())
