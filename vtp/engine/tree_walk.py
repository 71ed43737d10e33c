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
"""

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
