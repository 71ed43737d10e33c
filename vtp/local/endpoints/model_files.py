"""The deploy's look at the files a model's server will load: regular files inside the storage
root, by the storage API's rule.

The storage root is shared with replicas, tasks and users, so a model's folder may hold a
symbolic link where its weights should be (`model.pt -> /etc/...`, another user's file). The
storage API refuses a link that leads out of the root (`vtp.storage.path_under`, and a check of
what was opened); so does this, through `stored_files`, before a server starts: the deploy (or
batch prediction job) fails with FAILED_PRECONDITION naming the file. A link inside the root
that stays inside is followed, as the storage API follows it.

A server that loads a whole folder (a SavedModel's) has every file below it checked so, and no
folder below it may be a link (`check_model_tree`).

This is the early, clear refusal. The servers check again as they load
(`vtp.trainer.serve_files`: a checked private copy), since a link can be swapped in after the
deploy has looked.
"""

import os
import sys
from pathlib import Path

from vtp.local.base import errors, stored_files
from vtp.storage import path_under

ANY_SIZE = sys.maxsize
"""The deploy only looks at the file; its size is the server's to handle."""
MAX_TREE_FILES = 10_000
"""The most files a model folder loaded whole (a SavedModel) may hold."""


def model_file_exists(storage_root: Path, artifact_uri: str, name: str, where: str) -> bool:
    """Whether `artifact_uri`/`name` is a regular file inside the storage root (False when
    there is none, or it is a folder); FAILED_PRECONDITION naming it, after `where`, when it is
    a link leading out of the root, a FIFO, a socket or a device."""
    uri = f"{artifact_uri.rstrip('/')}/{name}"
    try:
        path = path_under(storage_root, uri)
        with stored_files.opened(storage_root, path, ANY_SIZE, uri):
            return True
    except stored_files.StoredFileError as exc:
        if exc.missing:
            return False
        raise refused(where, str(exc)) from None
    except ValueError as exc:  # path_under: a link on the way out of the root
        raise refused(where, str(exc)) from None


def check_model_files(
    storage_root: Path, artifact_uri: str, names: tuple[str, ...], where: str
) -> None:
    """FAILED_PRECONDITION unless each of `names` under `artifact_uri` that exists is a regular
    file inside the storage root (a missing one is the server's to report)."""
    for name in names:
        model_file_exists(storage_root, artifact_uri, name, where)


def check_model_tree(storage_root: Path, artifact_uri: str, where: str) -> None:
    """FAILED_PRECONDITION, naming the file, unless every file below `artifact_uri` (a model
    folder its server loads whole: a SavedModel's) is a regular file inside the storage root,
    no folder below it is a link, and it holds at most MAX_TREE_FILES files."""
    try:
        top = path_under(storage_root, artifact_uri)
    except ValueError as exc:
        raise refused(where, str(exc)) from None
    base, count = artifact_uri.rstrip("/"), 0
    for folder, folders, files in os.walk(top):
        relative = Path(folder).relative_to(top)
        for name in folders:
            if (Path(folder) / name).is_symlink():
                uri = f"{base}/{(relative / name).as_posix()}"
                raise refused(where, f"{uri} is a link to a folder")
        for name in files:
            count += 1
            if count > MAX_TREE_FILES:
                raise refused(where, f"{base} holds more than {MAX_TREE_FILES} files")
            model_file_exists(storage_root, base, (relative / name).as_posix(), where)


def refused(where: str, problem: str) -> errors.ApiError:
    """The deploy's refusal of a model file, saying why it is not read."""
    return errors.failed_precondition(
        f"{where} cannot be served: {problem}. A model server loads only regular files inside "
        "the local storage root, as the storage API serves them: store the file itself there."
    )
