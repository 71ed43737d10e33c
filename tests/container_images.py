"""Images for the container tests, made without a registry (none is reachable on CI machines).

- `engine()`: Podman's command line and the environment it needs here: runc and cgroupfs where
  runc is installed, and a containers.conf that clears `default_ulimits` (this project's CI
  sandbox refuses crun and the default ulimits; docs/containers.md).
- `marked_image(kind)`: a throwaway image of that base with a /marker file of its own (and any
  files and Containerfile lines a test adds), removed afterwards.
- `debian_python(engine)`: a Debian bookworm base with Python 3.11, made once per machine with
  `mmdebstrap` from the package mirror (about 90 s) and imported with `podman import`. The tar
  is kept under `$VTP_TEST_IMAGE_CACHE` (default `<tmp>/vtp-test-images`) and the image is
  tagged by a digest of its recipe, so later sessions find either and build nothing.
"""

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

PODMAN = shutil.which("podman")
DEBIAN_RECIPE = ("--variant=minbase", "--include=python3,python3-venv", "bookworm")
CACHE_ENV = "VTP_TEST_IMAGE_CACHE"


def cache_dir() -> Path:
    folder = Path(os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir()) / "vtp-test-images")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def engine() -> tuple[list[str], dict[str, str]]:
    """Podman's command line and the variables it needs (CONTAINERS_CONF)."""
    assert PODMAN, "podman is not installed"
    conf = cache_dir() / "containers.conf"
    if not conf.exists():
        conf.write_text("[containers]\ndefault_ulimits = []\n")
    command = [PODMAN]
    if shutil.which("runc"):
        command += ["--runtime", "runc", "--cgroup-manager=cgroupfs"]
    return command, {"CONTAINERS_CONF": str(conf)}


def engine_env(command: list[str], env: dict[str, str]) -> dict[str, str]:
    """What a service or `vtp run` gets to run things in images with this engine."""
    return {**env, "VTP_CONTAINER_ENGINE": " ".join(command)}


def has_image(command: list[str], env: dict[str, str], image: str) -> bool:
    found = subprocess.run(
        [*command, "image", "exists", image], env={**os.environ, **env}, capture_output=True
    )
    return found.returncode == 0


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One builder at a time per machine (test sessions run side by side)."""
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def debian_python(command: list[str], env: dict[str, str]) -> str:
    """The Debian base with Python 3.11 (`python3`, venv), built or found; its name."""
    key = hashlib.sha256(" ".join(["mmdebstrap", *DEBIAN_RECIPE]).encode()).hexdigest()[:12]
    image = f"localhost/vtp-test-debian-py:{key}"
    folder = cache_dir()
    with _locked(folder / f"debian-py-{key}.lock"):
        if has_image(command, env, image):
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
        subprocess.run(
            [*command, "import", str(archive), image], env={**os.environ, **env}, check=True,
            capture_output=True,
        )  # fmt: skip
    return image


def build(command: list[str], env: dict[str, str], image: str, containerfile: str, context: Path):
    """`podman build` of `containerfile` (its text) in `context` as `image`, host network."""
    (context / "Containerfile").write_text(containerfile)
    built = subprocess.run(
        [*command, "build", "--network", "host", "--tag", image, "--file",
         str(context / "Containerfile"), str(context)],
        env={**os.environ, **env}, capture_output=True, text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]


def remove_image(command: list[str], env: dict[str, str], image: str) -> None:
    subprocess.run(
        [*command, "rmi", "--force", image], env={**os.environ, **env}, capture_output=True
    )


@contextlib.contextmanager
def marked_image(
    kind: str, files: Mapping[str, str] | None = None, lines: str = ""
) -> Iterator[tuple[str, str]]:
    """(name, marker): `localhost/vtp-test-KIND-...:1`, the Debian base with Python, a /marker
    holding `marker`, `files` (name: text) copied to /, then the Containerfile's `lines`."""
    command, env = engine()
    base = debian_python(command, env)
    name, marker = f"localhost/vtp-test-{kind}-{uuid.uuid4().hex[:8]}:1", uuid.uuid4().hex
    context = Path(os.environ.get("TMPDIR", "/tmp")) / f"vtp-context-{marker}"
    context.mkdir()
    (context / "marker").write_text(marker + "\n")
    copies = ""
    for file, text in (files or {}).items():
        (context / file).write_text(text)
        copies += f"COPY {file} /{file}\n"
    build(command, env, name, f"FROM {base}\nCOPY marker /marker\n{copies}{lines}", context)
    try:
        yield name, marker
    finally:
        remove_image(command, env, name)
