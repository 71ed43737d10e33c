"""Checkpoints that cannot lose work: atomic, verified on load, pruned, written in the background.

A checkpoint directory holds, per saved step:

    step_00000100.pt     the training state (torch.save; loaded with weights_only=True)
    step_00000100.json   its manifest: step, epoch, size and sha256 of the .pt file

Each file is written to a temporary name, fsync'ed and renamed; the manifest goes last, so a
checkpoint exists only once it is complete, and a .pt file without a manifest is ignored. Loading
checks size and sha256, so a truncated or corrupt newest checkpoint is skipped (with a warning)
in favour of the one before it.

Sharded checkpoints (`--strategy=fsdp`, vtp.trainer.fsdp) keep the same rules with a directory in
place of the .pt file:

    step_00000100/       torch.distributed.checkpoint: .metadata, one __<rank>_0.distcp per
                         process, and trainer.pt (scheduler, RNG states, step, config)
    step_00000100.json   its manifest: "format": "dcp", size and sha256 of every file

Such a checkpoint is named by its manifest (`CheckpointInfo.path` is the .json file), and
`read_state` of it returns the whole model in one process, as for a .pt file.

What the trainer saves is a `TrainingState` (model, optimizer and scheduler state dicts, step,
epoch, random generator states, config): `train.py` writes it, and `train.py`, `evaluate.py` and
`export.py` read it back with `read_state` / `latest_state`, never by key.

API for other packages: `list_checkpoints(dir)` (newest first, from manifests only),
`read_state(path)` (verified), `latest_state(dir)`; `load_checkpoint` and `load_latest` return
any saved dict; `vtp.trainer.evaluate.evaluate_checkpoint` builds the model and evaluates one.
"""

import hashlib
import io
import json
import logging
import os
import random
import shutil
import time
import warnings
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from vtp import storage
from vtp.trainer.snapshot import Copies, Deferred, Staging

log = logging.getLogger("trainer")

_PREFIX, _DATA, _MANIFEST = "step_", ".pt", ".json"
_CHUNK = 8 << 20
SHARDED = "dcp"
"""The manifest `format` of a sharded checkpoint (a torch.distributed.checkpoint directory)."""
TRAINER_FILE = "trainer.pt"
"""What a sharded checkpoint holds besides model and optimizer: written by the main process."""


class CorruptCheckpoint(Exception):
    """A checkpoint whose data does not match its manifest, or cannot be read."""


@dataclass(frozen=True)
class TrainingState:
    """Everything a run needs to continue bit for bit: what one checkpoint holds."""

    model: dict[str, Any]
    """The model's state_dict (the unwrapped module: no DDP or compile prefixes)."""
    optimizer: dict[str, Any]
    scheduler: dict[str, Any]
    step: int
    """Optimizer steps taken."""
    epoch: int
    rng: list[dict[str, Any]]
    """One `rng_state()` per process, in rank order."""
    config: dict[str, Any]
    """The `Config.to_dict()` of the run that saved it."""

    def to_dict(self) -> dict[str, Any]:
        """The dict `torch.save` writes (tensors shared, not copied)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_dict(cls, raw: object, source: object = "checkpoint") -> "TrainingState":
        """The state in a loaded checkpoint; CorruptCheckpoint when a part is missing."""
        fields = cls.__dataclass_fields__
        if not isinstance(raw, dict) or set(fields) - set(raw):
            missing = sorted(set(fields) - set(raw)) if isinstance(raw, dict) else list(fields)
            raise CorruptCheckpoint(f"{source}: not a training state (missing {missing})")
        return cls(**{name: raw[name] for name in fields})


@dataclass(frozen=True)
class Loaded:
    """A checkpoint whose model and optimizer state a run has loaded, whichever strategy wrote
    it: the rest of it, which `vtp.trainer.train.restore` applies the same way for both."""

    path: Path
    """What was read: the checkpoint file, or the sharded checkpoint's directory."""
    step: int
    scheduler: dict[str, Any]
    rng: list[dict[str, Any]]
    """One `rng_state()` per process of the run that saved it, in rank order."""
    config: dict[str, Any]
    """The `Config.to_dict()` of the run that saved it."""


@dataclass(frozen=True)
class CheckpointInfo:
    """A committed checkpoint, as its manifest describes it."""

    path: Path
    """The data file; for a sharded checkpoint, its manifest."""
    step: int
    epoch: int
    size: int
    sha256: str
    format: str = "torch"
    """"torch" (one torch.save file) or SHARDED."""


