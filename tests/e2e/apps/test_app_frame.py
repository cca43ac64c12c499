"""MCP Apps in the real web view: the SDK's App class talking to Helm through the host page."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.apps.kit import Links, app_broker, app_host, in_app, open_frame
from tests.e2e.host.kit import Dialogs
from ui.qt import Qt

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


def test_a_write_waits_for_helms_dialog_confirmed_then_declined(run: Any, tmp_path: Path) -> None:
    async def scenario() -> tuple[Any, Any, Any, str]:
        dialogs = Dialogs()
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, dialogs, Links())
            try:
                view = await open_frame(host, ext_id)
                first = asyncio.ensure_future(in_app(view, "board.call('add_item', {text: 'milk'})"))
                dialog = await asyncio.wait_for(dialogs.shown.get(), 20)
                shown = dialog.request_box.toPlainText() if dialog.request_box else ""
                dialog.accept_button.click()
                confirmed = await first
                second = asyncio.ensure_future(in_app(view, "board.call('add_item', {text: 'eggs'})"))
                (await asyncio.wait_for(dialogs.shown.get(), 20)).cancel_button.click()
                declined = await second
                items = await in_app(view, "board.call('list_items').then(r => r.structuredContent.items)")
                return confirmed, declined, items, shown
            finally:
                await host.aclose()

    confirmed, declined, items, shown = run(scenario(), timeout=90)
    assert shown == 'add_item {"text":"milk"}'
    assert confirmed["value"]["structuredContent"] == {"items": ["first", "milk"]}
    assert "declined" in declined["error"]
    assert items["value"] == ["first", "milk"]


def test_in_full_screen_the_write_dialog_belongs_to_the_full_screen_window_and_stays_on_top(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, bool, bool, bool, Any]:
        dialogs = Dialogs()
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, dialogs, Links())
            try:
                view = await open_frame(host, ext_id)
                mode = await in_app(view, "board.mode('fullscreen')")
                frame = host.frames[0]
                write = asyncio.ensure_future(in_app(view, "board.call('add_item', {text: 'x'})"))
                dialog = await asyncio.wait_for(dialogs.shown.get(), 20)
                on_top = bool(dialog.windowFlags() & Qt.WindowType.WindowStaysOnTopHint)
                above_full = frame.full is not None and dialog.parentWidget() is frame.full
                full_screen = frame.full is not None and frame.full.isFullScreen()
                dialog.cancel_button.click()
                await write
                contexts = await in_app(view, "board.contexts")
                return mode, on_top, above_full, full_screen, contexts
            finally:
                await host.aclose()

    mode, on_top, above_full, full_screen, contexts = run(scenario(), timeout=90)
    assert mode["value"] == {"mode": "fullscreen"}
    assert full_screen and above_full and on_top
    assert {"displayMode": "fullscreen"} in contexts["value"]


def test_a_link_is_opened_only_after_the_user_saw_the_full_url(run: Any, tmp_path: Path) -> None:
    url = "https://example.com/path?next=%2Fsettings&x=\u202e"
    links = Links()

    async def scenario() -> tuple[Any, Any, str]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), links)
            try:
                asked = _link_dialogs(host)
                view = await open_frame(host, ext_id)
                refused = asyncio.ensure_future(in_app(view, f"board.openLink({json.dumps(url)})"))
                dialog = await asyncio.wait_for(asked.get(), 20)
                shown = dialog.link.toPlainText()
                dialog.cancel_button.click()
                opened = asyncio.ensure_future(in_app(view, "board.openLink('https://example.com/ok')"))
                (await asyncio.wait_for(asked.get(), 20)).accept_button.click()
                return await refused, await opened, shown
            finally:
                await host.aclose()

    refused, opened, shown = run(scenario(), timeout=90)
    assert "denied" in refused["error"]
    assert shown == "https://example.com/path?next=%2Fsettings&x=[U+202E]"
    assert opened == {"value": {}} and links.opened == ["https://example.com/ok"]


def _link_dialogs(host: Any) -> asyncio.Queue[Any]:
    asked: asyncio.Queue[Any] = asyncio.Queue()
    host.linkAsked.connect(asked.put_nowait)
    return asked
