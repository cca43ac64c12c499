"""MCP Apps in the real web view: the SDK's App class talking to Helm through the host page."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from broker.agents import Option, PermissionQuestion
from tests.e2e.apps.kit import Links, app_broker, app_host, in_app, open_frame
from tests.e2e.host.kit import Dialogs
from ui.apps.page import PORT_ASK
from ui.dialogs.agent_permission import PermissionDialog
from ui.qt import QLabel, Qt

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


def by_window(request_id: str, method: str, params: str) -> str:
    """A request posted to the app's real parent (a window message, not over the port), and its
    answer, which comes back as any message from Helm does: from ``window.parent``, the port."""
    return f"""new Promise((resolve) => {{
  window.addEventListener("message", (event) => {{
    if (event.source === window.parent && event.data && event.data.id === "{request_id}") resolve(event.data);
  }});
  window.top.postMessage({{ jsonrpc: "2.0", id: "{request_id}", method: "{method}", params: {params} }}, "*");
}})"""


def test_an_apps_parent_is_its_port_to_helm_and_its_real_parent_still_takes_its_messages(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> dict[str, Any]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            try:
                view = await open_frame(host, ext_id)
                is_port = "window.parent instanceof MessagePort && window.top !== window.parent"
                seen = {
                    "port": await in_app(view, is_port),
                    "sdk": await in_app(view, "board.call('list_items').then(r => r.structuredContent)"),
                    "window": await in_app(
                        view, by_window("by-window", "tools/call", "{name: 'list_items', arguments: {}}")
                    ),
                }
                # A request for a port that names another document (a stray one, or one of the
                # frame's earlier document) gets a port no document takes: the app goes on over
                # its own.
                await in_app(view, f"(window.top.postMessage({json.dumps(PORT_ASK + 'another')}, '*'), true)")
                await asyncio.sleep(0.2)
                seen["again"] = await in_app(view, "board.call('list_items').then(r => r.structuredContent)")
                seen["records"] = [(r.operation, r.outcome) for r in broker.activity.history()]
                return seen
            finally:
                await host.aclose()

    seen = run(scenario(), timeout=60)
    assert seen["port"] == {"value": True}
    assert seen["sdk"] == seen["again"] == {"value": {"items": ["first"]}}
    assert seen["window"]["value"]["result"]["structuredContent"] == {"items": ["first"]}
    assert seen["records"].count(("list_items", "ok")) == 3, seen["records"]


async def _new_document(view: Any, within: float = 30.0) -> None:
    """Until the app's frame holds a new document (one without ``window.reloaded``) with the
    test app's ``board`` in it; a look while the frame is between documents may go unanswered."""
    async with asyncio.timeout(within):
        while True:
            try:
                seen = await in_app(view, "window.reloaded === undefined && !!window.board", within=1.0)
            except TimeoutError:
                continue
            if seen == {"value": True}:
                return
            await asyncio.sleep(0.05)


def test_an_app_whose_document_reloads_goes_on_over_its_new_documents_port(run: Any, tmp_path: Path) -> None:
    async def scenario() -> tuple[Any, Any]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            try:
                view = await open_frame(host, ext_id)
                await in_app(view, "(window.reloaded = false, setTimeout(() => location.reload(), 10), true)")
                await _new_document(view)
                again = await in_app(view, "board.ready.then(() => board.call('list_items'))"
                                           ".then(r => [r.structuredContent, window.reloaded])")  # fmt: skip
                port = await in_app(view, "window.parent instanceof MessagePort")
                return again, port
            finally:
                await host.aclose()

    again, port = run(scenario(), timeout=60)
    assert again == {"value": [{"items": ["first"]}, None]}, "a new document, initialized with Helm again"
    assert port == {"value": True}


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