def checkpoint_path(directory: Path, step: int) -> Path:
    """The data file of the checkpoint at `step`."""
    return directory / f"{_PREFIX}{step:08d}{_DATA}"


def sharded_path(directory: Path, step: int) -> Path:
    """The directory of the sharded checkpoint at `step`."""
    return directory / f"{_PREFIX}{step:08d}"


def manifest_path(directory: Path, step: int) -> Path:
    """The manifest of the checkpoint at `step` (either format)."""
    return directory / f"{_PREFIX}{step:08d}{_MANIFEST}"


def list_checkpoints(directory: str | os.PathLike[str]) -> list[CheckpointInfo]:
    """Committed checkpoints in a directory or gs:// URI, newest (highest step) first."""
    directory = storage.local_path(directory)
    found = []
    for manifest in directory.glob(f"{_PREFIX}*{_MANIFEST}"):
        try:
            meta = read_manifest(manifest)
            sharded = meta.get("format") == SHARDED
            info = CheckpointInfo(
                path=manifest if sharded else manifest.with_suffix(_DATA),
                step=int(meta["step"]),
                epoch=int(meta["epoch"]),
                size=int(meta["bytes"]),
                sha256=str(meta["sha256"]),
                format=SHARDED if sharded else "torch",
            )
        except CorruptCheckpoint as exc:  # its message names the file
            log.warning("ignoring unreadable checkpoint manifest %s", exc)
            continue
        except (ValueError, TypeError, KeyError) as exc:
            log.warning("ignoring unreadable checkpoint manifest %s: %r", manifest, exc)
            continue
        found.append(info)
    return sorted(found, key=lambda info: info.step, reverse=True)


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The training state saved in a checkpoint file, after checking it against its manifest;
    for a sharded checkpoint (named by its manifest), the whole state gathered in this process."""
    path = storage.local_path(path)
    meta = read_manifest(path.with_suffix(_MANIFEST))
    if meta.get("format") == SHARDED:
        return _load_sharded(path.with_suffix(""), meta)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptCheckpoint(f"{path}: {exc}") from exc
    if len(data) != meta.get("bytes"):
        raise CorruptCheckpoint(f"{path}: {len(data)} bytes, manifest says {meta.get('bytes')}")
    if hashlib.sha256(data).hexdigest() != meta.get("sha256"):
        raise CorruptCheckpoint(f"{path}: sha256 does not match its manifest")
    try:
        return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # the unpickler refuses anything but tensors and plain data
        raise CorruptCheckpoint(f"{path}: cannot be loaded safely: {exc}") from exc


def verify_sharded(directory: Path, meta: dict[str, Any]) -> None:
    """Check every file of a sharded checkpoint against its manifest (CorruptCheckpoint if not)."""
    files = meta.get("files")
    if not isinstance(files, dict) or not files:
        raise CorruptCheckpoint(f"{directory}: the manifest lists no files")
    for name, expected in sorted(files.items()):
        path = directory / name
        try:
            found = _digest(path)
        except OSError as exc:
            raise CorruptCheckpoint(f"{path}: {exc}") from exc
        if found != expected:
            raise CorruptCheckpoint(f"{path}: {found['bytes']} bytes and sha256 do not match "
                                    "its manifest")  # fmt: skip


def read_trainer_file(directory: Path) -> dict[str, Any]:
    """The main process's part of a sharded checkpoint (loaded with weights_only=True)."""
    path = directory / TRAINER_FILE
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # the unpickler refuses anything but tensors and plain data
        raise CorruptCheckpoint(f"{path}: cannot be loaded safely: {exc}") from exc
    if not isinstance(loaded, dict):
        raise CorruptCheckpoint(f"{path}: not a dict")
    return loaded


def _load_sharded(directory: Path, meta: dict[str, Any]) -> dict[str, Any]:
    # Imported here: evaluation and export of .pt checkpoints never need it.
    from vtp.trainer.dcp_safe import load_whole

    verify_sharded(directory, meta)
    try:
        # Every tensor of every shard, unsharded, in this process (no process group needed,
        # which it warns about).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            full = load_whole(directory)
    except Exception as exc:
        raise CorruptCheckpoint(f"{directory}: cannot be loaded: {exc}") from exc
    return {**read_trainer_file(directory), "model": full["model"], "optimizer": full["optim"]}


