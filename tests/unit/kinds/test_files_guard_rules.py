"""The file guard's own rules, straight on real folders: the one "is inside" check, what a
write's text and expected hash must be, and whether a folder holds Helm's home."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from broker.errors import CallError, ErrorCode
from broker.fs.guard import FileGuard, GuardRoot, Root, checked_sha256, encode_text, folder_holds, locate


def test_an_absolute_path_goes_to_the_longest_root_it_starts_with() -> None:
    roots = [Path("/w"), Path("/w/projects/p"), Path("/w/projects")]
    assert (locate(roots, "/w/projects/p/a.txt").root, locate(roots, "/w/projects/p/a.txt").path.text) == (
        1,
        "a.txt",
    )
    assert locate(roots, "/w/projects/q/a").root == 2
    assert locate(roots, "/w/a").root == 0
    assert locate(roots, "sub/a.txt").root == 0
    assert locate([Path("/w/")], "/w/a").path.text == "a"


@pytest.mark.parametrize("path", ["/wx/a", "/elsewhere", "/w"])
def test_an_absolute_path_under_no_root_is_refused(path: str) -> None:
    with pytest.raises(CallError, match="outside the folders Helm gives access to"):
        locate([Path("/w")], path)


def test_a_long_path_outside_every_root_is_shown_cut_at_200_characters() -> None:
    with pytest.raises(CallError) as caught:
        locate([Path("/w")], "/x" + "a" * 300)
    assert repr("/x" + "a" * 198 + "…") in caught.value.message
    with pytest.raises(CallError) as caught:
        locate([Path("/w")], "/x" + "a" * 198)
    assert repr("/x" + "a" * 198) in caught.value.message
    with pytest.raises(CallError) as caught:
        locate([Path("/w")], "/x" + "a" * 199)
    assert repr("/x" + "a" * 198 + "…") in caught.value.message


def test_new_text_must_be_a_string_of_valid_unicode_of_at_most_256_kib() -> None:
    assert encode_text("é" * 3) == "é".encode() * 3
    assert len(encode_text("x" * 262_144)) == 262_144
    with pytest.raises(CallError) as caught:
        encode_text("x" * 262_145)
    assert caught.value.code is ErrorCode.TOO_LARGE
    for bad, says in (
        (b"bytes", "must be a string"),
        (None, "must be a string"),
        ("\ud800", "unpaired surrogate"),
    ):
        with pytest.raises(CallError, match=says):
            encode_text(bad)


def test_an_expected_hash_is_64_hex_in_either_case() -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    assert checked_sha256(digest.upper()) == digest
    for bad in (None, 7, digest[:-1], digest + "0", "g" * 64, ""):
        with pytest.raises(CallError, match="64-hex sha256"):
            checked_sha256(bad)


def test_a_guard_needs_a_root() -> None:
    with pytest.raises(ValueError, match="at least one root"):
        FileGuard([], Path("/nowhere"))


def test_a_guard_writes_and_reads_back_under_a_relative_spelling_of_its_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "root").mkdir()
    monkeypatch.chdir(tmp_path)
    guard = FileGuard([GuardRoot(Path("root"), "the root")], tmp_path / "home")
    new = guard.write_text(f"{tmp_path}/root/a.txt", "hello", create=True)
    assert new == hashlib.sha256(b"hello").hexdigest()
    assert guard.read_text("a.txt").text == "hello"
    guard.write_text("a.txt", "bye", new.upper())
    assert (tmp_path / "root" / "a.txt").read_text(encoding="utf-8") == "bye"


def test_an_io_error_inside_the_guard_is_unavailable_and_closes_the_root(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    guard = FileGuard([GuardRoot(tmp_path / "root")], tmp_path / "home")
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(CallError) as caught, guard.opened():
        raise OSError("disk")
    assert caught.value.code is ErrorCode.UNAVAILABLE
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_folder_holds_itself_and_what_lies_below_it_even_through_links(tmp_path: Path) -> None:
    inner = tmp_path / "a" / "b" / "c"
    inner.mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "a" / "b")
    assert folder_holds(tmp_path / "a", inner)
    assert folder_holds(inner, inner)
    assert folder_holds(tmp_path / "a", tmp_path / "link" / "c")
    assert folder_holds(tmp_path / "link", inner)
    assert not folder_holds(inner, tmp_path / "a")
    assert not folder_holds(tmp_path / "a", tmp_path)
    assert not folder_holds(tmp_path / "missing", inner)
    assert not folder_holds(tmp_path / "a", tmp_path / "missing")
    assert folder_holds(Path("/"), inner)


def test_a_folder_is_looked_for_at_most_256_folders_above(tmp_path: Path) -> None:
    deep = tmp_path / "/".join(["d"] * 257)
    deep.mkdir(parents=True)
    assert folder_holds(tmp_path / "/".join(["d"] * 2), deep)  # 255 folders above
    assert not folder_holds(tmp_path / "d", deep)  # 256 above: deeper trees are not looked at


def test_a_root_is_named_in_messages_by_what_it_is() -> None:
    assert Root("Workspace", "main", Path("/w")).what == "the workspace root"
    assert Root("Project", "site", Path("/p")).what == "the project 'site'"


def test_of_two_roots_at_the_same_folder_an_absolute_path_goes_to_the_first() -> None:
    assert locate([Path("/w"), Path("/w/"), Path("/w")], "/w/a.txt").root == 0
    assert locate([Path("/v"), Path("/w/"), Path("/w")], "/w/a.txt").root == 1


def test_a_file_holds_nothing_not_even_itself_and_no_look_leaves_a_descriptor_open(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x", encoding="utf-8")
    before = len(os.listdir("/proc/self/fd"))
    assert not folder_holds(tmp_path / "a" / "f.txt", tmp_path / "a" / "f.txt")
    assert folder_holds(tmp_path, tmp_path / "a")
    assert not folder_holds(tmp_path / "a", tmp_path)
    assert len(os.listdir("/proc/self/fd")) == before