def test_a_write_brings_a_full_screen_app_back_inline_and_full_screen_is_refused_until_answered(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[Any, bool, bool, bool, Any, Any, Any]:
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
                inline = frame.full is None and dialog.parentWidget() is frame.window()
                toggles = await in_app(
                    view,
                    "Promise.all(Array.from({length: 50}, (_, i) =>"
                    " board.mode(i % 2 ? 'inline' : 'fullscreen').then(r => r.mode)))",
                )
                still_inline = frame.full is None
                dialog.cancel_button.click()
                await write
                after = await in_app(view, "board.mode('fullscreen')")
                contexts = await in_app(view, "board.contexts")
                return mode, on_top, inline, still_inline, toggles, after, contexts
            finally:
                await host.aclose()

    mode, on_top, inline, still_inline, toggles, after, contexts = run(scenario(), timeout=90)
    assert mode["value"] == {"mode": "fullscreen"}
    assert on_top and inline and still_inline
    assert toggles["value"] == ["inline"] * 50
    assert after["value"] == {"mode": "fullscreen"}, "once answered, the app may go full screen again"
    assert [c.get("displayMode") for c in contexts["value"] if "displayMode" in c] == [
        "fullscreen", "inline", "fullscreen"
    ]  # fmt: skip


def test_a_link_is_opened_only_after_the_user_saw_it_exactly_as_it_opens(run: Any, tmp_path: Path) -> None:
    url = "https://Example.com/path?next=%2Fsettings&q=%41"
    links = Links()

    async def scenario() -> tuple[Any, Any, str, str, bool]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), links)
            try:
                asked = _link_dialogs(host)
                view = await open_frame(host, ext_id)
                refused = asyncio.ensure_future(in_app(view, "board.openLink('https://example.com/no')"))
                (await asyncio.wait_for(asked.get(), 20)).cancel_button.click()
                opened = asyncio.ensure_future(in_app(view, f"board.openLink({json.dumps(url)})"))
                dialog = await asyncio.wait_for(asked.get(), 20)
                shown, host_line = dialog.link.toPlainText(), dialog.host.text()
                named = any(
                    f"({ext_id}) wants to open a link" in label.text()
                    for label in dialog.findChildren(QLabel)
                )
                dialog.accept_button.click()
                return await refused, await opened, shown, host_line, named
            finally:
                await host.aclose()

    refused, opened, shown, host_line, named = run(scenario(), timeout=90)
    assert named, "the dialog shows the app's id beside its name"
    assert "denied" in refused["error"]
    assert shown == "https://example.com/path?next=%2Fsettings&q=A"
    assert host_line == "example.com"
    assert opened == {"value": {}} and links.opened == [shown]


@pytest.mark.parametrize(
    "url",
    [
        pytest.param(
            "https://accounts.bank.example" + "\n" * 12 + "@evil.example/", id="newlines-then-userinfo"
        ),
        pytest.param("https://good.example\\@evil.example/", id="backslash-then-userinfo"),
        pytest.param("https://accounts.bank.example@evil.example/", id="userinfo"),
        pytest.param("https://example.com/x?\u202e", id="bidi-control"),
        pytest.param("https://example.com/a b", id="space"),
    ],
)
def test_a_link_that_could_read_as_another_is_refused_without_a_question(
    run: Any, tmp_path: Path, url: str
) -> None:
    links = Links()

    async def scenario() -> tuple[Any, int]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), links)
            try:
                asked = _link_dialogs(host)
                view = await open_frame(host, ext_id)
                return await in_app(view, f"board.openLink({json.dumps(url)})"), asked.qsize()
            finally:
                await host.aclose()

    answer, asked = run(scenario(), timeout=90)
    assert "Invalid URL" in answer["error"]
    assert asked == 0 and links.opened == []


