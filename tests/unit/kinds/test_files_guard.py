"""The file guard's own API (as agents use it): several roots, absolute or relative paths,
optional expected hash, creating files; the refusals are the files kind's."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from broker.errors import CallError
from broker.fs.guard import FileGuard, GuardRoot, locate
from tests.unit.kinds.files_setup import sha


@pytest.fixture
def guard(tmp_path: Path) -> FileGuard:
    """Roots ws/ and ws/app/ (a project inside the workspace) and lib/; outside/ next to them."""
    for folder, text in (
        ("ws", "workspace"),
        ("ws/app", "project"),
        ("lib", "library"),
        ("outside", "SECRET"),
    ):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "f.txt").write_text(text)
    roots = [GuardRoot(tmp_path / "ws"), GuardRoot(tmp_path / "ws" / "app"), GuardRoot(tmp_path / "lib")]
    return FileGuard(roots, tmp_path / "home")


def refusal(fn: object, *args: object, **kwargs: object) -> str:
    assert callable(fn)
    with pytest.raises(CallError) as err:
        fn(*args, **kwargs)
    return f"{err.value.code.value}: {err.value.message}"


def test_absolute_paths_go_to_the_longest_root_that_holds_them(guard: FileGuard, tmp_path: Path) -> None:
    assert guard.read_text(str(tmp_path / "ws" / "f.txt")).text == "workspace"
    assert guard.read_text(str(tmp_path / "lib" / "f.txt")).text == "library"
    assert guard.locate(str(tmp_path / "ws" / "app" / "f.txt")).root == 1
    assert guard.read_text(str(tmp_path / "ws" / "app" / "f.txt")).text == "project"


def test_relative_paths_are_relative_to_the_first_root(guard: FileGuard) -> None:
    got = guard.read_text("app/f.txt")
    assert (got.text, got.sha256) == ("project", sha("project"))


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("{tmp}/outside/f.txt", id="absolute-outside"),
        pytest.param("{tmp}/wsx/f.txt", id="sibling-with-the-roots-name-as-prefix"),
        pytest.param("{tmp}/ws/../outside/f.txt", id="dotdot-in-absolute"),
        pytest.param("../outside/f.txt", id="dotdot-relative"),
        pytest.param("{tmp}/ws", id="the-root-itself"),
        pytest.param("{tmp}/ws/", id="the-root-with-a-slash"),
        pytest.param("{tmp}/ws//f.txt", id="empty-segment"),
        pytest.param("/etc/passwd", id="system-file"),
    ],
)
def test_paths_outside_the_roots_are_refused(guard: FileGuard, tmp_path: Path, path: str) -> None:
    shown = refusal(guard.read_text, path.format(tmp=tmp_path))
    assert shown.startswith("refused")
    assert refusal(guard.write_text, path.format(tmp=tmp_path), "x").startswith("refused")
    assert (tmp_path / "outside" / "f.txt").read_text() == "SECRET"


def test_symlinks_at_the_file_or_above_it_are_refused(guard: FileGuard, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside" / "f.txt", tmp_path / "ws" / "leaf.txt")
    os.symlink(tmp_path / "outside", tmp_path / "ws" / "dir")
    for path in ("leaf.txt", "dir/f.txt"):
        assert "symlink" in refusal(guard.read_text, path)
        assert "symlink" in refusal(guard.write_text, path, "x", create=True)
    assert (tmp_path / "outside" / "f.txt").read_text() == "SECRET"


def test_special_files_and_hard_links_are_refused(guard: FileGuard, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "ws" / "pipe")
    os.link(tmp_path / "outside" / "f.txt", tmp_path / "ws" / "twin.txt")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "ws" / "sock"))
        for path in ("pipe", "sock", "twin.txt"):
            assert refusal(guard.read_text, path).startswith("refused")
            assert refusal(guard.write_text, path, "x", create=True).startswith("refused")
    finally:
        sock.close()
    assert (tmp_path / "outside" / "f.txt").read_text() == "SECRET"


def test_helms_home_is_refused_inside_a_root(tmp_path: Path) -> None:
    (tmp_path / ".helm").mkdir()
    (tmp_path / ".helm" / "settings.json").write_text("{}")
    guard = FileGuard([GuardRoot(tmp_path)], tmp_path / ".helm")
    assert "Helm's own folder" in refusal(guard.read_text, ".helm/settings.json")
    assert "Helm's own folder" in refusal(guard.write_text, ".helm/settings.json", "x", create=True)
    assert (tmp_path / ".helm" / "settings.json").read_text() == "{}"


def test_a_write_without_an_expected_hash_replaces_the_file(guard: FileGuard, tmp_path: Path) -> None:
    os.chmod(tmp_path / "ws" / "f.txt", 0o640)
    assert guard.write_text("f.txt", "new") == sha("new")
    assert (tmp_path / "ws" / "f.txt").read_text() == "new"
    assert stat.S_IMODE(os.stat(tmp_path / "ws" / "f.txt").st_mode) == 0o640


def test_a_write_with_a_stale_hash_is_a_conflict(guard: FileGuard, tmp_path: Path) -> None:
    assert refusal(guard.write_text, "f.txt", "new", sha("old")).startswith("conflict")
    assert (tmp_path / "ws" / "f.txt").read_text() == "workspace"


def test_create_makes_a_missing_file_only_when_asked(guard: FileGuard, tmp_path: Path) -> None:
    assert "does not exist" in refusal(guard.write_text, "new.txt", "x")
    assert guard.write_text(str(tmp_path / "lib" / "new.txt"), "made", create=True) == sha("made")
    assert (tmp_path / "lib" / "new.txt").read_text() == "made"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "lib" / "new.txt").st_mode) == 0o666 & ~umask
    # An expected hash says the caller read the file: a missing file is then a conflict.
    assert refusal(guard.write_text, "gone.txt", "x", sha("x"), create=True).startswith("conflict")
    assert not (tmp_path / "ws" / "gone.txt").exists()


def test_create_never_makes_folders(guard: FileGuard, tmp_path: Path) -> None:
    assert refusal(guard.write_text, "no/such/f.txt", "x", create=True).startswith("refused")
    assert not (tmp_path / "ws" / "no").exists()


def test_roots_are_compared_in_normal_form(tmp_path: Path) -> None:
    guard = FileGuard([GuardRoot(Path(f"{tmp_path}/lib/../ws/"))], tmp_path / "home")
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "f.txt").write_text("x")
    assert guard.read_text(f"{tmp_path}/ws/f.txt").text == "x"


def test_locate_of_a_root_at_slash(tmp_path: Path) -> None:
    assert locate([Path("/")], "/etc/passwd").path.text == "etc/passwd"


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("leaf.txt", "is a symlink"),
        ("dir/f.txt", "'dir' is a symlink"),
        ("pipe", "is not a regular file"),
        ("twin.txt", "more than one hard link"),
        ("app", "is a folder"),
        ("none/f.txt", "'none' does not exist"),
        ("f.txt/x", "'f.txt' cannot be opened"),
        ("d/\udcff", "not valid Unicode text"),
        ("a/" * 2048 + "b", "1 to 4096 characters"),
        ("n" * 256, "longer than 255 bytes"),
    ],
)
def test_every_refusal_of_a_read_or_a_write_leaves_no_descriptor_open(
    guard: FileGuard, tmp_path: Path, path: str, says: str
) -> None:
    os.symlink(tmp_path / "outside" / "f.txt", tmp_path / "ws" / "leaf.txt")
    os.symlink(tmp_path / "outside", tmp_path / "ws" / "dir")
    os.mkfifo(tmp_path / "ws" / "pipe")
    os.link(tmp_path / "outside" / "f.txt", tmp_path / "ws" / "twin.txt")
    before = len(os.listdir("/proc/self/fd"))
    assert says in refusal(guard.read_text, path)
    assert says in refusal(guard.write_text, path, "x", sha("workspace"))
    assert says in refusal(guard.write_text, path, "x", create=True)
    assert len(os.listdir("/proc/self/fd")) == before
    assert (tmp_path / "outside" / "f.txt").read_text() == "SECRET"
