"""Which files of an extension folder its URL scheme serves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ui.host.files import NotServed, Served, mime_type, read_served


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "ext"
    (root / "js").mkdir(parents=True)
    (root / "index.html").write_text("<p>hi</p>", encoding="utf-8")
    (root / "js" / "app.js").write_text("1", encoding="utf-8")
    (root / "my file.css").write_text("p{}", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("secret", encoding="utf-8")
    return root


def test_a_file_in_the_folder_is_served_with_its_type(folder: Path) -> None:
    assert read_served(folder, "/index.html") == Served(b"<p>hi</p>", "text/html; charset=utf-8")
    assert read_served(folder, "/js/app.js") == Served(b"1", "text/javascript")
    assert read_served(folder, "/my%20file.css") == Served(b"p{}", "text/css; charset=utf-8")


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/../secret.txt", id="dot-dot"),
        pytest.param("/js/../../secret.txt", id="dot-dot-deeper"),
        pytest.param("/%2e%2e/secret.txt", id="encoded-dot-dot"),
        pytest.param("/js%2f..%2f..%2fsecret.txt", id="encoded-slash"),
        pytest.param("/..%5csecret.txt", id="encoded-backslash"),
        pytest.param("/index.html%00.png", id="nul"),
        pytest.param("/", id="the-folder-itself"),
        pytest.param("/js", id="a-subfolder"),
        pytest.param("/missing.html", id="missing"),
        pytest.param("/%ff.html", id="not-utf8"),
    ],
)
def test_paths_that_leave_or_confuse_the_folder_are_not_served(folder: Path, path: str) -> None:
    assert isinstance(read_served(folder, path), NotServed)


def test_symlinks_are_not_served_even_inside_the_folder(folder: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "secret.txt", folder / "link.txt")
    os.symlink(folder / "index.html", folder / "inner.html")
    os.symlink(tmp_path, folder / "up")
    assert isinstance(read_served(folder, "/link.txt"), NotServed)
    assert isinstance(read_served(folder, "/inner.html"), NotServed)
    assert isinstance(read_served(folder, "/up/secret.txt"), NotServed)


def test_a_file_over_the_limit_is_not_served(folder: Path) -> None:
    (folder / "big.bin").write_bytes(b"x" * 11)
    assert isinstance(read_served(folder, "/big.bin", limit=10), NotServed)
    assert read_served(folder, "/big.bin", limit=11) == Served(b"x" * 11, "application/octet-stream")


def test_unknown_types_are_opaque_bytes() -> None:
    assert mime_type("a.exe") == "application/octet-stream"
    assert mime_type("A.SVG") == "image/svg+xml"