def test_one_link_question_at_a_time_and_every_request_counts_against_the_rate_limit(
    run: Any, tmp_path: Path
) -> None:
    async def scenario() -> tuple[list[Any], int, Any]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            try:
                asked = _link_dialogs(host)
                view = await open_frame(host, ext_id)
                first = asyncio.ensure_future(in_app(view, "board.openLink('https://example.com/1')"))
                dialog = await asyncio.wait_for(asked.get(), 20)
                more = await in_app(
                    view,
                    "Promise.all(Array.from({length: 300}, (_, i) =>"
                    " board.openLink('https://example.com/' + i).then(() => 'opened', e => e.message)))",
                )
                dialogs = asked.qsize() + 1
                dialog.cancel_button.click()
                await first
                return more["value"], dialogs, await in_app(view, "board.call('list_items')")
            finally:
                await host.aclose()

    more, dialogs, call = run(scenario(), timeout=90)
    assert dialogs == 1
    # 60 a minute: the opening call of show_board, the first link, then 58 more before the limit.
    assert set(more[:58]) == {"refused: the app is already asking to open a link; one at a time"}
    assert set(more[58:]) == {"rate_limited: rate limit of 60 calls per minute reached"}
    assert "rate_limited" in call["error"], "the refused requests spent the app's calls"


def _link_dialogs(host: Any) -> asyncio.Queue[Any]:
    asked: asyncio.Queue[Any] = asyncio.Queue()
    host.linkAsked.connect(asked.put_nowait)
    return asked


def test_a_message_too_large_is_refused_before_it_reaches_helm_and_the_app_is_answered(
    run: Any, tmp_path: Path
) -> None:
    seen: list[int] = []

    async def scenario() -> tuple[Any, Any, Any, int, list[tuple[str, str]]]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            host.services = dataclasses.replace(
                host.services, observe=lambda _way, text: seen.append(len(text))
            )
            try:
                view = await open_frame(host, ext_id)
                big = await in_app(view, "board.rawCall('list_items', {pad: 'x'.repeat(5 * 1024 * 1024)})")
                await in_app(view, "window.parent.postMessage({jsonrpc: '2.0', method: 'ping',"
                                   " params: {pad: 'y'.repeat(5 * 1024 * 1024)}}, '*')")  # fmt: skip
                big_ping = by_window("big", "ping", "{pad: 'z'.repeat(5 * 1024 * 1024)}")
                by_window_big = await in_app(view, big_ping)  # to the real parent, not over the port
                after = await in_app(view, "board.rawCall('list_items')")
                records = [(r.operation, r.outcome) for r in broker.activity.history()]
                return big, by_window_big, after, view.session.refused, records
            finally:
                await host.aclose()

    big, by_window_big, after, refused, records = run(scenario(), timeout=90)
    assert big["value"]["error"]["message"].startswith("too_large: Helm refused the message")
    assert by_window_big["value"]["error"]["message"].startswith("too_large: Helm refused the message")
    assert refused == 3
    assert ("tools/call", "too_large") in records and ("ping", "too_large") in records
    assert max(seen) < 4 * 1024 * 1024, "no large message crossed into Helm"
    assert after["value"]["result"]["structuredContent"] == {"items": ["first"]}


def test_any_confirmation_brings_a_full_screen_app_back_inline_an_agents_permission_too(
    run: Any, tmp_path: Path
) -> None:
    question = PermissionQuestion(
        "d1",
        "claude",
        "ws",
        "Run make",
        "execute",
        options=(Option("allow", "Allow", "allow_once"),),
        content="make",
        diff="",
    )

    async def scenario() -> tuple[bool, bool, bool, Any]:
        async with app_broker(tmp_path) as (broker, ext_id):
            host = app_host(broker, Dialogs(), Links())
            try:
                view = await open_frame(host, ext_id)
                await in_app(view, "board.mode('fullscreen')")
                frame = host.frames[0]
                was_full = frame.full is not None
                dialog = PermissionDialog(question, guard_ms=0)
                dialog.show()
                inline = frame.full is None
                on_top = bool(dialog.windowFlags() & Qt.WindowType.WindowStaysOnTopHint)
                refused = await in_app(view, "board.mode('fullscreen')")
                dialog.reject()
                dialog.deleteLater()
                return was_full, inline, on_top, refused
            finally:
                await host.aclose()

    was_full, inline, on_top, refused = run(scenario(), timeout=90)
    assert was_full and inline and on_top
    assert refused["value"] == {"mode": "inline"}
