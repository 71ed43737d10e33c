"""Reproducible archives: only paths, contents and executable bits reach the bytes."""

import gzip
import io
import os
import tarfile
from pathlib import Path

import pytest

from vtp.vertex import sdist


def tree(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def members(data: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return tar.getmembers()


def test_equal_files_give_equal_bytes_whatever_their_mtimes_and_order(tmp_path: Path) -> None:
    files = {"pkg/a.py": "a = 1\n", "pkg/b/c.txt": "c\n", "top.py": "t\n"}
    first = tree(tmp_path / "one", files)
    second = tree(tmp_path / "two", dict(reversed(files.items())))
    for index, path in enumerate(sorted(second.rglob("*"))):
        os.utime(path, (1_000_000 + index, 2_000_000_000 - index))
    built = [sdist.write_sdist("pkg", "0.0.0", sdist.collect(root), 0) for root in (first, second)]
    assert built[0] == built[1]
    assert sdist.write_sdist("pkg", "0.0.0", sdist.collect(first), 0) == built[0]


def test_members_are_sorted_with_fixed_metadata_and_only_the_executable_bit(
    tmp_path: Path,
) -> None:
    root = tree(tmp_path, {"z.sh": "echo\n", "a/b.py": "", "a/a.txt": "x"})
    os.chmod(root / "z.sh", 0o750)
    os.chmod(root / "a/a.txt", 0o600)
    data = sdist.write_sdist("n", "1.0", sdist.collect(root), mtime=1234)
    listed = [(m.name, m.mode, m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members(data)]
    assert listed == [
        ("n-1.0/a/a.txt", 0o644, 1234, 0, 0, "", ""),
        ("n-1.0/a/b.py", 0o644, 1234, 0, 0, "", ""),
        ("n-1.0/z.sh", 0o755, 1234, 0, 0, "", ""),
    ]


def test_the_gzip_header_names_no_file_and_no_time(tmp_path: Path) -> None:
    data = sdist.write_sdist("n", "1", {"a": sdist.SourceFile(b"a")}, mtime=5)
    flags, mtime = data[3], data[4:8]
    assert (flags, mtime) == (0, b"\0\0\0\0")  # no FNAME field, MTIME 0
    assert gzip.decompress(data)  # and it is a valid gzip stream


def test_source_date_epoch_sets_every_mtime(monkeypatch: pytest.MonkeyPatch) -> None:
    files = {"a": sdist.SourceFile(b"a")}
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert members(sdist.write_sdist("n", "1", files))[0].mtime == sdist.DEFAULT_EPOCH
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert members(sdist.write_sdist("n", "1", files))[0].mtime == 1700000000
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ValueError, match="SOURCE_DATE_EPOCH='yesterday'"):
        sdist.write_sdist("n", "1", files)


def test_collect_leaves_out_caches_vcs_and_virtualenvs(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "pkg/mod.py": "",
            "pkg/__pycache__/mod.cpython-311.pyc": "",
            "pkg/old.pyc": "",
            "pkg.egg-info/PKG-INFO": "",
            ".git/HEAD": "",
            ".venv/bin/python": "",
            "myenv/pyvenv.cfg": "",
            "myenv/lib/x.py": "",
            ".pytest_cache/v": "",
            ".DS_Store": "",
            ".env.example": "kept: dot files are user files",
        },
    )
    assert sorted(sdist.collect(root)) == [".env.example", "pkg/mod.py"]
    assert sorted(sdist.collect(root, "pkg")) == ["pkg/mod.py"]


def test_links_to_files_are_stored_as_files_links_out_of_the_tree_refused(tmp_path: Path) -> None:
    root = tree(tmp_path / "code", {"real.txt": "content", "pkg/mod.py": ""})
    (root / "alias.txt").symlink_to(root / "real.txt")
    assert sdist.collect(root)["alias.txt"].data == b"content"
    (root / "lib").mkdir()
    (root / "lib" / "pkg").symlink_to(root / "pkg", target_is_directory=True)
    assert sdist.collect(root)["lib/pkg"] == sdist.SourceFile(b"", link="../pkg")
    (root / "linked").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ValueError, match="linked is a symbolic link out of"):
        sdist.collect(root)
    (root / "linked").unlink()
    (root / "pkg" / "up").symlink_to(root, target_is_directory=True)
    with pytest.raises(ValueError, match=r"up is a symbolic link out of .* or to a folder above"):
        sdist.collect(root)


def test_a_link_to_a_directory_is_a_link_entry_of_the_archive(tmp_path: Path) -> None:
    files = {
        "pkg/mod.py": sdist.SourceFile(b"x = 1\n"),
        "lib/pkg": sdist.SourceFile(b"", link="../pkg"),
    }
    with tarfile.open(fileobj=io.BytesIO(sdist.write_sdist("n", "1", files))) as tar:
        link = tar.getmember("n-1/lib/pkg")
    assert link.issym() and link.linkname == "../pkg"
