"""files read: one file or a batch, UTF-8 text with its sha256, within the limits."""

from __future__ import annotations

from pathlib import Path

from broker import Broker
from tests.unit.kinds.files_setup import broker, code, files_conn, make_setup, register_project, sha

__all__ = ["broker"]


async def test_read_returns_the_text_and_its_sha256(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["notes/*.md"])])
    (s.root / "notes").mkdir()
    (s.root / "notes" / "a.md").write_text("héllo\nworld", encoding="utf-8")
    result = await s.call("read", {"path": "notes/a.md"})
    assert result == {
        "ok": True,
        "data": {"path": "notes/a.md", "text": "héllo\nworld", "sha256": sha("héllo\nworld")},
        "error": None,
    }


async def test_read_of_a_project_file_uses_the_registered_folder(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn([".tdt-project/**"], root="project")])
    register_project(broker, "app", tmp_path / "app")
    (tmp_path / "app" / ".tdt-project" / "x").mkdir(parents=True)
    (tmp_path / "app" / ".tdt-project" / "x" / "s.json").write_text("{}")
    result = await s.call("read", {"project": "app", "path": ".tdt-project/x/s.json"})
    assert result["data"]["text"] == "{}"


async def test_an_unknown_project_is_not_configured(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.md"], root="project")])
    assert code(await s.call("read", {"project": "ghost", "path": "a.md"})) == "not_configured"
    assert code(await s.call("list", {"project": "ghost"})) == "not_configured"


async def test_a_project_whose_folder_is_missing_is_unavailable(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.md"], root="project")])
    register_project(broker, "gone", tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    assert code(await s.call("list", {"project": "gone"})) == "unavailable"
    assert code(await s.call("read", {"project": "gone", "path": "a.md"})) == "unavailable"


async def test_a_project_root_call_without_project_is_refused(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.md"], root="project")])
    assert code(await s.call("list", {})) == "refused"


async def test_a_workspace_root_call_with_project_is_refused(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.md"])])
    assert code(await s.call("list", {"project": "app"})) == "refused"


async def test_a_file_of_exactly_256_kib_is_read(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.txt"])])
    (s.root / "big.txt").write_bytes(b"a" * 256 * 1024)
    assert len((await s.call("read", {"path": "big.txt"}))["data"]["text"]) == 256 * 1024


async def test_a_file_over_256_kib_is_too_large(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.txt"])])
    (s.root / "big.txt").write_bytes(b"a" * (256 * 1024 + 1))
    assert code(await s.call("read", {"path": "big.txt"})) == "too_large"


async def test_a_file_that_is_not_utf8_gets_a_clear_error(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.bin"])])
    (s.root / "x.bin").write_bytes(b"ok\xff\xfe")
    result = await s.call("read", {"path": "x.bin"})
    assert code(result) == "refused"
    assert "not UTF-8" in result["error"]["message"]
    assert "offset 2" in result["error"]["message"]


async def test_a_missing_file_is_refused_with_its_path(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*.md"])])
    result = await s.call("read", {"path": "none.md"})
    assert code(result) == "refused"
    assert "'none.md' does not exist" in result["error"]["message"]
    assert str(s.root) not in result["error"]["message"]


async def test_a_path_no_glob_matches_is_refused(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["notes/*.md"])])
    (s.root / "secret.md").write_text("x")
    assert code(await s.call("read", {"path": "secret.md"})) == "refused"


async def test_a_batch_read_returns_each_file_or_its_error(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["d/*"])])
    (s.root / "d").mkdir()
    (s.root / "d" / "a").write_text("A")
    (s.root / "d" / "bad").write_bytes(b"\xff")
    result = await s.call("read", {"paths": ["d/a", "d/missing", "d/bad"]})
    files = result["data"]["files"]
    assert result["data"]["truncated"] is False
    assert files[0] == {"path": "d/a", "text": "A", "sha256": sha("A")}
    assert files[1]["path"] == "d/missing"
    assert files[1]["error"]["code"] == "refused"
    assert files[2]["path"] == "d/bad"
    assert "UTF-8" in files[2]["error"]["message"]


async def test_a_batch_read_stops_at_2_mib_of_text_and_says_so(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["d/*"])])
    (s.root / "d").mkdir()
    names = [f"d/{i:02}" for i in range(10)]
    for name in names:
        (s.root / name).write_bytes(b"x" * 250 * 1024)
    result = await s.call("read", {"paths": names})
    assert result["data"]["truncated"] is True
    assert [f["path"] for f in result["data"]["files"]] == names[:8]


async def test_a_batch_of_more_than_100_paths_is_refused(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*"])])
    assert code(await s.call("read", {"paths": [f"f{i}" for i in range(101)]})) == "refused"
    assert code(await s.call("read", {"paths": []})) == "refused"


async def test_a_batch_that_repeats_a_path_is_refused(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*"])])
    (s.root / "a").write_text("A")
    assert code(await s.call("read", {"paths": ["a", "a"]})) == "refused"


async def test_a_batch_with_one_undeclared_path_is_refused_whole(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["d/*"])])
    assert code(await s.call("read", {"paths": ["d/a", "e/b"]})) == "refused"


async def test_read_with_both_path_and_paths_is_refused(broker: Broker, tmp_path: Path) -> None:
    s = await make_setup(broker, tmp_path, [files_conn(["*"])])
    assert code(await s.call("read", {"path": "a", "paths": ["a"]})) == "refused"
    assert code(await s.call("read", {})) == "refused"
    assert code(await s.call("read", {"path": "a", "extra": 1})) == "refused"
