"""``helm app list|add`` against the MCP App server built with the real SDK."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from broker.credentials import FileStore
from broker.settings import Home
from broker.summary import Decision
from tests.helpers import ScriptedConfirmer, new_broker
from tests.servers.services import mcp_app_command
from tests.unit.apps.app_setup import BOARD, harness

pytestmark = pytest.mark.usefixtures("mcp_app_server")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("HELM_HOME", str(h))
    monkeypatch.setattr("app.commands.common.open_store", lambda path: FileStore(path / "credentials.json"))
    (tmp_path / "root").mkdir()
    assert main(["workspace", "add", "ws", str(tmp_path / "root")]) == 0
    command = mcp_app_command("--resource", "https://cdn.example.com")
    argv = ["mcp", "add", "board", "--command", command[0], *(f"--arg={x}" for x in command[1:])]
    assert main(argv) == 0
    capsys.readouterr()
    return h


def helm(capsys: pytest.CaptureFixture[str], *argv: str, stdin: str = "") -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_app_list_shows_each_ui_resource_and_which_linked_tools_the_app_may_call(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = helm(capsys, "app", "list", "--server", "board")
    assert code == 0
    assert out.splitlines() == [
        f"{BOARD}\tBoard",
        "  WRITE add_item",
        "  read  list_items",
        "  not for the app: model_only",
        "  read  show_board",
    ]


def test_app_add_shows_the_review_and_adds_nothing_without_a_yes(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = helm(capsys, "app", "add", "--workspace", "ws", "--server", "board", BOARD, stdin="\n")
    assert code == 1
    assert "HTML sha256: " in out and "WRITE  tool add_item — confirmed each time" in out
    assert Home(home).settings().workspace("ws").extensions == {}


def test_app_add_with_yes_approves_the_app_with_the_allowed_resource_domain(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = helm(
        capsys, "app", "add", "-w", "ws", "-s", "board", BOARD,
        "--allow-resource-domain", "https://cdn.example.com", stdin="y\n",
    )  # fmt: skip
    (ext,) = Home(home).settings().workspace("ws").extensions.values()
    assert code == 0 and "added and approved" in out
    assert ext.approval is not None
    assert (
        '"allowResourceDomains": [\n      "https://cdn.example.com"'
        in (ext.path / "manifest.json").read_text()
    )


def test_adding_an_app_again_without_its_allowed_domain_says_the_domain_is_no_longer_allowed(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add = ("app", "add", "-w", "ws", "-s", "board", BOARD)
    assert helm(capsys, *add, "--allow-resource-domain", "https://cdn.example.com", stdin="y\n")[0] == 0
    code, out, _ = helm(capsys, *add, stdin="\n")
    assert code == 1
    assert "resourceDomains: https://cdn.example.com — blocked unless you allow them" in out
    assert "(allowed by your last approval)" in out
    assert (
        "no longer allowed: resource domain https://cdn.example.com (--allow-resource-domain keeps it)" in out
    )


def test_ext_approve_of_an_app_points_to_the_apps_own_review(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert helm(capsys, "app", "add", "-w", "ws", "-s", "board", BOARD, stdin="y\n")[0] == 0
    (ext_id,) = Home(home).settings().workspace("ws").extensions
    code, out, err = helm(capsys, "ext", "approve", "-w", "ws", ext_id, stdin="y\n")
    assert code != 0 and "approved" not in out
    assert f"is an MCP App: review and approve it with `helm app add -w ws -s board {BOARD}`" in err


def test_app_add_of_an_unknown_uri_says_where_to_look(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = helm(capsys, "app", "add", "-w", "ws", "-s", "board", "ui://helm-test/none", stdin="y\n")
    assert code == 1
    assert "offers no app 'ui://helm-test/none'; see `helm app list --server board`" in err


ODD = "\x1b[2J\x1b]0;pwned\x07\n  WRITE forged\u009b31m\t"
ODD_SHOWN = "[U+001B][2J[U+001B]]0;pwned[U+0007][U+000A]  WRITE forged[U+009B]31m[U+0009]"


@pytest.fixture
def odd_home(home: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    command = mcp_app_command("--odd", ODD)
    argv = ["mcp", "add", "odd", "--command", command[0], *(f"--arg={x}" for x in command[1:])]
    assert main(argv) == 0
    capsys.readouterr()
    return home


def test_app_list_shows_a_servers_escapes_and_line_breaks_as_visible_characters(
    odd_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = helm(capsys, "app", "list", "--server", "odd")
    assert code == 0
    assert "\x1b" not in out and "\u009b" not in out and "\t" not in out.replace(f"{BOARD}\t", "")
    assert f"{BOARD}\tBoard{ODD_SHOWN}" in out.splitlines()
    assert f"  read  odd{ODD_SHOWN}" in out.splitlines()


def test_app_add_shows_a_servers_escapes_and_line_breaks_as_visible_characters(
    odd_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = helm(capsys, "app", "add", "--workspace", "ws", "--server", "odd", BOARD, stdin="\n")
    assert code == 1
    assert "\x1b" not in out + err and "\u009b" not in out + err
    lines = out.splitlines()
    assert f"App Board{ODD_SHOWN} ({BOARD})" in lines
    assert f"  read   tool odd{ODD_SHOWN}" in lines
    declared = f"  declared frameDomains: https://odd.example.com{ODD_SHOWN} — "
    assert any(line.startswith(declared) for line in lines)
    assert not any(line.startswith("  WRITE forged") for line in lines)
    assert f"Add Board{ODD_SHOWN} to workspace ws?" in err


def test_app_add_with_read_marks_a_write_as_only_reading_and_refuses_a_tool_that_is_not_one(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add = ("app", "add", "-w", "ws", "-s", "board", BOARD)
    wrong, _, err = helm(capsys, *add, "--read", "list_items", stdin="y\n")
    code, out, _ = helm(capsys, *add, "--read", "add_item", stdin="y\n")
    (ext,) = Home(home).settings().workspace("ws").extensions.values()
    manifest = (ext.path / "manifest.json").read_text("utf-8")
    assert wrong == 1 and "only those can be marked as only reading" in err
    assert code == 0 and "you mark tool add_item as only reading" in out
    assert "Opens by calling tool show_board (a read)" in out
    assert '"reads": [\n      "add_item"\n    ]' in manifest


def test_an_app_added_with_read_on_the_terminal_calls_that_tool_without_a_confirmation(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    add = ("app", "add", "-w", "ws", "-s", "board", BOARD, "--read", "add_item")
    code, _, _ = helm(capsys, *add, stdin="y\n")
    (ext_id,) = Home(home).settings().workspace("ws").extensions
    confirm = ScriptedConfirmer(Decision.DECLINED)  # a question would decline the call

    async def call() -> dict[str, Any]:
        async with new_broker(home) as broker:
            h = await harness(broker, ext_id, confirm=confirm)
            answer = await h.call("add_item", {"text": "milk"})
            await h.session.aclose()
        return answer

    answer = asyncio.run(call())
    assert code == 0
    assert answer["result"]["structuredContent"] == {"items": ["first", "milk"]}
    assert confirm.shown == []
