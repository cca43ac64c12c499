"""files refuses, for real on disk: symlinks anywhere, escapes, odd paths, non-regular files."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from broker import Broker, Decision
from tests.helpers import ScriptedConfirmer
from tests.unit.kinds.files_setup import Setup, broker, code, files_conn, make_setup, sha

__all__ = ["broker"]


@pytest.fixture
async def s(broker: Broker, tmp_path: Path) -> Setup:
    setup = await make_setup(broker, tmp_path, [files_conn(["**", "*"])])
    (setup.root / "d").mkdir()
    (setup.root / "d" / "ok.txt").write_text("inside")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET")
    return setup


async def write(s: Setup, path: str, text: str = "new", expected: str | None = None) -> dict[str, Any]:
    args = {"path": path, "text": text, "expected_sha256": expected or sha("inside")}
    return await s.broker.request(s.ctx, "fs", "write", args, ScriptedConfirmer(Decision.CONFIRMED))


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/etc/passwd", id="absolute"),
        pytest.param("../outside/secret.txt", id="dotdot-first"),
        pytest.param("d/../../outside/secret.txt", id="dotdot-inside"),
        pytest.param("./d/ok.txt", id="dot-segment"),
        pytest.param("d//ok.txt", id="empty-segment"),
        pytest.param("d/", id="trailing-slash"),
        pytest.param("d\\ok.txt", id="backslash"),
        pytest.param("d/ok.txt\x00.md", id="nul"),
        pytest.param("", id="empty"),
        pytest.param("d/" + "x" * 256, id="name-too-long"),
        pytest.param("d/\udcff", id="lone-surrogate"),
        pytest.param(42, id="not-a-string"),
    ],
)
async def test_a_malformed_path_is_refused_for_read_and_write(s: Setup, path: Any) -> None:
    assert code(await s.call("read", {"path": path})) == "refused"
    assert code(await s.call("read", {"paths": [path]})) == "refused"
    assert code(await write(s, path)) == "refused"


async def test_a_symlinked_file_is_refused(s: Setup, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside" / "secret.txt", s.root / "d" / "link.txt")
    result = await s.call("read", {"path": "d/link.txt"})
    assert code(result) == "refused"
    assert "symlink" in result["error"]["message"]
    assert code(await write(s, "d/link.txt", expected=sha("SECRET"))) == "refused"
    assert (tmp_path / "outside" / "secret.txt").read_text() == "SECRET"


async def test_a_symlink_to_a_file_inside_the_root_is_refused_too(s: Setup) -> None:
    os.symlink("ok.txt", s.root / "d" / "alias.txt")
    assert code(await s.call("read", {"path": "d/alias.txt"})) == "refused"


async def test_a_symlinked_folder_anywhere_on_the_path_is_refused(s: Setup, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", s.root / "link")
    (s.root / "d" / "e").mkdir()
    os.symlink(tmp_path / "outside", s.root / "d" / "e" / "deeper")
    for path in ("link/secret.txt", "d/e/deeper/secret.txt"):
        result = await s.call("read", {"path": path})
        assert code(result) == "refused"
        assert "symlink" in result["error"]["message"]
        assert code(await write(s, path, expected=sha("SECRET"))) == "refused"
    assert (tmp_path / "outside" / "secret.txt").read_text() == "SECRET"


async def test_a_fifo_is_refused_without_hanging(s: Setup) -> None:
    os.mkfifo(s.root / "d" / "pipe")
    result = await s.call("read", {"path": "d/pipe"})
    assert code(result) == "refused"
    assert "FIFO" in result["error"]["message"]
    assert code(await write(s, "d/pipe")) == "refused"


async def test_a_device_is_refused(s: Setup) -> None:
    if os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    os.mknod(s.root / "d" / "null", 0o600 | 0o020000, os.makedev(1, 3))  # /dev/null's numbers
    assert code(await s.call("read", {"path": "d/null"})) == "refused"
    assert code(await write(s, "d/null", expected=sha(""))) == "refused"


async def test_a_socket_is_refused(s: Setup) -> None:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(s.root / "d" / "sock"))
        assert code(await s.call("read", {"path": "d/sock"})) == "refused"
    finally:
        sock.close()


async def test_a_folder_is_refused(s: Setup) -> None:
    result = await s.call("read", {"path": "d"})
    assert code(result) == "refused"
    assert "folder" in result["error"]["message"]


async def test_a_file_used_as_a_folder_is_refused(s: Setup) -> None:
    assert code(await s.call("read", {"path": "d/ok.txt/x"})) == "refused"


async def test_write_to_a_file_with_two_hard_links_is_refused(s: Setup) -> None:
    os.link(s.root / "d" / "ok.txt", s.root / "d" / "twin.txt")
    result = await write(s, "d/ok.txt")
    assert code(result) == "refused"
    assert "hard link" in result["error"]["message"]
    assert (s.root / "d" / "ok.txt").read_text() == "inside"


async def test_a_file_with_two_hard_links_is_never_read_or_listed(s: Setup, tmp_path: Path) -> None:
    # The other name may be anywhere on the disk: here, a secret outside the root.
    os.link(tmp_path / "outside" / "secret.txt", s.root / "d" / "twin.txt")
    result = await s.call("read", {"path": "d/twin.txt"})
    assert code(result) == "refused"
    assert "hard link" in result["error"]["message"]
    batch = await s.call("read", {"paths": ["d/twin.txt", "d/ok.txt"]})
    assert [f.get("error", {}).get("code") for f in batch["data"]["files"]] == ["refused", None]
    assert "SECRET" not in str(result) + str(batch)
    assert "d/twin.txt" not in [f["path"] for f in (await s.call("list", {}))["data"]["files"]]
