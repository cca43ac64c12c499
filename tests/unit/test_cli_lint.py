"""``helm ext lint`` for CI: every problem as JSON on stdout, and an exit code that says it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from tests.helpers import manifest_dict, write_extension

GLOB = {"id": "fs", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]}


def lint_json(capsys: pytest.CaptureFixture[str], folder: Path) -> tuple[int, Any, str]:
    code = main(["ext", "lint", str(folder), "--json"])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def test_a_clean_manifest_is_ok_with_exit_code_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_extension(tmp_path / "ext", manifest_dict([GLOB]))
    code, result, err = lint_json(capsys, folder)
    assert (code, result, err) == (
        0,
        {"manifest": str(folder / "manifest.json"), "ok": True, "problems": []},
        "",
    )


def test_every_problem_comes_with_its_path_and_exit_code_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = manifest_dict([GLOB | {"paths": ["/etc/*"], "operations": ["write"]}], kind="gadget")
    code, result, _ = lint_json(capsys, write_extension(tmp_path / "ext", bad))
    assert code == 1
    assert result["ok"] is False
    assert result["problems"] == [
        {"path": "$.connections[0]", "message": 'declares write operation(s) write: the manifest must also '
                                                'declare "permissions": { "write": true }'},
        {"path": "$.connections[0].paths[0]", "message": "must be relative (no leading /, ~ or drive)"},
        {"path": "$.kind", "message": "must be one of: widget, tool"},
    ]  # fmt: skip


@pytest.mark.parametrize("content", [None, "{not json", "[]"], ids=["missing", "not-json", "not-an-object"])
def test_a_manifest_that_cannot_be_read_is_a_problem_at_the_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None
) -> None:
    if content is not None:
        (tmp_path / "manifest.json").write_text(content, encoding="utf-8")
    code, result, _ = lint_json(capsys, tmp_path)
    assert code == 1
    assert result["ok"] is False
    assert [p["path"] for p in result["problems"]] == ["$"]
