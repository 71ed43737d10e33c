"""Byte-reproducible source archives: the same files always give the same `.tar.gz` bytes.

A Python source distribution is a gzipped POSIX.1-2001 (pax) tar whose entries sit under
`<name>-<version>/`. Everything that usually leaks the host into an archive is fixed here:
entries are sorted, every mtime is `SOURCE_DATE_EPOCH` (default 1980-01-01, as wheels use),
owners are uid/gid 0 with empty names, modes are 0644 or 0755 (only the executable bit of a
source file survives), there are no directory entries (a link to a directory inside the tree is
a link entry), and the gzip header carries mtime 0 and
no file name. The bytes then depend only on the files' paths, contents and executable bits (and
on zlib, whose output is stable across the versions Python ships).

Why not `python -m build --sdist`: it needs network for its isolated build environment, and
setuptools' sdist copies host file mtimes and the user's name into the tar, so two checkouts of
the same commit give different bytes. The archive we need is small and its layout fully known,
so `tarfile` writes it; setuptools only runs later, where pip installs the archive.
"""

import gzip
import io
import os
import stat
import tarfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_EPOCH = 315532800
"""1980-01-01T00:00:00Z: the mtime of every entry unless SOURCE_DATE_EPOCH says otherwise."""

SKIPPED_DIRS = frozenset(
    {
        "__pycache__",
        ".git",
        ".hg",
        ".svn",
        ".venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ipynb_checkpoints",
    }
)
"""Directories never packaged: caches, version control, virtual environments."""

SKIPPED_SUFFIXES = (".pyc", ".pyo", ".egg-info")
SKIPPED_FILES = frozenset({".DS_Store"})


@dataclass(frozen=True)
class SourceFile:
    """One archive member: its bytes and whether it is executable, or the relative target of a
    link to a directory inside the tree (`link`, then no bytes)."""

    data: bytes
    executable: bool = False
    link: str = ""


def source_date_epoch() -> int:
    """`$SOURCE_DATE_EPOCH` (reproducible-builds.org) or 1980-01-01; ValueError if malformed."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not text:
        return DEFAULT_EPOCH
    if not text.isdigit():
        raise ValueError(f"SOURCE_DATE_EPOCH={text!r} is not a whole number of seconds")
    return int(text)


def collect(
    directory: Path, subdir: str = "", ignored: Callable[[str], bool] | None = None
) -> dict[str, SourceFile]:
    """Files under `directory/subdir`, keyed by POSIX path relative to `directory`, skips applied
    (and what `ignored` says of each relative path; directories end with `/`).

    Symbolic links to files are stored as the files they point to; a link to a directory inside
    `directory` is stored as that link, relative (the project's `vtp/trainer` is one), and one that
    leaves it or points above itself raises ValueError (following it could loop or leave the tree).
    """
    files: dict[str, SourceFile] = {}
    for path in _walk(directory / subdir, directory, ignored or (lambda _relative: False)):
        relative = path.relative_to(directory).as_posix()
        if path.is_symlink() and path.is_dir():
            files[relative] = SourceFile(b"", link=os.path.relpath(path.resolve(), path.parent))
            continue
        mode = path.stat().st_mode
        if stat.S_ISREG(mode):
            files[relative] = SourceFile(path.read_bytes(), bool(mode & 0o111))
    return files


def _walk(top: Path, base: Path, ignored: Callable[[str], bool]) -> Iterator[Path]:
    for root, dirs, names in os.walk(top):
        here = Path(root)
        relative = here.relative_to(base).as_posix().removeprefix(".").lstrip("/")
        prefix = f"{relative}/" if relative else ""
        dirs[:] = sorted(
            d for d in dirs if not _skipped_dir(here / d) and not ignored(f"{prefix}{d}/")
        )
        links = [d for d in dirs if (here / d).is_symlink()]
        for name in links:
            target = (here / name).resolve()
            if not target.is_relative_to(base.resolve()) or here.resolve().is_relative_to(target):
                raise ValueError(
                    f"{here / name} is a symbolic link out of {base} or to a folder "
                    "above it; copy it in"
                )
        dirs[:] = [d for d in dirs if d not in links]
        yield from (here / d for d in links)
        kept = (n for n in sorted(names) if not _skipped_file(n) and not ignored(prefix + n))
        yield from (here / n for n in kept)


def _skipped_dir(path: Path) -> bool:
    # Any directory holding pyvenv.cfg is a virtual environment, whatever its name.
    return (
        path.name in SKIPPED_DIRS
        or path.name.endswith(SKIPPED_SUFFIXES)
        or (path / "pyvenv.cfg").is_file()
    )


def _skipped_file(name: str) -> bool:
    return name in SKIPPED_FILES or name.endswith(SKIPPED_SUFFIXES)


def archive_name(name: str, version: str) -> str:
    """The sdist file name: `<name>-<version>.tar.gz` (name already normalized)."""
    return f"{name}-{version}.tar.gz"


def write_sdist(
    name: str, version: str, files: Mapping[str, SourceFile], mtime: int | None = None
) -> bytes:
    """The `.tar.gz` bytes holding `files` under `<name>-<version>/`, identical for equal input."""
    epoch = source_date_epoch() if mtime is None else mtime
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            source = files[path]
            info = tarfile.TarInfo(f"{name}-{version}/{path}")
            info.size, info.mtime = len(source.data), epoch
            info.mode = 0o755 if source.executable else 0o644
            if source.link:
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, source.link, 0o777
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(source.data))
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, compresslevel=9, mtime=0) as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()
