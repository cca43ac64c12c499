"""Install before connections exist; MCP tools pinned at first contact (trust on first use).

Real MCP servers from tests/servers (tdt_like.py, which can change a tool on purpose), the real
broker and a real home.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from broker import Broker
from broker.extensions import review
from broker.kinds.mcp.adapter import McpKind
from broker.kinds.mcp.rules import McpConnection
from broker.settings import Workspace
from tests.helpers import manifest_dict, new_broker, setup_extension
from tests.unit.kinds.mcp_setup import TDT_LIKE, add_stdio, code, mcp_extension, use_limits

TOOLS = ["tdt_workspace_status", "mutate", "fail"]
WAIT = 20.0


def pins_of(broker: Broker, extension: str) -> dict[str, Any]:
    approval = broker.home.settings().workspace("ws").extensions[extension].approval
    assert approval is not None
    return approval.pins


@pytest.fixture(autouse=True)
def short_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    use_limits(monkeypatch)


async def test_an_extension_is_approved_before_its_server_exists_and_calls_say_not_configured(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await mcp_extension(broker, tmp_path, "later", TOOLS)
        result = await broker.call(ctx, "m", "tdt_workspace_status", {})
        reviewed = await review(broker, "ws", ctx.extension)
        approval = broker.home.settings().workspace("ws").extensions[ctx.extension].approval
    assert approval is not None and approval.pins == {}
    assert code(result) == "not_configured"
    assert "no MCP server named 'later'" in result["error"]["message"]
    (note,) = reviewed.pinning
    assert note.startswith("[m] not pinned now (no MCP server named 'later'")
    assert note.endswith("its tools will be pinned at the first call (trust on first use)")


async def test_a_server_that_cannot_start_does_not_stop_approval_and_calls_say_unavailable(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "broken", [str(tmp_path / "missing-server")])
        ctx = await mcp_extension(broker, tmp_path, "broken", TOOLS)
        result = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert code(result) == "unavailable"


async def test_tools_are_pinned_at_first_contact_recorded_shown_and_a_change_is_refused(
    tmp_path: Path,
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await mcp_extension(broker, tmp_path, "odd", TOOLS)
        add_stdio(broker, "odd", TDT_LIKE)  # the user sets the server up after approving
        first = await broker.call(ctx, "m", "tdt_workspace_status", {})
        again = await broker.call(ctx, "m", "fail", {})
        pins = pins_of(broker, ctx.extension)
        records = [(r.decision, r.outcome, r.connection) for r in broker.audit.records()]
        reviewed = await review(broker, "ws", ctx.extension)
        await broker.call(ctx, "m", "mutate", {})
        changed = await broker.call(ctx, "m", "tdt_workspace_status", {})
    assert first["ok"]
    assert code(again) == "tool_error"  # the same pin serves every later call
    assert set(pins["m"]["tools"]) == set(TOOLS)
    assert pins["m"]["first_contact"]
    assert records == [("pinned", "first contact", "m")]
    assert reviewed.pinning == (
        f"[m] tools pinned at first contact on {pins['m']['first_contact']} (trust on first use)",
    )
    assert code(changed) == "refused"
    assert "changed since you approved it" in changed["error"]["message"]


async def test_a_write_tool_is_pinned_before_its_dialog_describes_it(tmp_path: Path) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await mcp_extension(broker, tmp_path, "odd", ["fail"], ["tdt_workspace_status"])
        add_stdio(broker, "odd", TDT_LIKE)
        summary = await broker.describe_write(ctx, "m", "tdt_workspace_status", {})
        pins = pins_of(broker, ctx.extension)
    assert summary.title == "Confirm tool call"
    assert set(pins["m"]["tools"]) == {"fail", "tdt_workspace_status"}


def contacts_meet(monkeypatch: pytest.MonkeyPatch, count: int, second_differs: bool = False) -> list[Any]:
    """The MCP kind's pins (at first contact) each wait until ``count`` of them have asked the
    server, so the calls reach their first contact at once; with ``second_differs`` the server
    answers the second one with another definition of the tool called (it changed between the
    two). Returns the pins in the order they were fetched."""
    real = McpKind.pin
    fetched: list[Any] = []
    met = asyncio.Event()

    async def pin(self: McpKind, workspace: Workspace, conn: McpConnection) -> Mapping[str, Any]:
        got = dict(await real(self, workspace, conn))
        if second_differs and len(fetched) == 1:
            tools = dict(got["tools"])
            tools["tdt_workspace_status"] = {**tools["tdt_workspace_status"], "digest": "0" * 64}
            got["tools"] = tools
        fetched.append(got)
        if len(fetched) == count:
            met.set()
        await asyncio.wait_for(met.wait(), WAIT)
        return got

    monkeypatch.setattr(McpKind, "pin", pin)
    return fetched


async def test_two_first_calls_at_once_pin_once_and_both_are_checked_against_that_one_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with new_broker(tmp_path / "home") as broker:
        ctx = await mcp_extension(broker, tmp_path, "odd", TOOLS)
        add_stdio(broker, "odd", TDT_LIKE)
        fetched = contacts_meet(monkeypatch, 2, second_differs=True)
        results = await asyncio.gather(*(broker.call(ctx, "m", "tdt_workspace_status", {}) for _ in range(2)))
        pinned = pins_of(broker, ctx.extension)["m"]["tools"]
        records = [(r.decision, r.outcome) for r in broker.audit.records()]
    real, changed = (f["tools"] for f in fetched)
    assert pinned in (real, changed) and real != changed
    # The pin stored is the one both calls were checked against: the server's real definition
    # passes, the changed one is refused, for both calls alike.
    expected = None if pinned == real else "refused"
    assert [code(r) for r in results] == [expected, expected]
    assert records.count(("pinned", "first contact")) == 1


async def test_two_extensions_first_calls_at_once_each_pin_into_its_own_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = {"id": "m", "kind": "mcp", "server": "odd", "operations": TOOLS}
    async with new_broker(tmp_path / "home") as broker:
        one = await setup_extension(broker, tmp_path, manifest_dict([conn], id="com.example.one"))
        two = await setup_extension(broker, tmp_path, manifest_dict([conn], id="com.example.two"))
        add_stdio(broker, "odd", TDT_LIKE)  # set up after both approvals: nothing pinned yet
        contacts_meet(monkeypatch, 2)
        results = await asyncio.gather(
            *(broker.call(ctx, "m", "tdt_workspace_status", {}) for ctx in (one, two))
        )
        pins = {ctx.extension: pins_of(broker, ctx.extension) for ctx in (one, two)}
        records = sorted((r.extension, r.decision) for r in broker.audit.records() if r.decision == "pinned")
    assert [code(r) for r in results] == [None, None]
    assert all(set(p["m"]["tools"]) == set(TOOLS) and p["m"]["first_contact"] for p in pins.values())
    assert records == [("com.example.one", "pinned"), ("com.example.two", "pinned")]
