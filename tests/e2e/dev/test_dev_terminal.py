"""``helm dev`` as a real process: what it streams to the terminal while an author works.

The page runs in the real web view (offscreen), calls a real json-server through an http
profile and the workspace's files; the test edits the folder as an author would and reads the
lines that come out, then stops ``helm dev`` with Ctrl+C.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from tests.e2e.conftest import QT_NOISE
from tests.e2e.dev.terminal_kit import Terminal
from tests.servers.services import JsonServer

EXT = "com.example.terminal"
T = r"^\d\d:\d\d:\d\d\.\d{3} "  # every line starts with the local time
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><script src="main.js" defer></script></head>
<body><p id="out">…</p></body></html>
"""
SCRIPT = """'use strict';
console.log('page started');
console.warn('esc \\u001b[2J here');
(async () => {
  await helm.call('notes', 'list', {});
  await helm.call('api', 'items', { user: 'me' });
  setTimeout(() => { throw new Error('boom'); }, 0);
})();
"""


def manifest(*, extra_call: bool = False, broken: bool = False) -> dict[str, Any]:
    paths = ["../outside/*"] if broken else ["*.md"]
    calls: dict[str, Any] = {"items": {"method": "GET", "path": "/items", "query": {"_limit": "{limit}"}}}
    if extra_call:
        calls["profile"] = {"method": "GET", "path": "/profile"}
    return {
        "id": EXT,
        "name": "Terminal",
        "version": "1.0.0",
        "kind": "gadget" if broken else "tool",
        "entry": "index.html",
        "connections": [
            {"id": "notes", "kind": "files", "root": "workspace", "paths": paths, "operations": ["list"]},
            {"id": "api", "kind": "http", "service": "local", "calls": calls},
        ],
    }


def write_manifest(folder: Path, raw: dict[str, Any]) -> None:
    (folder / "manifest.json").write_text(json.dumps(raw, indent=2), encoding="utf-8")


@pytest.fixture
def extension(tmp_path: Path, json_server: JsonServer) -> tuple[Path, Path]:
    folder = tmp_path / "ext"
    folder.mkdir()
    write_manifest(folder, manifest())
    (folder / "index.html").write_text(PAGE, encoding="utf-8")
    (folder / "main.js").write_text(SCRIPT, encoding="utf-8")
    (folder / "plan.md").write_text("# Plan\n", encoding="utf-8")
    home = tmp_path / "home"
    add = ["service", "add", "local", "--base-url", json_server.url, "--no-token", "--home", str(home)]
    assert main(add) == 0
    return folder, home


def noise(lines: list[str]) -> list[str]:
    chromium = re.compile(r"^\[\d+:\d+:\d+/\d+\.\d+:(ERROR|WARNING|INFO)")
    return [line for line in lines if chromium.match(line) or any(re.match(p, line) for p in QT_NOISE)]


def test_helm_dev_streams_reloads_lint_calls_hints_and_the_console_to_the_terminal(
    extension: tuple[Path, Path],
) -> None:
    folder, home = extension
    helm = Terminal("dev", str(folder), "--yes-dev", "--home", str(home))
    try:
        helm.wait_for(T + rf"helm    workspace dev \(root {re.escape(str(folder))}\) in the Helm home ")
        helm.wait_for(T + r"uses    \[notes\] files — files in the workspace$")
        helm.wait_for(T + r"uses    \[api\] http — service local: set up$")
        helm.wait_for(T + rf"review  approved {EXT}$")
        helm.wait_for(T + r"reload  index\.html loaded in \d+ ms$")
        helm.wait_for(T + r"call    notes\.list \d+ ms ok$")
        helm.wait_for(T + r"call    api\.items \d+ ms ok$")
        helm.wait_for(T + r"hint    api\.items: query placeholder \{limit\} had no value: query parameter "
                      r"'_limit' was not sent$")  # fmt: skip
        helm.wait_for(T + r"hint    api\.items: argument 'user' is not used by any placeholder of this call$")
        helm.wait_for(T + r"console \[info\] page started \(main\.js:2\)$")
        helm.wait_for(T + r"console \[warning\] esc \[U\+001B\]\[2J here \(main\.js:3\)$")
        helm.wait_for(T + r"error   Uncaught Error: boom \(main\.js:7\)$")

        broken = helm.mark()
        write_manifest(folder, manifest(broken=True))
        helm.wait_for(T + r"lint    \$\.kind: ", since=broken)
        helm.wait_for(T + r"lint    \$\.connections\[0\]\.paths\[0\]: ", since=broken)
        helm.wait_for(T + r"lint    2 problem\(s\) in .*manifest\.json: the page stays closed", since=broken)

        fixed = helm.mark()
        write_manifest(folder, manifest(extra_call=True))
        helm.wait_for(T + r"lint    .*manifest\.json: no problems$", since=fixed)
        helm.wait_for(T + rf"review  approving {EXT} on the terminal \(--yes-dev\):$", since=fixed)
        helm.wait_for(T + r"review  \[api\] \+ read profile: GET /profile$", since=fixed)
        helm.wait_for(T + r"reload  index\.html loaded in \d+ ms$", since=fixed)
        assert helm.interrupt() == 0
    finally:
        helm.kill()
    helm.wait_for(T + r"helm    helm dev ended$")
    assert not any("\x1b" in line for line in helm.lines)
    assert noise(helm.errors) == []


def test_the_engine_and_qt_speak_on_the_terminal_only_with_verbose(extension: tuple[Path, Path]) -> None:
    folder, home = extension
    helm = Terminal("dev", str(folder), "--yes-dev", "--verbose", "--home", str(home))
    try:
        helm.wait_for(T + r"reload  index\.html loaded in \d+ ms$")
        assert helm.interrupt() == 0
    finally:
        helm.kill()
    assert noise(helm.errors) != []
