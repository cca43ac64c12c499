"""The file guard's primitives on real folders: which paths are accepted, and opens that never
follow a link, never block, and never leave a descriptor open when they refuse."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker.errors import CallError, ErrorCode
from broker.fs import safe
from broker.fs.safe import (
    file_id,
    home_id,
    open_leaf,
    open_parent,
    open_root,
    parse_path,
    read_upto,
)


def refusal(value: object) -> str:
    with pytest.raises(CallError) as caught:
        parse_path(value)
    assert caught.value.code is ErrorCode.REFUSED
    return caught.value.message


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (None, "must be a string"),
        ("", "1 to 4096 characters"),
        ("a" * 4097, "1 to 4096 characters"),
        ("a\x00b", "must not contain NUL"),
        ("a\\b", "not backslashes"),
        ("a/\ud800", "not valid Unicode text"),
        ("/etc/passwd", "must be relative"),
        ("a//b", "empty segments"),
        ("a/", "empty segments"),
        ("./a", ". or .. segments"),
        ("a/../b", ". or .. segments"),
        ("x" * 256, "longer than 255 bytes"),
        ("d/" + "é" * 128, "longer than 255 bytes"),
    ],
)
def test_a_path_that_is_not_a_clean_relative_path_is_refused_saying_why(value: object, says: str) -> None:
    assert says in refusal(value)


def test_the_longest_path_and_name_accepted_are_4096_characters_and_255_bytes() -> None:
    longest = "/".join(["a" * 255] * 16)[:4096].rstrip("/")
    assert parse_path(longest).text == longest
    assert parse_path("é" * 127 + "a").segments == ("é" * 127 + "a",)
    assert parse_path("x" * 255).name == "x" * 255
    assert len(parse_path("a/" * 2047 + "bb").text) == 4096


def test_a_long_refused_path_is_shown_cut_at_200_characters() -> None:
    at_limit = "a" * 197 + "/.."
    assert repr(at_limit) in refusal(at_limit)
    over = "a" * 198 + "/.."
    assert repr(over[:200] + "…") in refusal(over)


@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="/\\\x00"), min_size=1, max_size=8),
        min_size=1,
        max_size=5,
    )
)
def test_every_clean_relative_path_is_accepted_as_its_segments(segments: list[str]) -> None:
    if any(s in (".", "..") for s in segments):
        return
    path = parse_path("/".join(segments))
    assert (path.segments, path.folders, path.name) == (tuple(segments), tuple(segments[:-1]), segments[-1])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("hello", encoding="utf-8")
    (root / "link").symlink_to(root / "sub")
    (root / "sub" / "to-a").symlink_to(root / "sub" / "a.txt")
    os.mkfifo(root / "sub" / "fifo")
    os.link(root / "sub" / "a.txt", root / "sub" / "hard")
    return root


def opened(root: Path, fence: Any = None) -> safe.OpenRoot:
    return open_root(root, "the workspace root", fence)


def test_a_file_is_opened_through_its_folders_and_read(tree: Path) -> None:
    (tree / "sub" / "hard").unlink()
    handle = opened(tree)
    try:
        parent = open_parent(handle, parse_path("sub/a.txt"))
        fd, st = open_leaf(parent, parse_path("sub/a.txt"))
        assert read_upto(fd, 100) == b"hello" and read_upto(fd, 2) == b"he" and st.st_size == 5
        os.close(fd)
        os.close(parent)
    finally:
        os.close(handle.fd)


def open_file(handle: safe.OpenRoot, rel: safe.RelPath) -> None:
    parent = open_parent(handle, rel)
    try:
        os.close(open_leaf(parent, rel)[0])
    finally:
        os.close(parent)


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("link/a.txt", "'link' is a symlink"),
        ("sub/a.txt/x", "'sub/a.txt' cannot be opened"),
        ("missing/a.txt", "'missing' does not exist"),
        ("sub/to-a", "is a symlink"),
        ("sub/fifo", "is not a regular file"),
        ("sub/hard", "more than one hard link"),
        ("sub/none", "does not exist"),
        ("sub", "is a folder"),
    ],
)
def test_every_refused_open_says_why_and_leaves_no_descriptor_open(tree: Path, path: str, says: str) -> None:
    handle = opened(tree)
    before = descriptors()
    rel = parse_path(path)
    with pytest.raises(CallError) as caught:
        open_file(handle, rel)
    assert says in caught.value.message
    assert descriptors() == before
    os.close(handle.fd)


def test_helms_home_is_fenced_off_as_a_root_and_as_a_folder_without_leaking(tree: Path) -> None:
    fence = home_id(tree / "sub")
    assert fence == file_id(os.stat(tree / "sub"))
    assert home_id(tree / "nowhere") is None
    before = descriptors()
    with pytest.raises(CallError, match="Helm's own folder"):
        opened(tree / "sub", fence)
    handle = opened(tree, fence)
    with pytest.raises(CallError, match="'sub' is Helm's own folder"):
        open_parent(handle, parse_path("sub/a.txt"))
    os.close(handle.fd)
    assert descriptors() == before


def test_a_missing_root_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(CallError) as caught:
        opened(tmp_path / "gone")
    assert caught.value.code is ErrorCode.UNAVAILABLE


class SwapAfterStat:
    """``os`` as the guard sees it, except that right after the guard stats the file, a symlink
    (or a FIFO) takes its place: the race the open itself must win."""

    def __init__(self, replace: Any) -> None:
        self._replace = replace

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def stat(self, *args: Any, **kwargs: Any) -> os.stat_result:
        result = os.stat(*args, **kwargs)
        replace, self._replace = self._replace, None
        if replace is not None:
            replace()
        return result


@pytest.mark.parametrize(
    ("swap", "says"),
    [
        ("symlink", "'sub/a.txt' is a symlink; Helm does not follow symlinks"),
        ("fifo", "'sub/a.txt' is not a regular file"),
        ("folder", "'sub/a.txt' is not a regular file"),
        ("gone", "'sub/a.txt' does not exist"),
    ],
)
def test_a_file_swapped_after_its_check_is_refused_by_the_open_itself(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str, says: str
) -> None:
    (tree / "sub" / "hard").unlink()
    outside = tmp_path / "secret.txt"
    outside.write_text("secret", encoding="utf-8")
    target = tree / "sub" / "a.txt"

    def replace() -> None:
        target.unlink()
        if swap == "symlink":
            target.symlink_to(outside)
        elif swap == "fifo":
            os.mkfifo(target)
        elif swap == "folder":
            target.mkdir()

    handle = opened(tree)
    parent = open_parent(handle, parse_path("sub/a.txt"))
    monkeypatch.setattr(safe, "os", SwapAfterStat(replace))
    before = descriptors()
    with pytest.raises(CallError) as caught:
        open_leaf(parent, parse_path("sub/a.txt"))
    monkeypatch.undo()
    assert caught.value.code is ErrorCode.REFUSED
    assert caught.value.message == says
    assert descriptors() == before
    os.close(parent)
    os.close(handle.fd)


class Failing:
    """``os`` as the guard sees it, except that one call fails the way a disk or a permission
    can (Helm runs as a user the file may not be readable by; these tests may run as root)."""

    def __init__(self, call: str, error: OSError) -> None:
        self._call, self._error = call, error

    def __getattr__(self, name: str) -> Any:
        if name != self._call:
            return getattr(os, name)

        def fail(*args: Any, **kwargs: Any) -> Any:
            raise self._error

        return fail


@pytest.mark.parametrize("call", ["stat", "open"])
def test_a_file_that_cannot_be_checked_or_opened_is_refused_saying_so_without_a_descriptor_left(
    tree: Path, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    (tree / "sub" / "hard").unlink()
    handle = opened(tree)
    parent = open_parent(handle, parse_path("sub/a.txt"))
    before = descriptors()
    monkeypatch.setattr(safe, "os", Failing(call, PermissionError(13, "Permission denied")))
    with pytest.raises(CallError) as caught:
        open_leaf(parent, parse_path("sub/a.txt"))
    monkeypatch.undo()
    assert caught.value.code is ErrorCode.REFUSED
    assert caught.value.message == "'sub/a.txt' cannot be opened"
    assert descriptors() == before
    os.close(parent)
    os.close(handle.fd)


def test_a_read_stops_at_its_limit_across_chunks(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * (3 << 20))
    fd = os.open(big, os.O_RDONLY)
    try:
        assert len(read_upto(fd, (5 << 20) // 2)) == (5 << 20) // 2
        assert len(read_upto(fd, 4 << 20)) == 3 << 20
        assert read_upto(fd, 0) == b""
        assert read_upto(fd, 1) == b"x"  # a last byte is read too, alone or after a whole chunk
        assert len(read_upto(fd, (1 << 20) + 1)) == (1 << 20) + 1
    finally:
        os.close(fd)


def test_a_root_that_is_a_file_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(CallError) as caught:
        opened(tmp_path / "file")
    assert caught.value.code is ErrorCode.UNAVAILABLE


def test_no_descriptor_the_guard_opens_is_inherited_by_a_child_process(tree: Path) -> None:
    (tree / "sub" / "hard").unlink()
    handle = opened(tree)
    parent = open_parent(handle, parse_path("sub/a.txt"))
    fd, _ = open_leaf(parent, parse_path("sub/a.txt"))
    try:
        for each in (handle.fd, parent, fd):
            assert fcntl.fcntl(each, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    finally:
        for each in (fd, parent, handle.fd):
            os.close(each)
