"""The files a model server loads, copied first into a folder of its own, each checked as the
storage API checks what it serves.

The storage root is shared with replicas, tasks and users, any of whom can leave a symbolic link
where a model's file should be (`gs://b/model/model.pt -> /etc/...`, or another user's file).
The storage API refuses such a link (`vtp.storage.path_under`, then a check of what it opened:
`Buckets.reading`); a server that read the folder in place would follow it. So before anything
loads, each file a server reads is

- opened by its real path without waiting (`O_NONBLOCK`: a FIFO) or following a last link
  (`O_NOFOLLOW`), then checked by what was opened: a regular file whose real path
  (`/proc/self/fd`) is inside the storage root. A link that stays inside the root is followed,
  as the storage API follows it; one that leads out is refused, naming the file;
- copied through that descriptor into a new folder of the server's own (`tempfile.mkdtemp`,
  mode 0700), which is what the model is loaded from, removed once the model is in memory.

Why a copy, not a check and then a load in place: the loaders (`torch.load`,
`xgboost.Booster.load_model`, `joblib.load`) open the name again, so a link swapped in after the
check would be followed. Vertex, too, serves a copy of the model's artifactUri.
"""

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from vtp import storage

_CHUNK = 1 << 20


class UnsafeModelFile(ValueError):
    """A model file the server must not load: missing, not a regular file, or a link that leads
    out of the storage root. The message names the file."""


def storage_root_for(uri: str, directory: Path) -> Path:
    """The folder every file of the model at `uri` (found at `directory`) must really be in: the
    storage root for a `gs://` URI mapped there, else the model's own folder (a local path, or a
    copy downloaded from Cloud Storage)."""
    root = storage.gcs_root()
    if storage.is_gcs_uri(uri) and storage.is_inside(root, directory):
        return root
    return directory


@contextlib.contextmanager
def private_copy(directory: Path, names: Sequence[str], root: Path, uri: str) -> Iterator[Path]:
    """A new private folder holding a checked copy of each of `names` of `directory`, removed on
    exit; UnsafeModelFile (naming `uri`/name) for a file that is missing or may not be read."""
    folder = Path(tempfile.mkdtemp(prefix="vtp-model-"))
    try:
        for name in names:
            copy_checked(root, directory / name, folder / name, f"{uri.rstrip('/')}/{name}")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def copy_checked(root: Path, source: Path, target: Path, what: str) -> None:
    """Copy `source` to the new file `target` (mode 0600) through one descriptor checked by
    `open_checked`: what is copied is what was checked, whatever is swapped in meanwhile."""
    descriptor = open_checked(root, source, what)
    with open(descriptor, "rb") as reader:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with open(os.open(target, flags, 0o600), "wb") as writer:
            shutil.copyfileobj(reader, writer, _CHUNK)


def open_checked(root: Path, path: Path, what: str) -> int:
    """A blocking descriptor of `path` open for reading, once what it opened is known to be a
    regular file inside `root` (links resolved); UnsafeModelFile naming `what` otherwise."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(os.path.realpath(path), flags)
    except (FileNotFoundError, NotADirectoryError):
        raise UnsafeModelFile(f"{what} does not exist") from None
    except OSError as exc:
        raise UnsafeModelFile(f"{what} cannot be read: {exc.strerror}") from None
    try:
        problem = _problem(root, descriptor, path)
    except BaseException:
        os.close(descriptor)
        raise
    if problem:
        os.close(descriptor)
        raise UnsafeModelFile(
            f"{what} ({path}) {problem}: a model server loads only regular files inside the "
            "storage root, as the storage API serves them"
        )
    os.set_blocking(descriptor, True)
    return descriptor


def _problem(root: Path, descriptor: int, path: Path) -> str:
    """Why the file open at `descriptor` may not be loaded ("" when it may)."""
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        return "is not a regular file (a folder, FIFO, socket or device)"
    try:
        real = os.readlink(f"/proc/self/fd/{descriptor}")
    except OSError:  # no /proc (not Linux): the real path by name, as `path_under` checks
        real = os.path.realpath(path)
    if not storage.real_is_inside(os.path.realpath(root), real):
        return f"leads out of the storage root {root} through a symbolic link"
    return ""
