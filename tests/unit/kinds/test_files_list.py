"""files list: matching regular files, sorted, at most 1000, with a flag when there are more."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from broker import Broker
from broker.kinds.files import listing
from tests.unit.kinds.files_setup import broker, files_conn, make_setup

__all__ = ["broker"]


def touch(root: Path, *paths: str) -> None:
    for p in paths:
        (root / p).parent.mkdir(parents=True, exist_ok=True)
        (root / p).write_text(p)


async def test_list_returns_matching_files_sorted_with_sizes(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["docs/**", "*.md"])])
    touch(s.root, "b.md", "a.md", "c.txt", "docs/z.txt", "docs/a-b/x", "docs/a/y", "docs/a.txt")
    result = await s.call("list", {})
    assert result["data"]["truncated"] is False
    paths = [f["path"] for f in result["data"]["files"]]
    assert paths == sorted(paths)
    assert paths == ["a.md", "b.md", "docs/a-b/x", "docs/a.txt", "docs/a/y", "docs/z.txt"]
    assert result["data"]["files"][0] == {"path": "a.md", "size": len("a.md")}


async def test_list_skips_symlinks_folders_fifos_and_dotfiles(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["**"])])
    touch(s.root, "real.txt", ".hidden.txt", ".git/config", "sub/ok.txt")
    (tmp_path / "outside").mkdir()
    touch(tmp_path / "outside", "secret.txt")
    os.symlink(tmp_path / "outside", s.root / "linkdir")
    os.symlink(tmp_path / "outside" / "secret.txt", s.root / "link.txt")
    os.mkfifo(s.root / "pipe")
    paths = [f["path"] for f in (await s.call("list", {}))["data"]["files"]]
    assert paths == ["real.txt", "sub/ok.txt"]


async def test_a_literal_dot_in_a_glob_reaches_dotfiles(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn([".tdt-project/**", ".*.json"])])
    touch(s.root, ".tdt-project/a/b.json", ".cfg.json", "x.json")
    paths = [f["path"] for f in (await s.call("list", {}))["data"]["files"]]
    assert paths == [".cfg.json", ".tdt-project/a/b.json"]


async def test_list_of_more_than_1000_matches_is_flagged_truncated(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["d/*"])])
    (s.root / "d").mkdir()
    for i in range(1001):
        (s.root / "d" / f"{i:04}").write_bytes(b"")
    result = await s.call("list", {})
    files = result["data"]["files"]
    assert len(files) == 1000
    assert result["data"]["truncated"] is True
    assert files[0]["path"] == "d/0000"
    assert files[-1]["path"] == "d/0999"


async def test_list_of_exactly_1000_matches_is_not_truncated(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["d/*"])])
    (s.root / "d").mkdir()
    for i in range(1000):
        (s.root / "d" / f"{i:04}").write_bytes(b"")
    result = await s.call("list", {})
    assert len(result["data"]["files"]) == 1000
    assert result["data"]["truncated"] is False


async def test_list_does_not_enter_folders_no_glob_can_reach(
    broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["a/b/*.md", "c/**/*.txt"])])
    touch(s.root, "a/b/x.md", "c/d/e.txt", "a/other/y.md", "zzz/deep/z.txt")
    # Spies around the real calls: which folders the walk opens, and how many it lists.
    opened: list[str] = []
    scanned: list[int] = []
    real_open, real_scandir = listing.open_folder_at, os.scandir

    def spy_open(parent: int, name: str, fence: Any) -> int | None:
        opened.append(name)
        return real_open(parent, name, fence)

    def spy_scandir(path: Any) -> Any:
        scanned.append(path)
        return real_scandir(path)

    monkeypatch.setattr(listing, "open_folder_at", spy_open)
    monkeypatch.setattr(os, "scandir", spy_scandir)
    paths = [f["path"] for f in (await s.call("list", {}))["data"]["files"]]
    monkeypatch.undo()
    assert paths == ["a/b/x.md", "c/d/e.txt"]
    assert sorted(opened) == ["a", "b", "c", "d"]
    # The root and a/ hold only literal names of the globs: opened directly, never listed.
    assert len(scanned) == 3  # a/b, c and c/d


def make_deep(root: Path, names: list[str], leaf: str) -> None:
    """Folders ``names`` one inside the other, and the file ``leaf`` in each (relative opens:
    the whole path is longer than the system's path limit)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
            with os.fdopen(os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
                fh.write("x")
    finally:
        os.close(fd)


async def test_list_returns_only_paths_that_read_accepts(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["**/*.md"])])
    s.root.mkdir(exist_ok=True)
    make_deep(s.root, ["d" * 200] * 24, "n.md")  # paths up to 4,829 characters
    (s.root / "back\\slash.md").write_text("x")
    listed = [f["path"] for f in (await s.call("list", {}))["data"]["files"]]
    assert listed and max(len(p) for p in listed) <= 4096
    assert len(listed) == 20  # the 21st would be 4,225 characters long
    for path in listed:
        result = await s.call("read", {"path": path})
        assert result["ok"], (len(path), result["error"])
