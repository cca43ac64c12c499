"""``helm ext pack`` archives: the same folder packs to the same bytes; unpacking refuses what
the index does not pin, and an archive that escapes its folder."""

from __future__ import annotations

import hashlib
import io
import os
import re
import tarfile
from pathlib import Path

import pytest

from broker import home_tidy
from broker.catalogue import ArchiveRefused, archive
from broker.catalogue.index import Release
from broker.errors import ManifestError
from tests.helpers import write_extension
from tests.unit.catalogue.conftest import EXT, board


def test_the_same_folder_packs_to_the_same_bytes_whatever_its_times(tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "ext", board("1.0.0"))
    (folder / "js").mkdir()
    (folder / "js" / "app.js").write_text("console.log(1)\n")
    _, first = archive.pack(folder)
    for path in (folder / "index.html", folder / "js" / "app.js", folder / "js"):
        os.utime(path, (1_000_000, 1_000_000))
    _, second = archive.pack(folder)
    assert first == second
    with tarfile.open(fileobj=io.BytesIO(first), mode="r:gz") as tar:
        members = tar.getmembers()
    assert [m.name for m in members] == [
        "package/js",
        "package/index.html",
        "package/js/app.js",
        "package/manifest.json",
    ]
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}


def test_hidden_files_are_left_out_and_a_link_is_refused(tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "ext", board("1.0.0"))
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref\n")
    (folder / ".env").write_text("TOKEN=x\n")
    _, data = archive.pack(folder)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        assert not any(".git" in n or ".env" in n for n in tar.getnames())
    (folder / "elsewhere.html").symlink_to(tmp_path / "outside.html")
    with pytest.raises(ArchiveRefused, match=r"elsewhere\.html is a symbolic link"):
        archive.pack(folder)


def test_an_invalid_extension_is_not_packed(tmp_path: Path) -> None:
    folder = write_extension(tmp_path / "ext", board("1.0.0", id="Not An Id"))
    with pytest.raises(ManifestError):
        archive.pack(folder)


def _release(data: bytes, digest: str = "0" * 64) -> Release:
    return Release(EXT, "1.0.0", "a.tar.gz", len(data), hashlib.sha256(data).hexdigest(), digest, ())


def test_an_archive_that_escapes_its_folder_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        info = tarfile.TarInfo("package/../../evil.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    path = tmp_path / "a.tar.gz"
    path.write_bytes(raw.getvalue())
    home = tmp_path / "home"
    with pytest.raises(ArchiveRefused, match="escapes its folder"):
        archive.unpack(home, _release(raw.getvalue()), path)
    assert not (tmp_path / "evil.txt").exists()
    assert list((home / archive.FOLDER / EXT).iterdir()) == []


def test_an_archive_holding_another_version_is_refused(tmp_path: Path) -> None:
    _, data = archive.pack(write_extension(tmp_path / "ext", board("2.0.0")))
    path = tmp_path / "a.tar.gz"
    path.write_bytes(data)
    with pytest.raises(
        ArchiveRefused, match=re.escape("holds com.example.board@2.0.0, not what the index says")
    ):
        archive.unpack(tmp_path / "home", _release(data), path)


def _killed_unpacking(home: Path) -> Path:
    """What an install killed mid-unpack leaves: the lock file, and a half-filled staging folder."""
    with archive._unpacking(home):
        staging = home / archive.FOLDER / EXT / f"{archive.STAGING_PREFIX}0123456789abcdef"
        (staging / "package").mkdir(parents=True)
        (staging / "package" / "index.html").write_text("<p>half</p>")
    return staging


def test_the_next_start_removes_the_staging_folder_of_a_killed_unpacking(tmp_path: Path) -> None:
    home = tmp_path / "home"
    staging = _killed_unpacking(home)
    installed = home / archive.FOLDER / EXT / "1.0.0-0123456789abcdef"
    installed.mkdir()
    tidied = home_tidy.tidy(home)
    assert tidied.staging == (staging.relative_to(home).as_posix(),)
    assert not staging.exists()
    assert installed.is_dir()  # an unpacked release is not a leftover


def test_a_staging_folder_is_left_alone_while_an_unpacking_is_live(tmp_path: Path) -> None:
    home = tmp_path / "home"
    staging = _killed_unpacking(home)
    with archive._unpacking(home):  # another Helm process unpacking now
        assert home_tidy.tidy(home).staging == ()
        assert staging.is_dir()
    assert home_tidy.tidy(home).staging != ()
    assert not staging.exists()


def test_a_link_named_like_a_staging_folder_is_not_followed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _killed_unpacking(home)
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    (home / archive.FOLDER / EXT / f"{archive.STAGING_PREFIX}link").symlink_to(precious)
    home_tidy.tidy(home)
    assert (precious / "keep.txt").read_text() == "mine"
