"""MCP Apps in the real web view: the SDK's App class talking to Helm through the host page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.apps.kit import Links, app_broker, app_host, in_app, open_frame
from tests.e2e.host.kit import Dialogs

pytestmark = pytest.mark.usefixtures("mcp_app_server")


def test_the_sdk_app_initializes_with_helm_and_calls_a_read_tool(run: Any, tmp_path: Path) -> None:
    async def scenario() -> tuple[Any, Any]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            try:
                view = await open_frame(host, ext_id)
                context = await in_app(view, "board.host")
                items = await in_app(view, "board.call('list_items').then(r => r.structuredContent)")
                return context, items
            finally:
                await host.aclose()

    context, items = run(scenario(), timeout=60)
    assert context["value"]["platform"] == "desktop"
    assert items == {"value": {"items": ["first"]}}
