"""Reading sharded (torch.distributed.checkpoint) checkpoints without running anything in them.

DCP's `FileSystemReader` unpickles a checkpoint's `.metadata` with plain `pickle`, and its load
planners read each non-tensor entry (an optimizer's step count, a learning rate) with
`torch.load(weights_only=False)`: whoever can write a checkpoint directory could run code in
every process that resumes, evaluates or exports from it. Checkpoints are artifacts, and
artifacts are untrusted, so the trainer reads the same files through these instead:

- `SafeReader` unpickles `.metadata` building only DCP's own metadata classes, torch sizes,
  dtypes and layouts, and paths; anything else in it is refused (`UnpicklingError`);
- every file `.metadata` names (`_StorageInfo.relative_path`) must be a regular file inside the
  checkpoint folder: a path that is absolute, has a `..` part, or resolves (through links)
  outside the folder is refused, and so is an offset or length outside the file it names, so
  a checkpoint cannot read any other torch-serialized file the user can read into the model;
- the planners read byte entries with `torch.load(weights_only=True)`, as `.pt` checkpoints are.

`load_in_place` fills a state dict shaped like the running model's (resuming, resharded or not);
`load_whole` reads every entry into this process, unsharded (evaluation, export). Both raise
`UnreadableCheckpoint` (a ValueError naming what failed) where DCP raises its
`CheckpointException`, which is a BaseException that `except Exception` would let through.
"""

import contextlib
import io
import os
import pickle
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint import metadata as dcp_metadata
from torch.distributed.checkpoint._traverse import set_element
from torch.distributed.checkpoint.api import CheckpointException
from torch.distributed.checkpoint.default_planner import (
    DefaultLoadPlanner,
    _EmptyStateDictLoadPlanner,
)
from torch.distributed.checkpoint.filesystem import FileSystemReader, _StorageInfo
from torch.distributed.checkpoint.planner import ReadItem
from torch.distributed.checkpoint.state_dict_loader import _load_state_dict

_ALLOWED: dict[str, frozenset[str]] = {
    "torch.distributed.checkpoint.metadata": frozenset(
        {
            "Metadata", "StorageMeta", "MetadataIndex", "TensorStorageMetadata",
            "BytesStorageMetadata", "ChunkStorageMetadata", "TensorProperties",
            "_MEM_FORMAT_ENCODING",
        }
    ),
    "torch.distributed.checkpoint.filesystem": frozenset({"_StorageInfo"}),
    "torch.serialization": frozenset({"_get_layout"}),
    "torch": frozenset({"Size"}),
    "pathlib": frozenset({"PosixPath", "PurePosixPath"}),
    "collections": frozenset({"OrderedDict"}),
}  # fmt: skip
"""What a DCP `.metadata` pickle may build: module -> names (and any `torch` dtype)."""


class _MetadataUnpickler(pickle.Unpickler):
    """An unpickler that builds only what DCP's metadata is made of."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "torch" and isinstance(getattr(torch, name, None), torch.dtype):
            return getattr(torch, name)
        if name in _ALLOWED.get(module, frozenset()):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"{module}.{name} is not part of a checkpoint's metadata: not loaded"
        )


def read_metadata(file: io.IOBase | BinaryIO) -> dcp_metadata.Metadata:
    """A `.metadata` file's Metadata; UnpicklingError for anything else in it."""
    metadata = _MetadataUnpickler(file).load()
    if not isinstance(metadata, dcp_metadata.Metadata):
        raise pickle.UnpicklingError(f"not a checkpoint's metadata: {type(metadata).__name__}")
    return metadata


class SafeReader(FileSystemReader):
    """DCP's file-system reader, with `.metadata` read by `read_metadata`."""

    def read_metadata(self, *args: Any, **kwargs: Any) -> dcp_metadata.Metadata:
        """The checkpoint's Metadata, read without running code (see the module docstring)."""
        with self.fs.create_stream(self._get_metadata_path(kwargs.get("rank")), "rb") as file:
            metadata = read_metadata(file)
        check_storage(metadata, Path(self.path))
        storage_meta = getattr(metadata, "storage_meta", None) or dcp_metadata.StorageMeta()
        storage_meta.load_id = self.load_id
        metadata.storage_meta = storage_meta
        return metadata


