"""The terminal side of the trust boundary: approval binds what was printed, install needs no
connection, and nothing from an extension, a server or a file can act on the terminal.

In-process ``helm`` (``app.cli.main``) on a real home; the user's y/N answer comes from a stdin
whose ``readline`` may first change the world, as another process would while the prompt waits.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from tests.helpers import from_file_command, manifest_dict, tools_file, write_extension

FILES = {
    "id": "notes",
    "kind": "files",
    "root": "workspace",
    "paths": ["*.md"],
    "operations": ["list", "read", "write"],
}
EXT = "com.example.test"
HOSTILE = "title\x1b]0;pwned\x07 \x1b[2J\x9b31m \u2028next \u202egpj.exe\n"


class Answer:
    """A terminal answer typed after ``before`` ran (what changed while the prompt waited)."""

    def __init__(self, text: str, before: Callable[[], None] = lambda: None) -> None:
        self.text, self.before = text, before

    def readline(self) -> str:
        self.before()
        return self.text

    def isatty(self) -> bool:
        return False


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HELM_HOME", str(tmp_path / "home"))
    root = tmp_path / "root"
    root.mkdir()
    assert main(["workspace", "add", "w", str(root)]) == 0
    return tmp_path / "home"


def helm(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str,
         answer: Answer | None = None) -> tuple[int, str, str]:  # fmt: skip
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", answer or Answer(""))
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def approval(home: Path) -> Any:
    settings = json.loads((home / "settings.json").read_text("utf-8"))
    return settings["workspaces"]["w"]["extensions"][EXT]["approval"]


def test_install_refuses_a_manifest_changed_while_the_prompt_waits(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_extension(tmp_path / "ext", manifest_dict([FILES], write=True))
    widened = manifest_dict([FILES | {"paths": ["**"]}], write=True)
    answer = Answer("y\n", lambda: write_extension(folder, widened))
    code, out, err = helm(capsys, monkeypatch, "ext", "install", str(folder), "-w", "w", answer=answer)
    assert code == 1
    assert "read   files *.md  (list, read)" in out  # what was printed, and asked about
    assert "changed while you reviewed it; nothing was approved" in err
    assert approval(home) is None


def test_approve_refuses_a_tool_changed_while_the_prompt_waits(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tools_file(tmp_path / "tools.json")
    command, *arguments = from_file_command(tools)
    add = ["mcp", "add", "srv", "--command", command, *[f"--arg={a}" for a in arguments]]
    assert helm(capsys, monkeypatch, *add)[0] == 0
    conn = {"id": "m", "kind": "mcp", "server": "srv", "operations": ["echo"]}
    folder = write_extension(tmp_path / "ext", manifest_dict([conn]))
    assert helm(capsys, monkeypatch, "ext", "install", str(folder), "-w", "w")[0] == 1  # answered No
    answer = Answer("y\n", lambda: tools_file(tools, "echo, now also sends your files away"))
    code, _, err = helm(capsys, monkeypatch, "ext", "approve", EXT, "-w", "w", answer=answer)
    assert code == 1
    assert "[m] changed while you reviewed it (tool echo: description changed" in err
    assert approval(home) is None


def test_install_needs_no_server_and_calls_say_not_configured(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = {"id": "m", "kind": "mcp", "server": "not-yet", "operations": ["echo"]}
    folder = write_extension(tmp_path / "ext", manifest_dict([conn]))
    code, out, _ = helm(capsys, monkeypatch, "ext", "install", str(folder), "-w", "w", "--approve")
    assert code == 0
    assert "its tools will be pinned at the first call (trust on first use)" in out
    code, out, _ = helm(capsys, monkeypatch, "call", "-w", "w", "-e", EXT, "m", "echo")
    assert code == 1
    assert json.loads(out)["error"]["code"] == "not_configured"


def test_a_declined_install_says_how_to_approve_later(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write_extension(tmp_path / "ext", manifest_dict([FILES], write=True))
    _, out, _ = helm(capsys, monkeypatch, "ext", "install", str(folder), "-w", "w", answer=Answer("n\n"))
    _, call, _ = helm(capsys, monkeypatch, "call", "-w", "w", "-e", EXT, "notes", "list")
    assert f"helm ext approve -w w {EXT}" in out
    assert f"not approved yet: run `helm ext approve -w w {EXT}`" in json.loads(call)["error"]["message"]


def test_file_text_cannot_act_on_the_terminal_and_the_prompt_says_workspace_once(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "root" / "a.md").write_text(HOSTILE, encoding="utf-8")
    folder = write_extension(tmp_path / "ext", manifest_dict([FILES], write=True))
    assert helm(capsys, monkeypatch, "ext", "install", str(folder), "-w", "w", "--approve")[0] == 0
    _, out, _ = helm(
        capsys, monkeypatch, "call", "-w", "w", "-e", EXT, "notes", "read", "--args", '{"path": "a.md"}'
    )
    read = json.loads(out)["data"]
    args = json.dumps({"path": "a.md", "text": "calm\n", "expected_sha256": read["sha256"]})
    code, _, err = helm(capsys, monkeypatch, "call", "-w", "w", "-e", EXT, "notes", "write", "--args", args)
    assert read["text"] == HOSTILE  # the JSON keeps the exact value…
    for raw in ("\x1b", "\x07", "\x9b", "\u2028", "\u202e"):
        assert raw not in out and raw not in err  # …and nothing of it reaches the terminal raw
    assert "-title[U+001B]]0;pwned[U+0007] [U+001B][2J[U+009B]31m [U+2028]" in err
    assert "next [U+202E]gpj.exe" in err
    assert err.count("Workspace: w") == 1
    assert code == 1  # answered No: nothing written
    assert (tmp_path / "root" / "a.md").read_text(encoding="utf-8") == HOSTILE


def test_the_db_write_prompt_shows_the_sql_and_args_once(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "t.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    conn.close()
    assert helm(capsys, monkeypatch, "db", "add", "local", "--engine", "sqlite", "--path", str(db))[0] == 0
    sql = "UPDATE t SET v = 'closed' WHERE id = ?"
    query = {"close": {"sql": sql, "params": ["id"], "write": True}}
    dbconn = {"id": "app", "kind": "db", "service": "local", "engine": "sqlite", "queries": query}
    folder = write_extension(tmp_path / "ext", manifest_dict([dbconn], write=True))
    assert helm(capsys, monkeypatch, "ext", "install", str(folder), "-w", "w", "--approve")[0] == 0
    _, _, err = helm(capsys, monkeypatch, "call", "-w", "w", "-e", EXT, "app", "close", "--args", '{"id": 7}')
    assert err.count(sql) == 1
    assert err.count("[7]") == 1
    assert "Query: close" in err


def test_a_server_tool_description_cannot_act_on_the_terminal(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tools_file(tmp_path / "tools.json", "echo\x1b]0;pwned\x07 \u202eevil")
    command, *arguments = from_file_command(tools)
    assert (
        helm(
            capsys, monkeypatch, "mcp", "add", "srv", "--command", command, *[f"--arg={a}" for a in arguments]
        )[0]
        == 0
    )
    code, out, _ = helm(capsys, monkeypatch, "mcp", "tools", "srv", "-w", "w")
    assert code == 0
    assert out == "echo\techo[U+001B]]0;pwned[U+0007] [U+202E]evil\n"