def commit_sharded(staging: Path, directory: Path, step: int, epoch: int) -> Path:
    """Make the sharded checkpoint written in `staging` the checkpoint of `step`: hash its files,
    move it to its place and write its manifest last (what makes it exist). Returns the manifest."""
    files = {
        str(path.relative_to(staging)): _digest(path)
        for path in sorted(staging.rglob("*"))
        if path.is_file()
    }
    listing = "".join(f"{name} {d['bytes']} {d['sha256']}\n" for name, d in files.items())
    final, manifest = sharded_path(directory, step), manifest_path(directory, step)
    manifest.unlink(missing_ok=True)  # a checkpoint of the same step that was fallen back past
    shutil.rmtree(final, ignore_errors=True)
    os.replace(staging, final)
    meta = {
        "step": step,
        "epoch": epoch,
        "format": SHARDED,
        "bytes": sum(d["bytes"] for d in files.values()),
        "sha256": hashlib.sha256(listing.encode()).hexdigest(),
        "files": files,
        "created": time.time(),
    }
    atomic_write(manifest, json.dumps(meta, indent=1).encode())
    return manifest


def read_manifest(manifest: Path) -> dict[str, Any]:
    """A checkpoint's manifest as a dict; CorruptCheckpoint when it cannot be read."""
    try:
        meta = json.loads(manifest.read_text())
    except (OSError, ValueError) as exc:
        raise CorruptCheckpoint(f"{manifest}: {exc}") from exc
    if not isinstance(meta, dict):
        raise CorruptCheckpoint(
            f"{manifest}: a manifest is a JSON object, not {type(meta).__name__}"
        )
    return meta


def read_state(path: str | os.PathLike[str]) -> TrainingState:
    """The verified TrainingState saved in checkpoint file `path`."""
    return TrainingState.from_dict(load_checkpoint(path), path)


def load_latest(
    directory: str | os.PathLike[str],
    read: Callable[[Path], Any] = load_checkpoint,
) -> tuple[CheckpointInfo, Any] | None:
    """The newest checkpoint that `read` accepts and what it read, warning once about each
    newer one it refuses; None when there is none."""
    for info in list_checkpoints(directory):
        try:
            return info, read(info.path)
        except CorruptCheckpoint as exc:
            log.warning("skipping corrupt checkpoint (falling back to the one before): %s", exc)
    return None


def latest_state(directory: str | os.PathLike[str]) -> tuple[CheckpointInfo, TrainingState] | None:
    """The newest valid checkpoint in `directory` and its TrainingState; None when none is."""
    return load_latest(directory, read_state)


def atomic_write(path: Path, data: bytes | memoryview, sync_directory: bool = True) -> None:
    """Write a file so that readers see either nothing or all of it, durably.

    `sync_directory=False` leaves the rename's durability to a later write in the same
    directory that syncs it (a checkpoint's manifest does, for its data file).
    """
    atomic_fill(path, lambda temporary: temporary.write_bytes(data), sync_directory)


