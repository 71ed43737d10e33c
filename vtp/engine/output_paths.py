"""What a task's outputs may name on this machine: files inside its own output folder, no links.

A task (a container component above all, which runs code the run's author may not have written)
ends by leaving files the engine reads on the host: the executor output file, an output
parameter's file, its artifacts, and the `custom_path` of an artifact it wrote elsewhere
(`artifact.path = ...`), which the engine copies to the artifact's URI as KFP's launcher
uploads it. Read naively, each of those is a way out of the task: a parameter file that is a
relative link to the state directory's token hands the token to the next task; a `custom_path`
of `/etc/shadow`, or of a host file the task never saw, copies it into storage; a URI of the
task's choosing writes any host path. So, before any of it is read:

- the task's output folder is reached without a link, from the storage root (or the pipeline
  root, where that is a plain folder) down;
- nothing under it is a link, and the walk over it is iterative and bounded
  (`vtp.engine.tree_walk`: a tree a task made a thousand levels deep, or with a million files,
  is refused, not a RecursionError);
- a `custom_path` of a task in its image is a path inside that folder (the `/gcs/...` path it
  saw, mapped back to the storage root); any `custom_path` is copied only to a URI the engine
  gave that output.

A refusal fails the task, naming the path; nothing is read or copied.
"""

import os
import stat
from pathlib import Path
from typing import Any

from vtp import storage
from vtp.engine import tree_walk

MAX_ENTRIES = 100_000
"""Files and folders an output folder may hold."""
MAX_DEPTH = 64
"""Folders deep it may go."""


def checked_root(task_root: str) -> Path:
    """The task's output folder, checked: reached without a link, holding no link, bounded.
    ValueError names what is refused."""
    root = Path(os.path.abspath(task_root))
    base = _base_of(root)
    _no_link_between(base, root)
    # one level past the limit is entered, so what lies there is refused by its name
    walk = tree_walk.Walk(root, MAX_DEPTH + 1, MAX_ENTRIES, skip_unreadable=False)
    try:
        for entry in walk:
            mode = os.lstat(entry.path).st_mode
            if stat.S_ISLNK(mode):
                raise ValueError(f"{entry.path} is a symbolic link; a task's outputs may hold none")
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise ValueError(f"{entry.path} is not a regular file or folder")
            if entry.depth > MAX_DEPTH:
                raise ValueError(
                    f"{entry.path} is more than {MAX_DEPTH} folders deep in the task's outputs"
                )
    except tree_walk.TooManyEntries:
        raise ValueError(f"the task's outputs hold more than {MAX_ENTRIES} entries") from None
    return root


def host_view(path: str, in_image: bool) -> str:
    """`path` as the host names it: a task in its image names storage by its `/gcs/...` path
    (`task_containers.in_container_paths`), which maps back to the storage root."""
    fuse = storage.FUSE_ROOT + "/"
    if in_image and path.startswith(fuse):
        return os.path.join(os.path.abspath(storage.gcs_root()), path.removeprefix(fuse))
    return path


def custom_source(custom_path: str, root: Path, in_image: bool) -> Path:
    """The host path of an artifact's `custom_path`. A task in its image names it by its
    `/gcs/...` path, and it must be inside `root` (a `checked_root`): anything else is a host
    file the container never saw (ValueError). A task on this machine runs as the user and wrote
    the file itself, anywhere (KFP's `pipeline_with_artifact_custom_path` uses /tmp)."""
    path = Path(os.path.abspath(host_view(custom_path, in_image)))
    if in_image and not path.is_relative_to(root):
        raise ValueError(
            f"custom_path {custom_path!r} is outside the task's output folder {root}; an artifact "
            "the task writes elsewhere is not copied"
        )
    return path


def allowed_uris(executor_input: Any) -> dict[str, set[str]]:
    """The URIs the engine gave each output artifact (`executor_input.outputs.artifacts`: kfp's
    ExecutorInput, whose protobuf classes carry no types)."""
    artifacts = executor_input.outputs.artifacts
    return {name: {a.uri for a in listed.artifacts} for name, listed in artifacts.items()}


def _base_of(root: Path) -> Path:
    """Where a task's folder hangs from: the storage root when it is inside it, else `/`."""
    gcs = Path(os.path.abspath(storage.gcs_root()))
    return gcs if root.is_relative_to(gcs) else Path("/")


def _no_link_between(base: Path, root: Path) -> None:
    here = base
    for part in root.relative_to(base).parts:
        here = here / part
        if here.is_symlink():
            raise ValueError(f"{here} is a symbolic link; the task's output folder is refused")
