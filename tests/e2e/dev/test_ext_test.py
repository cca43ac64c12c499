"""``helm ext test`` as CI runs it: a real process, the page headless against hand-written
fixtures, a line per call and console message, and the exit code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.dev.terminal_kit import REPO

T = r"^\d\d:\d\d:\d\d\.\d{3} "
MANIFEST = {
    "id": "com.example.board",
    "name": "Board",
    "version": "1.0.0",
    "kind": "widget",
    "entry": "index.html",
    "connections": [
        {"id": "notes", "kind": "files", "root": "workspace", "paths": ["*.md"], "operations": ["list"]},
        {"id": "api", "kind": "http", "service": "tracker", "calls": {
            "items": {"method": "GET", "path": "/items"}, "owner": {"method": "GET", "path": "/owner"}}},
    ],
}  # fmt: skip
LISTED = {"ok": True, "data": {"files": [{"path": "plan.md", "size": 7}], "truncated": False}, "error": None}
GONE = {"ok": False, "status": 404, "data": None, "error": {"code": "http_error", "message": "HTTP 404"}}


def board(tmp: Path, script: str) -> tuple[Path, Path]:
    folder, fixtures = tmp / "board", tmp / "fixtures"
    folder.mkdir()
    fixtures.mkdir()
    (folder / "manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    (folder / "index.html").write_text(
        '<!doctype html><script src="main.js" defer></script>', encoding="utf-8"
    )
    (folder / "main.js").write_text(script, encoding="utf-8")
    for connection, operation, envelope in (("notes", "list", LISTED), ("api", "items", GONE)):
        document = {
            "version": 1,
            "connection": connection,
            "calls": [{"operation": operation, "envelope": envelope}],
        }
        (fixtures / f"{connection}.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return folder, fixtures


def ext_test(folder: Path, fixtures: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "app.cli", "ext", "test", str(folder), "--fixtures", str(fixtures)]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)


def test_a_page_that_handles_its_recorded_answers_passes(tmp_path: Path) -> None:
    script = """(async () => {
      const listed = await helm.call('notes', 'list', {});
      const items = await helm.call('api', 'items', {});
      console.log(listed.data.files.length + ' file, items ' + items.error.code);
    })();"""
    done = ext_test(*board(tmp_path, script))
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout + done.stderr
    assert any(re.match(T + r"call    notes\.list \d+ ms ok$", line) for line in lines)
    recorded = "http_error: HTTP 404 (as its fixture recorded)"
    assert any(" call    api.items " in line and line.endswith(recorded) for line in lines)
    assert any(line.endswith("console [info] 1 file, items http_error (main.js:4)") for line in lines)
    assert lines[-1].endswith("result  PASS: the page loaded; 2 call(s), none failed; no uncaught error")


def test_an_uncaught_error_or_a_call_without_its_fixture_fails_with_exit_code_1(tmp_path: Path) -> None:
    script = """(async () => {
      await helm.call('api', 'owner', {});
      null.boom;
    })();"""
    done = ext_test(*board(tmp_path, script))
    lines = done.stdout.splitlines()
    assert done.returncode == 1
    assert any(
        " error   Uncaught (in promise) TypeError: Cannot read properties of null" in line for line in lines
    )
    failed = [line for line in lines if " failed  " in line]
    assert len(failed) == 2
    assert "api.owner" in failed[0] and "unavailable: no fixture answers api.owner" in failed[0]
    assert lines[-1].endswith("result  FAIL: 1 uncaught error(s), 1 failed call(s)")


def test_a_broken_fixture_fails_before_the_page_starts(tmp_path: Path) -> None:
    folder, fixtures = board(tmp_path, "")
    (fixtures / "api.json").write_text('{"version": 1, "connection": "api", "calls": [{}]}', encoding="utf-8")
    done = ext_test(folder, fixtures)
    assert done.returncode == 1
    assert (
        f'{fixtures / "api.json"}: $.calls[0]: must be an object with "operation" and "envelope"'
        in done.stderr
    )
    assert done.stdout == ""
