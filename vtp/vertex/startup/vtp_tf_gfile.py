"""TensorFlow's `tf.io.gfile` on `gs://` paths, made to reach the local storage root.

TensorFlow's Cloud Storage filesystem is C++ with Google's endpoint compiled in
(`https://www.googleapis.com/storage/v1/`): unlike the Python clients it takes no emulator host,
so under the local service a program's `tf.io.gfile.GFile("gs://...")` would go to the internet.
Locally every bucket is a folder of the storage root (`$VTP_GCS_ROOT`) and every object the file
`$VTP_GCS_ROOT/B/P`, which the service's Cloud Storage API serves as that object at once (and the
other way round), as Vertex's `/gcs/` mount does. So the start-up hook (`sitecustomize.py`)
gives `tensorflow.python.lib.io.file_io`, the Python layer under all of `tf.io.gfile`, a
`_pywrap_file_io` whose functions take `gs://B/P` as that file:

- `GFile` (read, write, append, seek, readline), `exists`, `isdir`, `stat`, `listdir`, `walk`,
  `glob` (its matches come back as `gs://` paths), `makedirs`, `mkdir`, `copy`, `rename`,
  `remove`, `rmtree`;
- writing `gs://B/a/b/c` needs only the bucket: the folders `a/b` are made, since Cloud Storage
  has none to make, and removing (or renaming) the last file of a folder removes the folder;
- a name with an empty, `.` or `..` segment is InvalidArgumentError, and a path whose links
  lead out of the root PermissionDeniedError (as the service's API refuses them); TensorFlow's
  own errors name the `gs://` path, not the local file.

What this does not reach: TensorFlow's ops that open files in C++ without `file_io` (the
`tf.data` readers, the variables of a SavedModel or checkpoint): given a `gs://` path they still
go to Cloud Storage's endpoint. Give them `$VTP_GCS_ROOT/B/P` locally (`/gcs/B/P` on Vertex).

Standard library only, loaded by the hook from its own folder, never imported by `vtp`. Its
frames are left out of an uncaught exception's traceback, as the hook's own are.
"""

import os
from collections.abc import Callable
from types import ModuleType
from typing import Any

SCHEME = "gs://"


class Paths:
    """`gs://B/P` <-> `<root>/B/P`, checked."""

    def __init__(self, root: str, errors: Any) -> None:
        self.root = os.path.realpath(root)
        self._errors = errors

    def local(self, path: Any) -> Any:
        """The file for `path` (`str` or `bytes`, returned as it came); other paths unchanged."""
        as_bytes = isinstance(path, bytes)
        text = os.fsdecode(path) if isinstance(path, bytes | os.PathLike) else path
        if not isinstance(text, str) or not text.startswith(SCHEME):
            return path
        bucket, _, name = text[len(SCHEME) :].partition("/")
        segments = name.rstrip("/").split("/") if name.rstrip("/") else []
        if bucket in ("", ".", "..") or any(s in ("", ".", "..") for s in segments):
            raise self._errors.InvalidArgumentError(
                None, None, f"{text}: a Cloud Storage path has no empty, '.' or '..' segment"
            )
        local = os.path.join(self.root, bucket, *segments)
        real = os.path.realpath(local)
        if real != self.root and not real.startswith(self.root + os.sep):
            raise self._errors.PermissionDeniedError(
                None, None, f"{text}: a link leads out of the local storage root"
            )
        return os.fsencode(local) if as_bytes else local

    def remote(self, text: str) -> str:
        """`text` with every local file of the root named by its `gs://` path."""
        return text.replace(self.root + os.sep, SCHEME)

    def make_parents(self, local: Any) -> None:
        """Make the folders above the file `local` inside an existing bucket (Cloud Storage
        writes `B/a/b/c` with no folder to make); a missing bucket stays missing."""
        relative = os.path.relpath(os.fsdecode(local), self.root)
        bucket = os.path.join(self.root, relative.split(os.sep)[0])
        if os.sep in relative and os.path.isdir(bucket):
            os.makedirs(os.path.dirname(os.fsdecode(local)), exist_ok=True)

    def prune(self, local: Any) -> None:
        """Remove the folders above the removed file `local` that it left empty, up to its
        bucket: Cloud Storage has no folder once its last object is gone."""
        folder = os.path.dirname(os.fsdecode(local))
        while os.path.dirname(folder) != self.root and folder.startswith(self.root + os.sep):
            try:
                os.rmdir(folder)
            except OSError:  # not empty (or gone): what is above it is not empty either
                return
            folder = os.path.dirname(folder)