def check_storage(metadata: dcp_metadata.Metadata, folder: Path) -> None:
    """Refuse (`UnpicklingError`, naming the entry) any file `metadata` names outside `folder`,
    or any slice outside the file it names (see the module docstring)."""
    storage = metadata.storage_data
    if not isinstance(storage, dict):
        raise pickle.UnpicklingError("a checkpoint's metadata has no storage table")
    root = Path(os.path.realpath(folder))
    sizes: dict[str, int] = {}
    for index, info in storage.items():
        if not isinstance(info, _StorageInfo):
            raise pickle.UnpicklingError(f"storage entry {index}: not a file slice")
        name = info.relative_path
        where = f"storage entry {getattr(index, 'fqn', index)!s} ({name!r})"
        if name not in sizes:
            sizes[name] = _file_size(name, root, where)
        offset, length = info.offset, info.length
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (offset, length)):
            raise pickle.UnpicklingError(f"{where}: offset and length must be integers")
        if offset < 0 or length < 0 or offset + length > sizes[name]:
            raise pickle.UnpicklingError(
                f"{where}: bytes {offset}..{offset + length} are outside the file "
                f"({sizes[name]} bytes)"
            )


def _file_size(name: object, root: Path, where: str) -> int:
    """The size of the regular file `name` (relative, no `..`) inside `root`."""
    if not isinstance(name, str) or not name or "\0" in name or "\\" in name:
        raise pickle.UnpicklingError(f"{where}: not a file name")
    parts = PurePosixPath(name)
    if parts.is_absolute() or ".." in parts.parts:
        raise pickle.UnpicklingError(f"{where}: a path outside the checkpoint folder")
    real = Path(os.path.realpath(root / parts))
    if not real.is_relative_to(root) or real == root:
        raise pickle.UnpicklingError(f"{where}: resolves outside the checkpoint folder")
    try:
        info = os.stat(real)
    except OSError as exc:
        raise pickle.UnpicklingError(f"{where}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise pickle.UnpicklingError(f"{where}: not a regular file")
    return info.st_size


class SafeLoadPlanner(DefaultLoadPlanner):
    """DCP's default planner, with byte entries read by `torch.load(weights_only=True)`."""

    def load_bytes(self, read_item: ReadItem, value: io.BytesIO) -> None:
        """Put the entry `read_item` names into the state dict, loaded as plain data."""
        loaded = torch.load(value, weights_only=True)
        if self.flatten_state_dict:  # back into the nested state dict, as its parent does
            set_element(self.original_state_dict, self.mappings[read_item.dest_index.fqn], loaded)
        else:
            self.state_dict[read_item.dest_index.fqn] = loaded


class _SafeWholeLoadPlanner(_EmptyStateDictLoadPlanner):
    """DCP's planner for reading a whole checkpoint into an empty dict, byte entries safe."""

    load_bytes = SafeLoadPlanner.load_bytes


class UnreadableCheckpoint(ValueError):
    """A sharded checkpoint that could not be read (refused, damaged or missing parts)."""


def load_in_place(state_dict: dict[str, Any], directory: str | os.PathLike[str]) -> None:
    """Fill `state_dict` (the running model's and optimizer's, sharded as this run is) from the
    checkpoint in `directory`, each process reading the parts its shards cover."""
    with _readable(directory):
        dcp.load(state_dict, storage_reader=SafeReader(directory), planner=SafeLoadPlanner())


def load_whole(directory: str | os.PathLike[str]) -> dict[str, Any]:
    """Every entry of the checkpoint in `directory`, unsharded, in this process alone."""
    whole: dict[str, Any] = {}
    with _readable(directory):
        _load_state_dict(
            state_dict=whole,
            storage_reader=SafeReader(directory),
            no_dist=True,
            planner=_SafeWholeLoadPlanner(),
        )
    return whole


@contextlib.contextmanager
def _readable(directory: str | os.PathLike[str]) -> Iterator[None]:
    try:
        yield
    except CheckpointException as exc:
        why = "; ".join(str(error) for error, _ in exc.failures.values()) or str(exc)
        raise UnreadableCheckpoint(f"{directory}: {why}") from None
