"""A team's folder as `vtp image build` puts it in the image: which files, and which not.

The files are those under the folder minus what its ignore files leave out:

- `.gcloudignore` (gitignore syntax, `#!include:FILE` lines; without one, `.gitignore`), as
  gcloud reads it, with hidden paths (`.git`, `.vtp` state, `.env`, editor state) never taken:
  the rules of `vtp.vertex.ignore`, the same that local Python packages follow;
- `.dockerignore`, as Docker reads it: each pattern relative to the folder itself (`data` is
  `./data`, not `*/data`), `**` for any number of directories, `!` to take a path back, a
  pattern that names a directory leaving out everything under it (and, as in gitignore, nothing
  under a directory left out can be taken back);

and, whatever they say, caches, virtual environments and version control (`sdist`'s skips), and
a checkout of this repository inside the folder (its sources are in the image already). A file
over `MAX_FILE_BYTES`, or a folder over `MAX_TOTAL_BYTES` in all, is refused with a message that
names it and says how to leave it out.
"""

from collections.abc import Callable
from pathlib import Path

import pathspec

from vtp.vertex import ignore, sdist

MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
REQUIREMENTS = "requirements.txt"


class TooLarge(ValueError):
    """A file or the whole folder is over the limits; the message says what to do."""


def files(folder: Path, checkout: Path | None = None) -> dict[str, sdist.SourceFile]:
    """The folder's files that go into the image, keyed by POSIX path relative to `folder`.

    ValueError for a symbolic link to a directory, TooLarge over the size limits.
    """
    folder = folder.resolve()
    leave_out = rules(folder)
    inner = _inside(checkout.resolve(), folder) if checkout else None

    def skipped(relative: str) -> bool:
        if leave_out(relative) or relative.rstrip("/") == inner:
            return True
        path = folder / relative
        if not path.exists():  # a dangling link: nothing to copy
            return True
        if not relative.endswith("/") and path.stat().st_size > MAX_FILE_BYTES:
            raise TooLarge(
                f"{path} is {path.stat().st_size / 2**20:.0f} MiB, over the image's "
                f"{MAX_FILE_BYTES // 2**20} MiB a file; list it in {folder / '.gcloudignore'} "
                "(or .dockerignore) and fetch it at run time (gs://...)"
            )
        return False

    found = sdist.collect(folder, "", skipped)
    total = sum(len(f.data) for f in found.values())
    if total > MAX_TOTAL_BYTES:
        biggest = sorted(found, key=lambda name: -len(found[name].data))[:3]
        raise TooLarge(
            f"{folder} holds {total / 2**20:.0f} MiB to put in the image, over "
            f"{MAX_TOTAL_BYTES // 2**20} MiB; the largest: {', '.join(biggest)}; list what the "
            "image does not need in .gcloudignore (or .dockerignore)"
        )
    return found


def rules(folder: Path) -> Callable[[str], bool]:
    """True for a relative POSIX path (directories end with `/`) that stays out of the image."""
    gcloud = ignore.rules(folder)
    docker = _dockerignore(folder)
    return lambda relative: gcloud(relative) or docker(relative)


def _dockerignore(folder: Path) -> Callable[[str], bool]:
    path = folder / ".dockerignore"
    lines = path.read_text().splitlines() if path.is_file() else []
    spec = pathspec.GitIgnoreSpec.from_lines(_as_gitignore(line) for line in lines)
    return spec.match_file


def _as_gitignore(line: str) -> str:
    """A .dockerignore line as the gitignore line that means the same: anchored at the folder,
    a trailing `/` dropped (Docker cleans paths, so `data/` is `data`, file or directory)."""
    text = line.strip()
    if not text or text.startswith("#"):
        return ""
    negated = text.startswith("!")
    pattern = text.removeprefix("!").strip().removeprefix("./").strip("/")
    if not pattern or pattern == ".":
        return ""
    return ("!" if negated else "") + "/" + pattern


def _inside(checkout: Path, folder: Path) -> str | None:
    """The checkout's path relative to `folder` when it lies strictly inside it."""
    try:
        relative = checkout.relative_to(folder).as_posix()
    except ValueError:
        return None
    return relative if relative != "." else None