class LocalFileIO:
    """`_pywrap_file_io` as `file_io` calls it, with `gs://` paths taken as files of the root."""

    _ONE_PATH = (
        "BufferedInputStream", "CreateDir", "DeleteRecursively", "FileExists",
        "GetChildren", "HasAtomicMove", "IsDirectory", "ReadFileToString",
        "RecursivelyCreateDir", "Stat",
    )  # fmt: skip

    def __init__(self, wrapped: ModuleType, paths: Paths, op_error: type[Exception]) -> None:
        self._wrapped = wrapped
        self._paths = paths
        self._op_error = op_error
        for name in self._ONE_PATH:
            setattr(self, name, self._translated(getattr(wrapped, name), 1))
        self.CopyFile = self._translated(wrapped.CopyFile, 2, writes=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)

    def WritableFile(self, filename: Any, mode: Any, *rest: Any) -> Any:
        local = self._paths.local(filename)
        if local is not filename:
            self._paths.make_parents(local)
        return self._call(self._wrapped.WritableFile, local, mode, *rest)

    def WriteStringToFile(self, filename: Any, *rest: Any) -> Any:
        local = self._paths.local(filename)
        if local is not filename:
            self._paths.make_parents(local)
        return self._call(self._wrapped.WriteStringToFile, local, *rest)

    def DeleteFile(self, filename: Any, *rest: Any) -> Any:
        local = self._paths.local(filename)
        self._call(self._wrapped.DeleteFile, local, *rest)
        if local is not filename:
            self._paths.prune(local)

    def RenameFile(self, src: Any, target: Any, *rest: Any) -> Any:
        local_src, local_target = self._paths.local(src), self._paths.local(target)
        if local_target is not target:
            self._paths.make_parents(local_target)
        self._call(self._wrapped.RenameFile, local_src, local_target, *rest)
        if local_src is not src:
            self._paths.prune(local_src)

    def GetMatchingFiles(self, pattern: Any, *rest: Any) -> list[Any]:
        local = self._paths.local(pattern)
        found = self._call(self._wrapped.GetMatchingFiles, local, *rest)
        if local is pattern:
            return found
        return [self._paths.remote(os.fsdecode(name)) for name in found]

    def _translated(self, function: Callable[..., Any], count: int, writes: bool = False) -> Any:
        def call(*args: Any) -> Any:
            paths = [self._paths.local(a) for a in args[:count]]
            if writes and paths[-1] is not args[count - 1]:
                self._paths.make_parents(paths[-1])
            return self._call(function, *paths, *args[count:])

        return call

    def _call(self, function: Callable[..., Any], *args: Any) -> Any:
        try:
            return function(*args)
        except self._op_error as exc:
            message = self._paths.remote(exc.message)  # type: ignore[attr-defined]
            if message == exc.message:  # type: ignore[attr-defined]
                raise
            raise type(exc)(exc.node_def, exc.op, message) from None  # type: ignore[attr-defined]


def patch(file_io: ModuleType, root: str) -> None:
    """Give `tensorflow.python.lib.io.file_io` the `_pywrap_file_io` that reaches `root`."""
    errors = file_io.errors
    paths = Paths(root, errors)
    wrapped = file_io._pywrap_file_io
    vars(file_io)["_pywrap_file_io"] = LocalFileIO(wrapped, paths, errors.OpError)
