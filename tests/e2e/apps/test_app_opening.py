"""The tool that opens an app, in the real web view: its settings first when one is required,
then its input and result in the app (the SDK's ``ontoolinput`` / ``ontoolresult``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.apps.kit import Links, app_broker, app_host, in_app
from tests.e2e.host.kit import Dialogs
from ui.aio import emitted

pytestmark = pytest.mark.usefixtures("mcp_app_server")


def test_an_app_whose_tool_needs_a_setting_asks_for_it_instead_of_opening_blank(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[str, bool, dict[str, Any]]:
        async with app_broker(tmp_path, "--needs-title") as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            try:
                frame = host.frame("ws", ext_id, "i1")
                needed = emitted(frame.settingsNeeded, 30)
                await asyncio.wait_for(frame.opening, 30)
                await needed
                form = broker.manifest("ws", ext_id).settings_form
                return frame.notice.text(), frame.view is None, dict(form)
            finally:
                await host.aclose()

    notice, no_view, form = run(scenario(), timeout=90)
    assert form == {"title": {"type": "string", "maxLength": 4096, "description": "The board's title",
                              "required": True}}  # fmt: skip
    assert notice == "Board needs its settings first: title. Fill them in, then Apply."
    assert no_view, "no blank app"


def test_the_app_is_told_the_opening_tools_input_and_result_again_on_refresh(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> Any:
        async with app_broker(tmp_path, "--needs-title") as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            try:
                frame = host.frame("ws", ext_id, "i1", None, {"title": "Groceries"})
                launched = emitted(frame.launched, 30)
                frame.resize(640, 480)
                frame.show()
                await asyncio.wait_for(frame.opening, 30)
                assert frame.view is not None, frame.notice.text()
                await launched
                again = emitted(frame.launched, 30)
                frame.refresh_button.click()
                await again
                async with asyncio.timeout(20):
                    while len((opened := await in_app(frame.view, "board.opened"))["value"]) < 4:
                        await asyncio.sleep(0.1)
                return opened["value"]
            finally:
                await host.aclose()

    opened = run(scenario(), timeout=90)
    told = [{"input": {"title": "Groceries"}}, {"result": {"items": ["first"], "title": "Groceries"}}]
    assert opened == told * 2
