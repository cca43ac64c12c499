"""A stdio server that does not start says why: the program missing (and what to install), its
exit code, and, for the user only, the end of what it wrote on stderr with its token removed."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from app.cli import main
from broker.credentials import FileStore
from broker.kinds.mcp import MCP
from broker.kinds.mcp.form import probe
from broker.mcp import profiles
from broker.workspaces import add_workspace
from tests.helpers import new_broker
from tests.unit.kinds.mcp_setup import TOKEN, add_stdio, mcp_extension

SAY = "sys.stderr.write('config missing for ' + os.environ['SRV_TOKEN'] + '\\nboom\\n')"
CRASH = [sys.executable, "-c", f"import os, sys; {SAY}; sys.exit(3)"]


async def test_a_server_that_exits_says_its_exit_code_and_the_extension_never_sees_its_stderr(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "srv", CRASH, token_env="SRV_TOKEN")
        ctx = await mcp_extension(broker, tmp_path, "srv", ["echo"])
        result = await broker.call(ctx, "m", "echo", {})
    assert result["error"]["code"] == "unavailable"
    assert "could not be started: it exited with code 3 before answering" in result["error"]["message"]
    assert "boom" not in str(result) and TOKEN not in str(result)


async def test_activity_keeps_the_stderr_tail_for_the_user_and_never_writes_it_to_disk(tmp_path: Path):
    home = tmp_path / "home"
    async with new_broker(home) as broker:
        add_stdio(broker, "srv", CRASH, token_env="SRV_TOKEN")
        ctx = await mcp_extension(broker, tmp_path, "srv", ["echo"])
        result = await broker.call(ctx, "m", "echo", {})
        (record,) = broker.activity.recent
    assert result["error"]["code"] == "unavailable" and "boom" not in str(result)
    assert record.outcome == "unavailable"
    assert "--- its stderr (last lines) ---\nconfig missing for [removed]\nboom" in record.detail
    assert TOKEN not in record.detail
    on_disk = (home / "activity.jsonl").read_text()
    assert '"outcome":"unavailable"' in on_disk and "boom" not in on_disk and "stderr" not in on_disk


def test_helm_mcp_tools_shows_the_servers_last_stderr_lines_without_its_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    home = tmp_path / "home"
    monkeypatch.setenv("HELM_HOME", str(home))
    monkeypatch.setattr("app.commands.common.open_store", lambda path: FileStore(path / "credentials.json"))
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{TOKEN}\n"))
    (tmp_path / "root").mkdir()
    assert main(["workspace", "add", "w", str(tmp_path / "root")]) == 0
    assert main(["mcp", "add", "srv", "--token-env", "SRV_TOKEN", "--", *CRASH]) == 0
    capsys.readouterr()
    assert main(["mcp", "tools", "srv"]) == 1
    err = capsys.readouterr().err
    assert "exited with code 3" in err
    assert "--- its stderr (last lines) ---\nconfig missing for [removed]\nboom" in err
    assert TOKEN not in err


async def test_a_missing_launcher_is_named_to_the_user_with_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    empty = tmp_path / "empty-path"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    async with new_broker(tmp_path / "home") as broker:
        add_workspace(broker.home, "w", tmp_path)
        profiles.MCP_SERVERS.store(broker.home, broker.credentials).save(
            profiles.parse("time", {"command": ["uvx", "mcp-server-time"]})
        )
        outcome = await probe(await broker.kind(MCP), "time", {})
    assert not outcome.ok
    assert outcome.message == "MCP server 'time' could not be started: its program could not be run"
    assert outcome.details == (
        "the program 'uvx' was not found; install uv (pipx install uv, or pip install uv)",
    )


async def test_the_test_button_lists_a_failing_servers_last_stderr_lines(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_workspace(broker.home, "w", tmp_path)
        add_stdio(broker, "srv", CRASH, token_env="SRV_TOKEN")
        outcome = await probe(await broker.kind(MCP), "srv", {})
    assert not outcome.ok
    assert outcome.details == ("--- its stderr (last lines) ---", "config missing for [removed]", "boom")
