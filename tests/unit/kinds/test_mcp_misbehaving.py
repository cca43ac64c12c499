"""The mcp kind against a server that misbehaves on purpose (tests/servers/tdt_like.py)."""

from __future__ import annotations

import os
import select
from pathlib import Path

import pytest

from broker import Decision
from broker.kinds.mcp import MCP
from tests.helpers import ScriptedConfirmer, new_broker
from tests.unit.kinds.mcp_setup import TDT_LIKE, add_stdio, code, mcp_extension, use_limits

READS = ["tdt_workspace_status", "crash", "hang", "stall", "flood", "shout", "mutate", "ask_sampling", "fail"]


@pytest.fixture(autouse=True)
def short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    use_limits(monkeypatch)


def _ends_within(pid: int, seconds: float) -> bool:
    """Whether ``pid`` (not our child) has ended, or ends within ``seconds``: a SIGKILL is
    delivered asynchronously, so a loaded machine may take a moment to end the process."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], seconds)[0]) or _zombie(pid)
    finally:
        os.close(fd)


async def test_structured_content_is_the_data(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        result = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert result["ok"]
    assert result["data"]["data"] == {"projects": 2, "reminders": 1}


async def test_is_error_returns_tool_error_with_the_result_in_data(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        result = await broker.call(ctx, "m", "fail", {})
    assert code(result) == "tool_error"
    assert result["data"] == [{"type": "text", "text": "it broke"}]


async def test_an_undeclared_tool_is_refused_before_the_server_starts(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", ["tdt_workspace_status"], approved=False)
        await (await broker.mcp_servers()).aclose()
        result = await broker.call(ctx, "m", "env", {})
    assert code(result) == "refused"


async def test_an_unknown_server_returns_not_configured(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        with broker.home.update() as settings:
            del settings.profiles("mcp_servers")["odd"]
        result = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert code(result) == "not_configured"


async def test_a_server_that_cannot_start_is_unavailable(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        add_stdio(broker, "odd", [str(tmp_path / "no-such-program")])
        result = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert code(result) == "unavailable"
    assert "no-such-program" not in result["error"]["message"]


async def test_a_crash_is_unavailable_and_the_next_call_starts_the_server_again(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        crashed = await broker.call(ctx, "m", "crash", {})
        again = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert code(crashed) == "unavailable"
    assert again["ok"]


async def test_a_hung_child_times_out_and_is_killed_with_its_process_group(tmp_path: Path):
    pid_file = tmp_path / "grandchild.pid"
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        result = await broker.call(ctx, "m", "hang", {"pid_file": str(pid_file)})
        grandchild = int(pid_file.read_text())
        gone = _ends_within(grandchild, 10.0)
        after = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert code(result) == "timeout"
    assert gone
    assert after["ok"]


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


async def test_a_stalled_request_times_out_and_the_session_is_kept(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        first = await broker.call(ctx, "m", "tdt_workspace_status", {})
        session = await (await broker.kind(MCP)).session(broker.home.settings().workspace("ws"), "odd")
        stalled = await broker.call(ctx, "m", "stall", {})
        still = session.alive
        after = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert first["ok"]
    assert after["ok"]
    assert code(stalled) == "timeout"
    assert still


@pytest.mark.parametrize("id_last", [False, True], ids=["id-first", "id-last"])
async def test_a_flood_on_one_line_is_too_large(tmp_path: Path, id_last: bool):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        result = await broker.call(ctx, "m", "flood", {"size": 8 * 1024 * 1024, "id_last": id_last})
        after = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert code(result) == "too_large"
    assert after["ok"]


async def test_a_result_just_over_one_mib_is_too_large(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        over = await broker.call(ctx, "m", "flood", {"size": 1024 * 1024 + 1})
        under = await broker.call(ctx, "m", "flood", {"size": 1000 * 1024})
    assert code(over) == "too_large"
    assert under["ok"]


async def test_a_tool_list_over_one_mib_is_read_and_a_small_call_still_answers(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "big", [*TDT_LIKE, "--many-tools", "5002"])
        ctx = await mcp_extension(broker, tmp_path, "big", ["tdt_workspace_status", "flood"])
        small = await broker.call(ctx, "m", "tdt_workspace_status", {})
        over = await broker.call(ctx, "m", "flood", {"size": 1024 * 1024 + 1})
    assert small["ok"], small
    assert code(over) == "too_large"
    assert over["error"]["message"] == "MCP server 'big' sent a result larger than 1 MiB"


async def test_a_huge_message_naming_no_request_ends_the_call_with_too_large(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        result = await broker.call(ctx, "m", "shout", {})
        after = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert code(result) == "too_large"
    assert after["ok"]


async def test_a_sampling_request_from_the_server_gets_an_error_reply(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        result = await broker.call(ctx, "m", "ask_sampling", {})
    reply = result["data"]["reply"]
    assert "error" in reply
    assert "result" not in reply


async def test_a_changed_tool_schema_is_refused_until_approved_again(tmp_path: Path):
    from broker.extensions import approve, review

    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", READS)
        assert (await broker.call(ctx, "m", "mutate", {}))["ok"]
        changed = await broker.call(ctx, "m", "tdt_workspace_status", {})
        other = await broker.call(ctx, "m", "fail", {})
        reviewed = await review(broker, "ws", ctx.extension)
        lines = list(reviewed.changes)
        await approve(broker, reviewed)
        after = list((await review(broker, "ws", ctx.extension)).changes)
        approved_again = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert code(changed) == "refused"
    assert "changed" in changed["error"]["message"]
    assert code(other) == "tool_error"  # other tools keep working
    assert len(lines) == 1
    assert lines[0].startswith("[m] tool tdt_workspace_status: input schema changed")
    assert '"everything"' in lines[0]
    assert approved_again["ok"]
    assert after == []


async def test_a_write_tool_shows_server_tool_and_args_and_runs_only_when_confirmed(tmp_path: Path):
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "odd", TDT_LIKE)
        ctx = await mcp_extension(broker, tmp_path, "odd", ["fail"], ["tdt_workspace_status"])
        declined = ScriptedConfirmer(Decision.DECLINED)
        no = await broker.request(ctx, "m", "tdt_workspace_status", {"b": 1, "a": "é"}, declined)
        yes = ScriptedConfirmer()
        ok = await broker.request(ctx, "m", "tdt_workspace_status", {"b": 1, "a": "é"}, yes)
        bare = await broker.call(ctx, "m", "tdt_workspace_status", {"b": 1})
    summary = yes.shown[0]
    assert summary.title == "Confirm tool call"
    assert dict(summary.fields)["MCP server"] == "odd"
    assert dict(summary.fields)["Tool"] == "tdt_workspace_status"
    assert summary.request == 'tdt_workspace_status {"b":1,"a":"é"}'
    assert code(no) == "declined"
    assert ok["ok"]
    assert code(bare) == "confirmation_required"
