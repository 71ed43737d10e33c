"""`vtp.engine.tree_walk`, the one walk over trees that jobs made (issue #49): no depth costs a
Python frame, what is past its bounds is named, and no link is ever followed."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from vtp.engine import tree_walk


def deep_tree(top: Path, depth: int, leaf: str = "leaf.txt") -> None:
    """`top/d/d/.../d/leaf` `depth` folders down (no leaf when ""), made as a replica can: through
    open folders, so no path is ever longer than one name."""
    top.mkdir(parents=True, exist_ok=True)
    here = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=here)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=here)
            os.close(here)
            here = below
        if leaf:
            os.close(os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=here))
    finally:
        os.close(here)


def remove_deep(top: Path) -> None:
    """Remove `top` however deep it goes: pytest's own clean-up of its temporary folders is
    `shutil.rmtree`, which stops with RecursionError on these trees. Each folder's entries move
    up into `top` before the folder goes, so no path is ever more than two names below it."""
    moved = 0
    while entries := _listed(top):
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
                continue
            for inner in _listed(Path(entry.path)):
                moved += 1
                os.rename(inner.path, top / f".up{moved}")
            os.rmdir(entry.path)
    if top.is_dir():
        top.rmdir()


def _listed(folder: Path) -> list[os.DirEntry[str]]:
    if not folder.is_dir():
        return []
    with os.scandir(folder) as entries:
        return list(entries)


class DeepTrees:
    """`deep_trees.make(top, depth)`: deep trees, each removed (`remove_deep`) after the test."""

    def __init__(self) -> None:
        self.made: list[Path] = []

    def make(self, top: Path, depth: int, leaf: str = "leaf.txt") -> Path:
        deep_tree(top, depth, leaf)
        return self.remove_later(top)

    def remove_later(self, top: Path) -> Path:
        """Remove `top` (a tree a replica made) after the test."""
        self.made.append(top)
        return top


@pytest.fixture
def deep_trees() -> Iterator[DeepTrees]:
    trees = DeepTrees()
    yield trees
    for top in trees.made:
        remove_deep(top)


def test_a_tree_thousands_deep_is_walked_to_the_bound_without_recursion(
    tmp_path: Path, deep_trees: DeepTrees
) -> None:
    deep_trees.make(tmp_path / "t", 3_000)  # os.walk, rglob and rmtree stop near 1,000 (3.11)
    walk = tree_walk.Walk(tmp_path / "t", max_depth=1_500, max_entries=10_000)
    entries = list(walk)
    assert len(entries) == 1_500 and max(e.depth for e in entries) == 1_500
    assert walk.too_deep == os.path.join(tmp_path / "t", *["d"] * 1_500)


def test_entries_past_the_limit_are_refused_naming_it(tmp_path: Path) -> None:
    for index in range(11):
        (tmp_path / str(index)).touch()
    with pytest.raises(tree_walk.TooManyEntries, match="more than 10 entries") as caught:
        list(tree_walk.Walk(tmp_path, 5, 10))
    assert caught.value.limit == 10
    assert len(list(tree_walk.Walk(tmp_path, 5, 11))) == 11


def test_links_are_met_never_followed_and_callers_prune(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").touch()
    (tmp_path / "t" / "kept" / "pruned").mkdir(parents=True)
    (tmp_path / "t" / "kept" / "pruned" / "never-seen").touch()
    (tmp_path / "t" / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    walk = tree_walk.Walk(tmp_path / "t", 10, 100, enter=lambda e: not e.path.endswith("pruned"))
    found = {os.path.relpath(e.path, tmp_path / "t"): e.is_dir for e in walk}
    assert found == {"kept": True, "kept/pruned": True, "link": False}
    assert walk.too_deep == ""


def test_an_unreadable_folder_is_skipped_unless_asked(tmp_path: Path) -> None:
    assert list(tree_walk.Walk(tmp_path / "gone", 5, 10)) == []
    with pytest.raises(FileNotFoundError):
        list(tree_walk.Walk(tmp_path / "gone", 5, 10, skip_unreadable=False))