def atomic_fill(path: Path, fill: Callable[[Path], object], sync_directory: bool = True) -> None:
    """`atomic_write` of whatever `fill(temporary_path)` writes there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fill(temporary)
    with open(temporary, "rb+") as file:
        os.fsync(file.fileno())
    os.replace(temporary, path)
    if sync_directory:
        _sync_directory(path.parent)


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)  # makes renames into it durable
    except OSError:
        pass  # some mounts (Cloud Storage FUSE) cannot sync a directory; renames still hold
    finally:
        os.close(descriptor)


class Checkpointer:
    """Saves training states in the background, at most one write in flight. Only an enabled
    Checkpointer (the main process) writes anything.

    `save` stages the state (`vtp.trainer.snapshot`): what may change before the next optimizer
    step is copied at once, the rest (`deferred`: parameters, optimizer moments) on the
    checkpoint thread (on a GPU: on a CUDA stream of their own, beside the next step's
    kernels), which then serialises, hashes and writes. The training loop calls
    `before_update()` before each optimizer step; it returns at once unless that copy is still
    running (on a GPU it never blocks the host: the training stream waits for the copy).
    Serialising on the thread costs the training thread little: the tensors' bytes are
    most of it, and copying and hashing them release the GIL.
    """

    def __init__(self, directory: Path, keep: int, enabled: bool) -> None:
        self.directory = directory
        self.keep = keep
        self.enabled = enabled
        self.last_step: int | None = None
        self._executor = ThreadPoolExecutor(1, "checkpoint") if enabled else None
        self._pending: Future[None] | None = None
        self._copies: Copies | None = None
        self._staging = Staging()
        if enabled:  # temporaries of a writer that was killed mid-write
            for leftover in directory.glob(f".{_PREFIX}*.tmp"):
                if leftover.is_dir():  # a sharded checkpoint's staging directory
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
                    leftover.unlink(missing_ok=True)

    def save(
        self, state: dict[str, Any], step: int, epoch: int, deferred: Deferred = lambda _: False
    ) -> None:
        """Snapshot `state` as the checkpoint of `step` and write it in the background; the
        tensors `deferred` accepts must not change before `before_update()` returns."""
        self.last_step = step
        if self._executor is None:
            return
        self.wait()  # the previous write is done with the buffers
        snapshot, self._copies = self._staging.stage(state, deferred)
        self._pending = self._executor.submit(
            self._copy_and_write, snapshot, self._copies, step, epoch
        )

    def before_update(self) -> None:
        """Wait until the deferred tensors of the last `save` are copied (call before changing
        them: before the optimizer step)."""
        if self._copies is not None:
            self._copies.wait_on_device()
            self._copies.done.wait()
            self._copies = None

    def wait(self) -> None:
        """Block until the write in flight is on disk; re-raise its error if it failed."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def close(self) -> None:
        """Finish the write in flight and stop the writer thread."""
        self.wait()
        if self._executor is not None:
            self._executor.shutdown()

    def _copy_and_write(
        self, snapshot: dict[str, Any], copies: Copies, step: int, epoch: int
    ) -> None:
        copies.run()
        path = checkpoint_path(self.directory, step)
        written: dict[str, Any] = {}

        def fill(temporary: Path) -> None:
            # Saved to a path, torch's C++ writer holds no GIL while it writes the tensors;
            # into a BytesIO, every write would (a quarter second per 300 MB of the training
            # thread's time).
            torch.save(snapshot, temporary)
            written.update(_digest(temporary))

        # One directory sync, after the manifest: if a crash keeps the manifest but loses the
        # data file's rename, loading finds the mismatch and falls back to the previous one.
        atomic_fill(path, fill, sync_directory=False)
        manifest = {"step": step, "epoch": epoch, **written, "created": time.time()}
        atomic_write(path.with_suffix(_MANIFEST), json.dumps(manifest, indent=1).encode())
        self._prune(step)
        log.info("saved checkpoint %s", path)

    def _prune(self, saved_step: int) -> None:
        # Only checkpoints up to the one just saved count: a newer one can only be a corrupt
        # checkpoint that the run fell back past, and saving its step again replaces it.
        # Steps come from file names, so pruning reads no manifests.
        manifests = self.directory.glob(f"{_PREFIX}*{_MANIFEST}")
        steps = sorted((_step_of(m) for m in manifests), reverse=True)
        for step in [step for step in steps if 0 <= step <= saved_step][self.keep :]:
            path = checkpoint_path(self.directory, step)
            path.with_suffix(_MANIFEST).unlink(missing_ok=True)  # uncommit first
            path.unlink(missing_ok=True)
            shutil.rmtree(sharded_path(self.directory, step), ignore_errors=True)


def _digest(path: Path) -> dict[str, Any]:
    """A manifest's `bytes` and `sha256` of the file at `path` (read back from the page cache;
    hashing releases the GIL)."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return {"bytes": size, "sha256": digest.hexdigest()}


def _step_of(manifest: Path) -> int:
    digits = manifest.name[len(_PREFIX) : -len(_MANIFEST)]
    return int(digits) if digits.isdigit() else -1


def rng_state() -> dict[str, Any]:
    """This process's random number generator states, in a form `weights_only` loading accepts."""
    # numpy's stubs type a bare get_state() as the dict form; its default (legacy=True) gives the
    # tuple for the global MT19937 generator.
    state = np.random.get_state(legacy=True)
    assert isinstance(state, tuple)
    name, keys, position, has_gauss, gauss = state
    version, python_state, python_gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "numpy": {
            "name": name,
            "keys": torch.from_numpy(keys.astype(np.int64)),
            "pos": position,
            "has_gauss": has_gauss,
            "gauss": gauss,
        },
        "python": {"version": version, "state": torch.tensor(python_state), "gauss": python_gauss},
    }


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore states captured by `rng_state`."""
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    numpy = state["numpy"]
    keys = numpy["keys"].numpy().astype(np.uint32)
    np.random.set_state((numpy["name"], keys, numpy["pos"], numpy["has_gauss"], numpy["gauss"]))
    python = state["python"]
    random.setstate((python["version"], tuple(python["state"].tolist()), python["gauss"]))


def seed_everything(seed: int) -> None:
    """Seed torch (CPU and GPU), numpy and Python's random."""
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)
