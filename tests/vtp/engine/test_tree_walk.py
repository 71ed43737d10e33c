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


# -- remove_tree ------------------------------------------------------------------------------


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_tree_thousands_deep_is_removed_without_recursion(
    tmp_path: Path, deep_trees: DeepTrees
) -> None:
    top = deep_trees.make(tmp_path / "t", 3_000)  # paths past PATH_MAX (4,096) down there
    (top / "d" / "beside.txt").write_text("x")
    (top / "d" / "other" / "d").mkdir(parents=True)
    before = open_descriptors()
    tree_walk.remove_tree(top)  # shutil.rmtree: RecursionError, even with ignore_errors
    assert not top.exists() and os.listdir(tmp_path) == []
    assert open_descriptors() == before


def test_removal_holds_a_bounded_number_of_folders_open(
    tmp_path: Path, deep_trees: DeepTrees, monkeypatch: pytest.MonkeyPatch
) -> None:
    top = deep_trees.make(tmp_path / "t", 200)
    held, most = set(), 0
    real_open, real_close = os.open, os.close

    def counted_open(*args: object, **kwargs: object) -> int:
        nonlocal most
        fd = real_open(*args, **kwargs)  # type: ignore[arg-type]
        held.add(fd)
        most = max(most, len(held))
        return fd

    def counted_close(fd: int) -> None:
        held.discard(fd)
        real_close(fd)

    monkeypatch.setattr(tree_walk.os, "open", counted_open)
    monkeypatch.setattr(tree_walk.os, "close", counted_close)
    tree_walk.remove_tree(top)
    assert not top.exists() and not held
    assert most == tree_walk.HELD_FOLDERS + 2  # the top, the window, and one `..` reopened


def test_links_are_removed_never_followed(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "kept.txt").write_text("kept")
    (tmp_path / "t" / "a").mkdir(parents=True)
    (tmp_path / "t" / "a" / "to-folder").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "t" / "to-file").symlink_to(tmp_path / "outside" / "kept.txt")
    (tmp_path / "t" / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    tree_walk.remove_tree(tmp_path / "t")
    tree_walk.remove_tree(tmp_path / "link")  # the link itself goes, not what it leads to
    assert sorted(os.listdir(tmp_path)) == ["outside"]
    assert (tmp_path / "outside" / "kept.txt").read_text() == "kept"


def test_a_file_goes_and_what_is_gone_is_no_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    tree_walk.remove_tree(tmp_path / "file")
    tree_walk.remove_tree(tmp_path / "never-there")
    assert os.listdir(tmp_path) == []


def test_what_cannot_be_removed_is_raised_after_the_rest_unless_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / "t" / name).mkdir(parents=True)
        (tmp_path / "t" / name / "f").write_text("x")
    real_unlink = os.unlink

    def refusing(name: str, *, dir_fd: int | None = None) -> None:
        if dir_fd is not None and os.readlink(f"/proc/self/fd/{dir_fd}").endswith("/b"):
            raise PermissionError(1, "refused", name)
        real_unlink(name, dir_fd=dir_fd)

    monkeypatch.setattr(tree_walk.os, "unlink", refusing)
    with pytest.raises(PermissionError, match="refused"):
        tree_walk.remove_tree(tmp_path / "t")
    assert sorted(os.listdir(tmp_path / "t")) == ["b"]  # the others went all the same
    tree_walk.remove_tree(tmp_path / "t", ignore_errors=True)
    assert os.listdir(tmp_path / "t" / "b") == ["f"]


def test_a_folder_moved_away_mid_removal_stops_it_there(
    tmp_path: Path, deep_trees: DeepTrees, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above its open window the removal climbs back through `..`: a folder moved out of the
    tree meanwhile leads elsewhere, which it must not touch."""
    top = deep_trees.make(tmp_path / "t", tree_walk.HELD_FOLDERS + 5, leaf="")
    elsewhere = deep_trees.remove_later(tmp_path / "elsewhere")
    elsewhere.mkdir()
    (elsewhere / "theirs.txt").write_text("not the tree's")
    moved = False
    real_rmdir = os.rmdir

    def moving(name: str, *, dir_fd: int | None = None) -> None:
        """Once the deepest folder goes, move the shallowest one still open (6 deep: the five
        above it were closed) out of the tree."""
        nonlocal moved
        real_rmdir(name, dir_fd=dir_fd)
        if not moved:
            moved = True
            os.rename(os.path.join(top, *["d"] * 6), elsewhere / "d")

    monkeypatch.setattr(tree_walk.os, "rmdir", moving)
    before = open_descriptors()
    with pytest.raises(OSError, match="moved while it was being removed"):
        tree_walk.remove_tree(top)
    assert open_descriptors() == before
    assert (elsewhere / "theirs.txt").read_text() == "not the tree's"
    assert os.listdir(elsewhere / "d") == []  # what was below it went; it stays, and all above
    assert (top / "d" / "d" / "d" / "d" / "d").is_dir()
