"""The MCP servers in the README can be added exactly as written there (a new user's first try)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from app.cli import main
from tests.support import REPO


def readme_lines(prefix: str) -> list[str]:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.startswith(prefix)]


@pytest.mark.parametrize("line", readme_lines("helm mcp add"))
def test_a_readme_mcp_server_is_added_as_written(line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HELM_HOME", str(tmp_path / "home"))
    argv = shlex.split(line)[1:]
    assert main(argv) == 0
    name = argv[2]
    stored = json.loads((tmp_path / "home" / "settings.json").read_text())["mcp_servers"][name]
    assert stored["command"] == argv[argv.index("--") + 1 :]


def test_the_readme_shows_an_npx_and_a_uvx_server() -> None:
    tools = {shlex.split(line)[shlex.split(line).index("--") + 1] for line in readme_lines("helm mcp add")}
    assert {"npx", "uvx"} <= tools
