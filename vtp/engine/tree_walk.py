"""Walking a folder tree someone else made: iterative, bounded, never through a link.

Replicas, pipeline tasks and containers write the storage root (and their own folders in the
state directory) as they like, so a tree the service walks there may be thousands of folders
deep or hold millions of entries. Python's own walks recurse once per folder (`os.walk` before
3.12, `Path.rglob`, `shutil.rmtree`) and stop with `RecursionError` about a thousand folders
down, which became a service that would not start and listings that answered 500. Every walk
the service makes over such a tree goes through `Walk` instead:

- it keeps its own stack, so no depth costs a Python frame;
- it enters a folder only while that folder is shallower than `max_depth`, and says which was
  the first one it left unentered (`too_deep`), so the caller can report it or refuse;
- it counts what it meets and raises `TooManyEntries` past `max_entries`: the caller turns that
  into its refusal naming the limit;
- it never follows a link to a folder (a link is met as an entry, like a file);
- a folder it cannot read (removed meanwhile, no permission) is skipped, unless the caller
  asks for the OSError (`skip_unreadable=False`: a check that must see everything).

Removing such a tree is `remove_tree`, never `shutil.rmtree` (whose RecursionError even
`ignore_errors=True` lets through: a job's delete answered 500, a replica's restart crashed).
It goes down through open folders, by names relative to them, so no path it uses is longer than
one name, however deep the tree is.
"""

import errno
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass


class TooManyEntries(ValueError):
    """The tree holds more entries than the walk may meet; `limit` is that number."""

    def __init__(self, root: str, limit: int) -> None:
        super().__init__(f"{root} holds more than {limit} entries")
        self.limit = limit


@dataclass(frozen=True)
class Entry:
    """One file, link or folder met by a walk."""

    path: str
    """Its path: the walk's root joined with the names down to it."""
    depth: int
    """1 for an entry of the root itself, 2 for one inside such a folder, and so on."""
    is_dir: bool
    """A real folder (a link to one is not)."""


