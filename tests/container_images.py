"""Engines and images for the container tests, made without a registry (none is reachable on CI
machines). Every container test runs with each engine this machine has: Podman and Docker.

- `container_engine`: a fixture, one `Engine` per engine in `ENGINES`, skipped (saying why) where
  that engine is not installed or its daemon does not answer. A test module imports it
  (`from tests.container_images import engine_fixture  # noqa: F401`) and asks for it.
- `find(name)`: the `Engine` of that name here, or why there is none. Podman runs with runc and
  cgroupfs where runc is installed, and a containers.conf that clears `default_ulimits` (this
  project's CI sandbox refuses crun and the default ulimits; docs/containers.md). Docker is the
  daemon `docker info` answers (`.ci/run` starts one).
- `debian_python(engine)`: a Debian bookworm base with Python 3.11, made once per machine with
  `mmdebstrap` from the package mirror (about 90 s) and imported into the engine (`ENGINE
  import`). The tar is kept under `$VTP_TEST_IMAGE_CACHE` (default `<tmp>/vtp-test-images`) and
  the image is tagged by a digest of its recipe, so later sessions find either and build nothing.
- `marked_image(kind, engine=...)`: a throwaway image of that base with a /marker file of its own
  (and any files and Containerfile lines a test adds), removed afterwards.
"""

import contextlib
import fcntl
import functools
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ENGINES = ("podman", "docker")
DEBIAN_RECIPE = ("--variant=minbase", "--include=python3,python3-venv", "bookworm")
CACHE_ENV = "VTP_TEST_IMAGE_CACHE"
ANSWER_TIMEOUT_S = 60
"""How long `ENGINE info` may take to answer before the engine counts as absent."""


@dataclass(frozen=True)
class Engine:
    """A container engine's command line and the variables its client needs here."""

    name: str
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)

    def service_env(self) -> dict[str, str]:
        """What a service or `vtp run` gets to run things in images with this engine."""
        return {**self.env, "VTP_CONTAINER_ENGINE": shlex.join(self.command)}

    def run(self, *args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
        """`ENGINE args...` (output captured as text unless `kwargs` say otherwise)."""
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", "input" not in kwargs)
        env = {**os.environ, **self.env}
        return subprocess.run([*self.command, *args], env=env, check=check, **kwargs)

    def container_names(self, running_only: bool = False) -> list[str]:
        """The names of the engine's containers (stopped ones too, unless `running_only`)."""
        listed = self.run("ps", *([] if running_only else ["--all"]), "--format", "{{.Names}}")
        return listed.stdout.split()


def cache_dir() -> Path:
    folder = Path(os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir()) / "vtp-test-images")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@functools.cache
def find(name: str) -> Engine | str:
    """The engine `name` ("podman" or "docker") as it runs here, or why it cannot (one line)."""
    program = shutil.which(name)
    if program is None:
        return f"{name} is not installed (.ci/run installs it)"
    found = Engine(name, *_podman(program)) if name == "podman" else Engine(name, (program,))
    version = "{{.Version.Version}}" if name == "podman" else "{{.ServerVersion}}"
    try:
        answered = found.run("info", "--format", version, check=False, timeout=ANSWER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"{name} info did not answer within {ANSWER_TIMEOUT_S} s"
    if answered.returncode:
        said = (answered.stderr.strip().splitlines() or ["no output"])[-1]
        return f"{name}'s daemon does not answer `{name} info` ({said}; .ci/run starts one)"
    return found


def _podman(program: str) -> tuple[tuple[str, ...], dict[str, str]]:
    conf = cache_dir() / "containers.conf"
    if not conf.exists():
        conf.write_text("[containers]\ndefault_ulimits = []\n")
    command = [program]
    if shutil.which("runc"):
        command += ["--runtime", "runc", "--cgroup-manager=cgroupfs"]
    return tuple(command), {"CONTAINERS_CONF": str(conf)}


@pytest.fixture(scope="session", params=ENGINES, name="container_engine")
def engine_fixture(request: pytest.FixtureRequest) -> Engine:
    """Each engine this machine has, in turn; a test with an absent one is skipped saying why."""
    found = find(request.param)
    if isinstance(found, str):
        pytest.skip(found)
    return found


def has_image(engine: Engine, image: str) -> bool:
    return engine.run("image", "inspect", "--format", "{{.Id}}", image, check=False).returncode == 0


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder at a time per machine (test sessions run side by side)."""
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def debian_python(target: Engine) -> str:
    """The Debian base with Python 3.11 (`python3`, venv) in `target`, built or found; its name
    (the archive is shared by the engines, each imports it once)."""
    key = hashlib.sha256(" ".join(["mmdebstrap", *DEBIAN_RECIPE]).encode()).hexdigest()[:12]
    image = f"localhost/vtp-test-debian-py:{key}"
    folder = cache_dir()
    with _locked(folder / f"debian-py-{key}.lock"):
        if has_image(target, image):
            return image
        archive = folder / f"debian-py-{key}.tar"
        if not archive.exists():
            mmdebstrap = shutil.which("mmdebstrap")
            assert mmdebstrap, "mmdebstrap is not installed (apt-get install mmdebstrap)"
            partial = archive.with_suffix(".partial.tar")
            subprocess.run(
                [mmdebstrap, "--quiet", *DEBIAN_RECIPE, str(partial)], check=True,
                capture_output=True,
            )  # fmt: skip
            partial.replace(archive)
        target.run("import", str(archive), image)
    return image


def build(engine: Engine, image: str, containerfile: str, context: Path) -> None:
    """`ENGINE build` of `containerfile` (its text) in `context` as `image`, host network."""
    (context / "Containerfile").write_text(containerfile)
    built = engine.run(
        "build", "--network", "host", "--tag", image, "--file", str(context / "Containerfile"),
        str(context), check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]


def remove_image(engine: Engine, image: str) -> None:
    engine.run("rmi", "--force", image, check=False)


@contextlib.contextmanager
def marked_image(
    kind: str,
    files: Mapping[str, str] | None = None,
    lines: str = "",
    *,
    engine: Engine,
) -> Iterator[tuple[str, str]]:
    """(name, marker): `localhost/vtp-test-KIND-...:1` in `engine`, the Debian base with Python,
    a /marker holding `marker`, `files` (name: text) copied to /, then the Containerfile's
    `lines`."""
    target = engine
    base = debian_python(target)
    name, marker = f"localhost/vtp-test-{kind}-{uuid.uuid4().hex[:8]}:1", uuid.uuid4().hex
    context = Path(os.environ.get("TMPDIR", "/tmp")) / f"vtp-context-{marker}"
    context.mkdir()
    (context / "marker").write_text(marker + "\n")
    copies = ""
    for file, text in (files or {}).items():
        (context / file).write_text(text)
        copies += f"COPY {file} /{file}\n"
    try:
        build(target, name, f"FROM {base}\nCOPY marker /marker\n{copies}{lines}", context)
        yield name, marker
    finally:
        remove_image(target, name)
        shutil.rmtree(context, ignore_errors=True)
