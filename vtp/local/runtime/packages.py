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

A pool whose image is one of Vertex's prebuilt training images first gets what that image
holds and the service lacks, in a layer of its own (`image_layers.py`); the requirements' layer
then lies over it, and a requirement it meets is not installed again; replicas read both, in
that order (`Prepared.sites`).

pip runs in cached folders as `pip_cache.py` says.
"""

import contextlib
import hashlib
import importlib.metadata
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from vtp.engine import tree_walk
from vtp.local.base import stored_files
from vtp.local.runtime import isolation
from vtp.local.runtime.image_layers import ImageLayer, image_layer
from vtp.local.runtime.pip_cache import MAX_ARCHIVE_BYTES as MAX_ARCHIVE_BYTES
from vtp.local.runtime.pip_cache import READY as READY
from vtp.local.runtime.pip_cache import InstallError as InstallError
from vtp.local.runtime.pip_cache import InstallInterrupted as InstallInterrupted
from vtp.local.runtime.pip_cache import Interrupted, Pip, once, satisfied
from vtp.local.runtime.pip_cache import content_hash as content_hash
from vtp.storage import is_gcs_uri, path_under

PINNED = frozenset({"torch", "torchvision", "torchaudio", "triton"})


PINNED_PREFIX = "nvidia-"
"""Distributions kept at the service's versions (torch's CUDA builds weigh gigabytes)."""


_PROXIES = frozenset({"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"})


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


def service_pins(also: Sequence[str] = ()) -> list[str]:
    """`name==version` of each `PINNED` distribution this interpreter has, and of each of
    `also` it has (what a layer must see at the service's versions: TensorFlow's numpy and
    protobuf), the first found."""
    pinned = PINNED | {canonicalize_name(name) for name in also}
    pins: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"] or "")
        if name in pinned or name.startswith(PINNED_PREFIX):
            pins.setdefault(name, dist.version)
    return sorted(f"{name}=={version}" for name, version in pins.items())


def index_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """What of `environ` tells pip where the package index is and how to reach it: `PIP_*`
    (but where to install) and the proxy variables."""
    where = ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER", "PIP_SRC", "PIP_IGNORE_INSTALLED")
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
    return sorted(wanted) if not all(map(satisfied, wanted)) else []


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
    image_cache: Path | None = None,
) -> Prepared:
    """The packages of `uris` and what they require, over what the prebuilt training image
    `image` holds (nothing for another image; its layer under `image_cache`, by default
    `cache_dir/images`), installed now unless cached; pip runs with
    `env` (PATH and HOME of this one when None) and appends its output to `log`.
    InstallInterrupted once `interrupted()`; InstallError when pip fails."""
    missing = missing_archives(uris, gcs_root)
    if missing:
        raise InstallError(f"package archive not found: {', '.join(missing)}")
    if env is None:
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(Path.home())}
    pip = Pip(env, interrupted, log)
    sites, pins = isolation.service_site_packages(), service_pins()
    layer = image_layer(image, image_cache or cache_dir / "images", pip, sites, pins)
    folder = _archives(uris, gcs_root, cache_dir, pip) if uris else None
    requirements = requirements_of(folder, layer.provided if layer else ()) if folder else []
    if not requirements:
        return Prepared(folder, (), None, True, layer)
    below = [layer.site, *sites] if layer else sites
    root = cache_dir / "requirements" / content_hash([], *requirements, *below, *pins)
    built = once(
        root, interrupted, lambda: pip.install_requirements(requirements, root, pins, below)
    )
    return Prepared(folder, tuple(requirements), root, not built, layer)


def _archives(uris: Sequence[str], gcs_root: Path, cache_dir: Path, pip: "Pip") -> Path:
    """The folder of the archives' own packages (`--no-deps`), installed unless cached."""
    archives = [archive_path(uri, gcs_root) for uri in uris]
    try:
        with staged(archives, gcs_root, cache_dir) as copies:
            folder = cache_dir / "archives" / copies.key
            once(folder, pip.interrupted, lambda: pip.install_archives(list(copies.paths), folder))
    except stored_files.StoredFileError as exc:
        raise InstallError(f"package archive: {exc}") from None
    return folder
