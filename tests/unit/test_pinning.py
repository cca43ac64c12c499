"""Install before connections exist; MCP tools pinned at first contact (trust on first use).

Real MCP servers from tests/servers (tdt_like.py, which can change a tool on purpose), the real
broker and a real home.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from broker import Broker
from broker.extensions import review
from tests.helpers import new_broker
from tests.unit.kinds.mcp_setup import TDT_LIKE, add_stdio, code, mcp_extension, use_limits

TOOLS = ["tdt_workspace_status", "mutate", "fail"]


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