class Walk:
    """`for entry in Walk(root, max_depth, max_entries):` every entry under `root`, depth first,
    in no particular order; `too_deep` afterwards names the first folder it did not enter."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        max_depth: int,
        max_entries: int,
        enter: Callable[[Entry], bool] | None = None,
        skip_unreadable: bool = True,
    ) -> None:
        """`enter`: whether to go into a folder the depth allows (a caller's own pruning: a
        folder of another user's, one no object name could reach); it is asked once the caller
        has had the folder's entry, so it may decide by what the caller did with it."""
        self.root = os.fspath(root)
        self.max_depth = max_depth
        self.max_entries = max_entries
        self._enter = enter
        self._skip_unreadable = skip_unreadable
        self.too_deep = ""
        """The first folder left unentered because it is `max_depth` deep ("" when none)."""
        self.seen = 0
        """Entries met so far."""

    def __iter__(self) -> Iterator[Entry]:
        """Depth first from a stack of (folder, depth) of its own: nothing recurses."""
        stack = [(self.root, 0)]
        while stack:
            folder, depth = stack.pop()
            for entry in self._entries(folder, depth + 1):
                yield entry
                if entry.is_dir and self._should_enter(entry):
                    stack.append((entry.path, entry.depth))

    def _entries(self, folder: str, depth: int) -> list[Entry]:
        """The entries of one folder, read whole (so no descriptor stays open across levels);
        none when it cannot be read."""
        found = []
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    self.seen += 1
                    if self.seen > self.max_entries:
                        raise TooManyEntries(self.root, self.max_entries)
                    found.append(Entry(entry.path, depth, _is_real_dir(entry)))
        except OSError:
            if not self._skip_unreadable:
                raise
        return found

    def _should_enter(self, entry: Entry) -> bool:
        """Whether to go into folder `entry`: the depth bound first (noting the first folder it
        stops), then the caller's `enter`."""
        if entry.depth >= self.max_depth:
            self.too_deep = self.too_deep or entry.path
            return False
        return self._enter is None or self._enter(entry)


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    """A folder, not a link to one; False when it vanished meanwhile (there is nothing to enter)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


HELD_FOLDERS = 32
"""Folders `remove_tree` holds open at most (besides the top), however deep the tree is: the
service's other threads need descriptors too. A folder above those is reopened through its
child's `..` on the way back up, and must be the very folder it left (device and inode)."""

_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""Open a folder, never a link to one (ELOOP or ENOTDIR then)."""

_NOT_A_FOLDER = (errno.ENOTDIR, errno.ELOOP)


def remove_tree(path: str | os.PathLike[str], ignore_errors: bool = False) -> None:
    """Remove `path` and all below it, bottom up, as `shutil.rmtree` would but without recursion
    and at any depth. A link (`path` itself, or anything in it) is removed, never followed; what
    disappears meanwhile is no error. It removes all it can, then raises the first OSError it met
    (a file it may not remove, a folder moved from under it) unless `ignore_errors`; nothing is
    ever removed outside the tree: a folder moved away mid-way stops the removal there."""
    removal = _Removal()
    removal.run(os.fspath(path))
    if removal.error is not None and not ignore_errors:
        raise removal.error


@dataclass
class _Level:
    """A folder `_Removal` is inside: its descriptor, and its subfolders still to remove."""

    fd: int
    """-1 while closed (more than HELD_FOLDERS above the current folder)."""
    name: str
    """Its name in the folder above (the whole path for the top)."""
    identity: tuple[int, int]
    """(st_dev, st_ino): what a reopened `..` must be."""
    subfolders: list[str]


class _Removal:
    """One `remove_tree`: a stack of `_Level`s, one per folder from the top down to the
    current one; each step enters one subfolder or removes the emptied current folder."""

    def __init__(self) -> None:
        self.levels: list[_Level] = []
        self.error: OSError | None = None
        """The first OSError met."""

    def run(self, path: str) -> None:
        """Remove `path` (a folder, a file or a link); errors noted, never raised."""
        try:
            top = os.open(path, _FOLDER_FLAGS)
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno in _NOT_A_FOLDER:
                self._remove(os.unlink, path, None)
            else:
                self._note(exc)
            return
        try:
            self._enter(top, path)
            while self.levels:
                self._step()
        except OSError as exc:  # a folder moved away, or fstat failing: stop where it is
            self._note(exc)
        finally:
            for level in self.levels:
                _close(level)

    def _step(self) -> None:
        level = self.levels[-1]
        if level.subfolders:
            name = level.subfolders.pop()
            below = self._open_below(level.fd, name)
            if below >= 0:
                self._enter(below, name)
            return
        self.levels.pop()
        try:
            above = self._reopened_above(level) if self.levels else None
        finally:
            _close(level)
        self._remove(os.rmdir, level.name, above)

    def _enter(self, fd: int, name: str) -> None:
        """Go into the open folder `fd`: remove its files and links, note its subfolders, and
        close the folder HELD_FOLDERS above (the top stays open)."""
        try:
            found = os.fstat(fd)
        except OSError:
            os.close(fd)
            raise
        level = _Level(fd, name, (found.st_dev, found.st_ino), [])
        self.levels.append(level)
        level.subfolders = self._cleared(fd)
        if len(self.levels) > HELD_FOLDERS + 1:
            _close(self.levels[-HELD_FOLDERS - 1])

    def _cleared(self, fd: int) -> list[str]:
        """The names of the subfolders of `fd`, once its other entries are removed. Read whole
        first: a folder changed while it is read may skip entries."""
        try:
            with os.scandir(fd) as listing:
                entries = list(listing)
        except OSError as exc:
            self._note(exc)
            return []
        subfolders = []
        for entry in entries:
            if _is_real_dir(entry):
                subfolders.append(entry.name)
            else:
                self._remove(os.unlink, entry.name, fd)
        return subfolders

    def _open_below(self, fd: int, name: str) -> int:
        """Subfolder `name` of `fd` opened, or -1: gone, or no folder any more (then removed
        as the file or link it now is)."""
        try:
            return os.open(name, _FOLDER_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            return -1
        except OSError as exc:
            if exc.errno in _NOT_A_FOLDER:
                self._remove(os.unlink, name, fd)
            else:
                self._note(exc)
            return -1

    def _reopened_above(self, level: _Level) -> int:
        """The descriptor of the folder above `level`, reopened through `level`'s `..` when it
        was closed; OSError when that is not the folder it was (moved: nothing above it is
        this tree's to remove any more)."""
        above = self.levels[-1]
        if above.fd >= 0:
            return above.fd
        fd = os.open("..", _FOLDER_FLAGS, dir_fd=level.fd)
        found = os.fstat(fd)
        if (found.st_dev, found.st_ino) != above.identity:
            os.close(fd)
            raise OSError(errno.ESTALE, "a folder was moved while it was being removed", above.name)
        above.fd = fd
        return fd

    def _remove(self, remove: Callable[..., None], name: str, fd: int | None) -> None:
        """`remove` (os.unlink or os.rmdir) `name` in folder `fd`; one already gone is fine."""
        try:
            remove(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._note(exc)

    def _note(self, exc: OSError) -> None:
        self.error = self.error or exc


def _close(level: _Level) -> None:
    if level.fd >= 0:
        os.close(level.fd)
        level.fd = -1
