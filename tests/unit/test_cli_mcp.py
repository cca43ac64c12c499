"""``helm mcp add|list|remove|tools`` and ``helm workspace tdt-command``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli import main
from broker.credentials import FileStore
from broker.settings import Home
from tests.unit.kinds.mcp_setup import TDT_LIKE


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("HELM_HOME", str(h))
    # The CLI's store without a keychain is the 0600 file, the one these tests read back.
    monkeypatch.setattr("app.commands.common.open_store", lambda path: FileStore(path / "credentials.json"))
    return h


def run(capsys: pytest.CaptureFixture[str], *argv: str, stdin: str = "") -> tuple[int, str, str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdin", io.StringIO(stdin))
        code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_a_stdio_server_keeps_the_token_out_of_settings(home: Path, capsys: pytest.CaptureFixture[str]):
    code, out, _ = run(
        capsys, "mcp", "add", "t", "--command", TDT_LIKE[0], "--arg", TDT_LIKE[1], "--token-env", "T_TOKEN",
        stdin="tok-abc\n",
    )  # fmt: skip
    settings = (home / "settings.json").read_text()
    assert code == 0
    assert "saved" in out
    assert json.loads(settings)["mcp_servers"]["t"] == {"command": TDT_LIKE, "token_env": "T_TOKEN"}
    assert "tok-abc" not in settings
    assert FileStore(home / "credentials.json").get("mcp_servers/t/token") == "tok-abc"


def _saved_command(home: Path, name: str) -> object:
    return json.loads((home / "settings.json").read_text())["mcp_servers"][name]["command"]


def test_add_takes_arguments_that_start_with_a_dash(home: Path, capsys: pytest.CaptureFixture[str]):
    code, _, err = run(
        capsys, "mcp", "add", "gh", "--command", "npx", "--arg", "-y", "--arg", "@example/github-mcp",
        "--arg", "--stdio",
    )  # fmt: skip
    assert (code, err) == (0, "")
    assert _saved_command(home, "gh") == ["npx", "-y", "@example/github-mcp", "--stdio"]


def test_add_takes_the_whole_command_line_after_a_double_dash(home: Path, capsys: pytest.CaptureFixture[str]):
    code, out, _ = run(capsys, "mcp", "add", "t", "--token-env", "T", "--", "npx", "-y", "x", "--arg", "v",
                       stdin="tok\n")  # fmt: skip
    assert code == 0
    assert "saved" in out
    assert _saved_command(home, "t") == ["npx", "-y", "x", "--arg", "v"]


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        pytest.param(("--command", "uvx", "--", "uvx"), "command line once", id="both-forms"),
        pytest.param(
            ("--url", "https://mcp.example.com/mcp", "--", "uvx"), "command line once", id="url-too"
        ),
        pytest.param((), "--command CMD, --url URL, or -- CMD", id="neither"),
    ],
)
def test_add_says_how_to_give_the_server_when_the_forms_clash_or_are_missing(
    home: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
):
    code, _, err = run(capsys, "mcp", "add", "t", *argv)
    assert code == 1
    assert says in err
    assert not (home / "settings.json").exists() or "mcp_servers" not in (home / "settings.json").read_text()


def test_add_passes_named_variables_and_refuses_a_secret_looking_one(
    home: Path, capsys: pytest.CaptureFixture[str]
):
    code, _, _ = run(capsys, "mcp", "add", "t", "--pass-env", "MY_CONFIG_DIR", "--", "x")
    refused, _, err = run(capsys, "mcp", "add", "u", "--pass-env", "GITHUB_TOKEN", "--", "x")
    _, listed, _ = run(capsys, "mcp", "list")
    assert code == 0
    assert json.loads((home / "settings.json").read_text())["mcp_servers"]["t"]["pass_env"] == [
        "MY_CONFIG_DIR"
    ]
    assert refused == 3
    assert "credential store" in err
    assert "t\tx  (also passes MY_CONFIG_DIR)" in listed


def test_help_lists_only_actions_that_exist(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "test MCP servers" not in capsys.readouterr().out


def test_add_refuses_a_loader_variable_before_asking_for_the_token(
    home: Path, capsys: pytest.CaptureFixture[str]
):
    code, _, err = run(capsys, "mcp", "add", "t", "--command", "x", "--token-env", "NODE_OPTIONS")
    assert code == 3
    assert "load or run" in err


def test_add_an_http_server_without_a_token_and_list_it(home: Path, capsys: pytest.CaptureFixture[str]):
    code, _, _ = run(capsys, "mcp", "add", "h", "--url", "https://mcp.example.com/mcp", "--no-token")
    _, out, _ = run(capsys, "mcp", "list")
    assert code == 0
    assert "h\thttps://mcp.example.com/mcp  (auth: none)" in out


def test_add_an_http_server_over_plain_http_elsewhere_than_loopback_is_refused(
    home: Path, capsys: pytest.CaptureFixture[str]
):
    code, _, err = run(capsys, "mcp", "add", "h", "--url", "http://mcp.example.com/mcp", stdin="tok\n")
    assert code == 3
    assert "https" in err


def test_tools_lists_the_servers_tools_and_remove_forgets_it(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    (tmp_path / "root").mkdir()
    run(capsys, "workspace", "add", "w", str(tmp_path / "root"))
    run(capsys, "mcp", "add", "t", "--command", TDT_LIKE[0], "--arg", TDT_LIKE[1])
    code, out, _ = run(capsys, "mcp", "tools", "t")
    removed, _, _ = run(capsys, "mcp", "remove", "t")
    again, _, err = run(capsys, "mcp", "tools", "t")
    assert code == 0
    assert "tdt_workspace_status\ttdt_workspace_status tool" in out
    assert removed == 0
    assert again == 1
    assert "not_configured" in err


def test_workspace_tdt_command_sets_and_clears_the_command(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    (tmp_path / "root").mkdir()
    run(capsys, "workspace", "add", "w", str(tmp_path / "root"))
    run(capsys, "workspace", "tdt-command", "w", "--", "/opt/tdt/bin/tdt", "mcp", "serve")
    set_to = Home(home).settings().workspace("w").tdt_command
    run(capsys, "workspace", "tdt-command", "w")
    cleared = Home(home).settings().workspace("w").tdt_command
    assert set_to == ["/opt/tdt/bin/tdt", "mcp", "serve"]
    assert cleared is None
