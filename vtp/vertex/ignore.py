"""The files of a local package that gcloud leaves out, so that we leave them out too.

gcloud's packager reads `.gcloudignore` in the package directory (gitignore syntax, with
`#!include:FILE` lines pulling in another file, usually `.gitignore`); without one it takes
`.gitignore`. On top of those rules, hidden paths (any part starting with `.`: VCS data, editor
and tool state, our own `.vtp/` state with its earlier archives) are never packaged. Matching
is `pathspec`'s implementation of gitignore's rules.
"""

from collections.abc import Callable
from pathlib import Path

import pathspec

_INCLUDE = "#!include:"


def rules(directory: Path) -> Callable[[str], bool]:
    """A predicate on POSIX paths relative to `directory` (directories end with `/`): True for
    what the package leaves out."""
    spec = pathspec.GitIgnoreSpec.from_lines(_lines(directory))

    def ignored(relative: str) -> bool:
        hidden = any(part.startswith(".") for part in relative.strip("/").split("/"))
        return hidden or spec.match_file(relative)

    return ignored


def _lines(directory: Path) -> list[str]:
    for name in (".gcloudignore", ".gitignore"):
        path = directory / name
        if path.is_file():
            return _expanded(path, directory)
    return []


def _expanded(path: Path, directory: Path) -> list[str]:
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith(_INCLUDE):
            included = directory / line[len(_INCLUDE) :].strip()
            lines += included.read_text().splitlines() if included.is_file() else []
        else:
            lines.append(line)
    return lines
