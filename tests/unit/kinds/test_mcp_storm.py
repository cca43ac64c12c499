"""The mcp kind against a server that storms it (tests/servers/mcp_storm.py): list_changed after
every answer, more tools than Helm takes, an answer nested deeper than any parser goes, an answer
that is not a tool result."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from broker.mcp.session import MAX_TOOLS, McpLimits
from tests.helpers import new_broker
from tests.support import REPO
from tests.unit.kinds.mcp_setup import add_stdio, code, mcp_extension, use_limits

STORM = [sys.executable, str(REPO / "tests" / "servers" / "mcp_storm.py")]
# Long enough that no listing in these tests is made because time passed, however slow the machine.
PATIENT = McpLimits(call_timeout=60.0, tools_ttl=3600.0, list_changed_interval=3600.0)


async def test_a_deeply_nested_answer_ends_its_call_at_once_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_limits(monkeypatch, PATIENT)  # a dropped answer would wait the whole minute: timeout
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "storm", [*STORM, "--tools", "3"])
        ctx = await mcp_extension(broker, tmp_path, "storm", ["nested", "echo"])
        nested = await broker.call(ctx, "m", "nested", {"depth": 100_000})
        after = await broker.call(ctx, "m", "echo", {"text": "still here"})
    assert code(nested) == "unavailable"
    assert "cannot read" in nested["error"]["message"] and "nested too deeply" in nested["error"]["message"]
    assert after["ok"] and after["data"] == [{"type": "text", "text": "still here"}]


async def test_an_answer_that_is_not_a_tool_result_is_unavailable_and_the_session_keeps_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_limits(monkeypatch, PATIENT)
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "storm", [*STORM, "--tools", "4"])
        ctx = await mcp_extension(broker, tmp_path, "storm", ["malformed", "echo"])
        malformed = await broker.call(ctx, "m", "malformed", {})
        after = await broker.call(ctx, "m", "echo", {"text": "still here"})
    assert code(malformed) == "unavailable"
    assert malformed["error"]["message"] == "MCP server 'storm' sent an answer that is not valid MCP"
    assert after["ok"] and after["data"] == [{"type": "text", "text": "still here"}]


async def test_a_list_changed_after_every_answer_lists_the_tools_again_once_per_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_limits(monkeypatch, PATIENT)
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "storm", [*STORM, "--tools", "50", "--page", "10"])
        ctx = await mcp_extension(broker, tmp_path, "storm", ["echo", "listings"])
        for i in range(20):
            assert (await broker.call(ctx, "m", "echo", {"text": str(i)}))["ok"]
        listings = await broker.call(ctx, "m", "listings", {})
    # Five pages at the first call, five more at the first call after list_changed; then the
    # storm is ignored until the interval ends.
    assert listings["data"] == [{"type": "text", "text": "10"}]


async def test_a_server_offering_more_tools_than_helm_takes_is_too_large(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_limits(monkeypatch, PATIENT)
    async with new_broker(tmp_path / "home") as broker:
        add_stdio(broker, "storm", [*STORM, "--tools", "200000", "--page", "10000"])
        ctx = await mcp_extension(broker, tmp_path, "storm", ["echo"])
        first = await broker.call(ctx, "m", "echo", {"text": "x"})
        again = await broker.call(ctx, "m", "echo", {"text": "x"})
    assert code(first) == "too_large" and code(again) == "too_large"
    assert f"more than {MAX_TOOLS} tools" in first["error"]["message"]
