"""The agent's file system rules, straight on real folders: absolute paths only, inside a root,
and writes that replace exactly what was shown or create only what did not exist."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from broker.agents.fsguard import create_file, current_text, inside, locate, read_text, write_file
from broker.errors import CallError, ErrorCode
from broker.kinds.files.adapter import Root


@pytest.fixture
def roots(tmp_path: Path) -> list[Root]:
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    (tmp_path / "proj").mkdir()
    (tmp_path / "ws" / "sub" / "a.txt").write_text("hello", encoding="utf-8")
    return [Root("Workspace", "main", tmp_path / "ws"), Root("Project", "p", tmp_path / "proj")]


def test_a_path_inside_a_root_is_located_in_that_root(roots: list[Root]) -> None:
    root, rel = locate(f"{roots[1].folder}/x/y.txt", roots)
    assert (root, rel.text) == (roots[1], "x/y.txt")
    assert inside(f"{roots[0].folder}/sub/a.txt", roots)


@pytest.mark.parametrize(
    "path", ["sub/a.txt", "./sub/a.txt", "", None, 3, "/elsewhere/a.txt", "{ws}/../proj/x", "{ws}/sub/../a"]
)
def test_a_relative_outside_or_unclean_path_is_refused(roots: list[Root], path: object) -> None:
    if isinstance(path, str):
        path = path.replace("{ws}", str(roots[0].folder))
    with pytest.raises(CallError) as caught:
        locate(path, roots)
    assert caught.value.code is ErrorCode.REFUSED
    if isinstance(path, str):
        assert not inside(path, roots)


def test_a_file_is_read_and_what_a_write_would_replace_is_its_text_and_hash(
    roots: list[Root], tmp_path: Path
) -> None:
    root, rel = locate(f"{roots[0].folder}/sub/a.txt", roots)
    assert read_text(root, rel, tmp_path / "home") == "hello"
    current = current_text(root, rel, tmp_path / "home")
    assert current is not None
    assert (current.text, current.sha256) == ("hello", hashlib.sha256(b"hello").hexdigest())
    _, missing = locate(f"{roots[0].folder}/sub/new.txt", roots)
    assert current_text(root, missing, tmp_path / "home") is None


def test_a_write_replaces_only_the_text_that_was_shown(roots: list[Root], tmp_path: Path) -> None:
    root, rel = locate(f"{roots[0].folder}/sub/a.txt", roots)
    with pytest.raises(CallError) as caught:
        write_file(root, rel, b"changed", hashlib.sha256(b"other").hexdigest(), tmp_path / "home")
    assert caught.value.code is ErrorCode.CONFLICT
    write_file(root, rel, b"changed", hashlib.sha256(b"hello").hexdigest(), tmp_path / "home")
    assert (roots[0].folder / "sub" / "a.txt").read_text(encoding="utf-8") == "changed"


def test_a_new_file_is_created_only_if_nothing_has_that_name(roots: list[Root], tmp_path: Path) -> None:
    root, rel = locate(f"{roots[0].folder}/sub/new.txt", roots)
    create_file(root, rel, b"new", tmp_path / "home")
    assert (roots[0].folder / "sub" / "new.txt").read_text(encoding="utf-8") == "new"
    with pytest.raises(CallError) as caught:
        create_file(root, rel, b"again", tmp_path / "home")
    assert caught.value.code is ErrorCode.CONFLICT
    assert (roots[0].folder / "sub" / "new.txt").read_text(encoding="utf-8") == "new"


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_no_operation_leaves_a_descriptor_open_even_when_refused(roots: list[Root], tmp_path: Path) -> None:
    home = tmp_path / "home"
    root, rel = locate(f"{roots[0].folder}/sub/a.txt", roots)
    _, new = locate(f"{roots[0].folder}/sub/b.txt", roots)
    before = open_descriptors()
    current_text(root, rel, home)
    current_text(root, new, home)
    create_file(root, new, b"b", home)
    with pytest.raises(CallError):
        create_file(root, new, b"b", home)
    with pytest.raises(CallError):
        write_file(root, rel, b"x", "0" * 64, home)
    assert open_descriptors() == before


def test_a_dangling_symlink_counts_as_a_file_that_exists(roots: list[Root], tmp_path: Path) -> None:
    (roots[0].folder / "sub" / "dangling").symlink_to(tmp_path / "nowhere")
    root, rel = locate(f"{roots[0].folder}/sub/dangling", roots)
    with pytest.raises(CallError) as caught:
        create_file(root, rel, b"x", tmp_path / "home")
    assert caught.value.code is ErrorCode.CONFLICT
    assert not (tmp_path / "nowhere").exists()
